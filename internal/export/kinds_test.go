package export

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// policyQuery is query over the embedded policies, as rego options.
func policyQuery(t *testing.T, query string) []func(*rego.Rego) {
	t.Helper()
	mods, err := evaluator.Modules()
	if err != nil {
		t.Fatal(err)
	}
	opts := []func(*rego.Rego){rego.Query(query)}
	for _, m := range mods {
		opts = append(opts, rego.ParsedModule(m))
	}
	return opts
}

// regoValue evaluates query over the embedded policies.
func regoValue(t *testing.T, query string) any {
	t.Helper()
	rs, err := rego.New(policyQuery(t, query)...).Eval(context.Background())
	if err != nil || len(rs) == 0 {
		t.Fatalf("%s: %v %v", query, rs, err)
	}
	return rs[0].Expressions[0].Value
}

// The kinds the model reads are written in several places: the model's
// read_kinds, the Gatekeeper adapter's inventory paths, the Gatekeeper sync
// list, and the cluster reader's resources. They must agree.
func TestReadKindsAgree(t *testing.T) {
	race.Sequential(t)
	var model []string
	for kind, prefix := range regoValue(t, "data.lib.flipflop.objects.read_kinds").(map[string]any) {
		model = append(model, strings.TrimSuffix(prefix.(string), "/")+" "+kind)
	}
	slices.Sort(model)

	var synced []string
	for _, k := range syncKinds {
		synced = append(synced, k.Group+" "+k.Kind)
	}
	slices.Sort(synced)
	if !slices.Equal(model, synced) {
		t.Errorf("Gatekeeper sync list %v, model reads %v", synced, model)
	}

	var adapter []string
	for _, q := range []string{"data.lib.flipflop.gatekeeper.namespaced", "data.lib.flipflop.gatekeeper.cluster_scoped"} {
		for _, p := range regoValue(t, q).([]any) {
			pair := p.([]any)
			group, _, _ := strings.Cut(pair[0].(string), "/")
			adapter = append(adapter, group+" "+pair[1].(string))
		}
	}
	slices.Sort(adapter)
	if !slices.Equal(model, adapter) {
		t.Errorf("Gatekeeper adapter reads %v, model reads %v", adapter, model)
	}

	var live []string
	for _, r := range cluster.Resources {
		live = append(live, r.Group+" "+r.Kind)
	}
	for _, k := range model {
		if !slices.Contains(live, k) {
			t.Errorf("the model reads %s, which --cluster does not read (%v)", k, live)
		}
	}
}
