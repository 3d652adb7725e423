package export

import (
	"context"
	"path"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/race"
)

func gatekeeperFiles(t *testing.T) (Files, []evaluator.Rule) {
	t.Helper()
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Gatekeeper(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var admission []evaluator.Rule
	for _, r := range ev.Rules() {
		if r.Admission {
			admission = append(admission, r)
		}
	}
	if len(admission) < 4 {
		t.Fatalf("too few admission rules: %v", admission)
	}
	return f, admission
}

// object is what the tests read of a generated object.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		EnforcementAction        string `json:"enforcementAction"`
		ScopedEnforcementActions []struct {
			Action            string `json:"action"`
			EnforcementPoints []struct {
				Name string `json:"name"`
			} `json:"enforcementPoints"`
		} `json:"scopedEnforcementActions"`
		Match struct {
			Kinds []struct {
				APIGroups []string `json:"apiGroups"`
				Kinds     []string `json:"kinds"`
			} `json:"kinds"`
		} `json:"match"`
		Parameters struct {
			Rules     []string `json:"rules"`
			SkipRules []string `json:"skipRules"`
		} `json:"parameters"`
	} `json:"spec"`
}

// listed reads the objects a kustomization in files lists.
func listed(t *testing.T, files Files, kustomization string) []object {
	t.Helper()
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(files[kustomization], &k); err != nil {
		t.Fatalf("%s: %v", kustomization, err)
	}
	var out []object
	for _, r := range k.Resources {
		p := path.Join(path.Dir(kustomization), r)
		if _, ok := files[p]; !ok {
			t.Errorf("%s lists %s, which is not generated", kustomization, r)
			continue
		}
		out = append(out, read(t, files, p))
	}
	return out
}

func read(t *testing.T, files Files, p string) object {
	t.Helper()
	var o object
	if err := yaml.Unmarshal(files[p], &o); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return o
}

// constraints are the generated constraints: the one, and the pair's.
func constraints(t *testing.T, files Files) map[string]object {
	t.Helper()
	out := map[string]object{ConstraintFile: read(t, files, ConstraintFile)}
	for _, p := range []string{PairDir + "deny.yaml", PairDir + "warn.yaml"} {
		out[p] = read(t, files, p)
	}
	return out
}

// Step 1 holds what Gatekeeper needs before any constraint can exist (the
// SyncSet and the one template), step 2 a constraint of its kind: the one
// constraint, or the pair's kustomization, which lists its two constraints
// and nothing else. The bundle holds one template, whatever the number of
// rules.
func TestGatekeeperInstallsInTwoSteps(t *testing.T) {
	race.Sequential(t)
	files, _ := gatekeeperFiles(t)
	var first []string
	for _, o := range listed(t, files, "kustomization.yaml") {
		first = append(first, o.Kind+"/"+o.Metadata.Name)
	}
	slices.Sort(first)
	if want := []string{"ConstraintTemplate/" + TemplateName, "SyncSet/flipflop"}; !slices.Equal(first, want) {
		t.Errorf("step 1 holds %v, want %v", first, want)
	}
	templates := 0
	for _, p := range files.Paths() {
		if strings.Contains(string(files[p]), "kind: ConstraintTemplate\n") {
			templates++
		}
	}
	if templates != 1 {
		t.Errorf("%d files hold a ConstraintTemplate, want 1", templates)
	}
	if c := read(t, files, ConstraintFile); c.Kind != Kind {
		t.Errorf("%s is a %q, want %s", ConstraintFile, c.Kind, Kind)
	}
	var pair []string
	for _, o := range listed(t, files, PairDir+"kustomization.yaml") {
		if o.Kind != Kind {
			t.Errorf("the pair holds a %s", o.Kind)
		}
		pair = append(pair, o.Metadata.Name)
	}
	if !slices.Equal(pair, []string{"flipflop-deny", "flipflop-warn"}) {
		t.Errorf("the pair's kustomization lists %v", pair)
	}
}

// Every constraint is scoped: its action applies at the webhook and in
// gator, never in Gatekeeper's audit (quadratic in the estate: the
// scheduled check audits), and the file says why.
func TestConstraintsAreEnforcedAtAdmissionOnly(t *testing.T) {
	race.Sequential(t)
	files, _ := gatekeeperFiles(t)
	for p, c := range constraints(t, files) {
		if c.Spec.EnforcementAction != "scoped" || len(c.Spec.ScopedEnforcementActions) != 1 {
			t.Errorf("%s: enforcementAction %q with %d scoped actions, want scoped with one", p, c.Spec.EnforcementAction, len(c.Spec.ScopedEnforcementActions))
			continue
		}
		var points []string
		for _, ep := range c.Spec.ScopedEnforcementActions[0].EnforcementPoints {
			points = append(points, ep.Name)
		}
		slices.Sort(points)
		if want := []string{GatorPoint, WebhookPoint}; !slices.Equal(points, want) {
			t.Errorf("%s: enforcement points %v, want %v", p, points, want)
		}
		if !strings.Contains(string(files[p]), "quadratic") {
			t.Errorf("%s: no comment says why audit is off", p)
		}
	}
	if a := read(t, files, ConstraintFile).Spec.ScopedEnforcementActions; len(a) != 1 || a[0].Action != "warn" {
		t.Errorf("%s: want warn, got %+v", ConstraintFile, a)
	}
}

// The pair splits the rules: the deny constraint reports the rules it lists,
// the warn one every other (skipRules the same list), so every rule is
// reported once; the one constraint reports every rule.
func TestDenyAndWarnPairSplitsTheRules(t *testing.T) {
	race.Sequential(t)
	files, rules := gatekeeperFiles(t)
	cs := constraints(t, files)
	if p := cs[ConstraintFile].Spec.Parameters; len(p.Rules)+len(p.SkipRules) != 0 {
		t.Errorf("%s selects %+v, want every rule", ConstraintFile, p)
	}
	deny, warn := cs[PairDir+"deny.yaml"], cs[PairDir+"warn.yaml"]
	if a := deny.Spec.ScopedEnforcementActions; len(a) != 1 || a[0].Action != "deny" {
		t.Errorf("deny.yaml: %+v", a)
	}
	if a := warn.Spec.ScopedEnforcementActions; len(a) != 1 || a[0].Action != "warn" {
		t.Errorf("warn.yaml: %+v", a)
	}
	if len(deny.Spec.Parameters.Rules) == 0 || !slices.Equal(deny.Spec.Parameters.Rules, warn.Spec.Parameters.SkipRules) || len(warn.Spec.Parameters.Rules) != 0 {
		t.Errorf("deny reports %v, warn skips %v (and lists %v)", deny.Spec.Parameters.Rules, warn.Spec.Parameters.SkipRules, warn.Spec.Parameters.Rules)
	}
	for _, id := range deny.Spec.Parameters.Rules {
		if !slices.ContainsFunc(rules, func(r evaluator.Rule) bool { return r.ID == id }) {
			t.Errorf("deny lists %s, no admission rule", id)
		}
	}
}

// Constraints review PromotionTasks and ClusterPromotionTasks too: a task edit
// can make the Stages that use it contradict each other.
func TestConstraintsMatchTasks(t *testing.T) {
	race.Sequential(t)
	files, _ := gatekeeperFiles(t)
	for p, c := range constraints(t, files) {
		var matched []string
		for _, k := range c.Spec.Match.Kinds {
			for _, g := range k.APIGroups {
				for _, kind := range k.Kinds {
					matched = append(matched, g+"/"+kind)
				}
			}
		}
		for _, want := range []string{"kargo.akuity.io/Stage", "kargo.akuity.io/PromotionTask", "kargo.akuity.io/ClusterPromotionTask", "argoproj.io/Application", "argoproj.io/ApplicationSet"} {
			if !slices.Contains(matched, want) {
				t.Errorf("%s: constraint does not match %s (matches %v)", p, want, matched)
			}
		}
	}
}

// The template offers exactly the admission rules in its rules and skipRules
// parameters (Gatekeeper validates a constraint's parameters against the
// schema), and the settings the adapter reads.
func TestTemplateSchemaListsEveryAdmissionRule(t *testing.T) {
	race.Sequential(t)
	files, rules := gatekeeperFiles(t)
	type list struct {
		Type  string `json:"type"`
		Items struct {
			Enum []string `json:"enum"`
		} `json:"items"`
	}
	var tmpl struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			CRD struct {
				Spec struct {
					Names struct {
						Kind string `json:"kind"`
					} `json:"names"`
					Validation struct {
						Schema struct {
							Properties map[string]any `json:"properties"`
						} `json:"openAPIV3Schema"`
					} `json:"validation"`
				} `json:"spec"`
			} `json:"crd"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(files["template.yaml"], &tmpl); err != nil {
		t.Fatal(err)
	}
	if tmpl.Metadata.Name != TemplateName || tmpl.Spec.CRD.Spec.Names.Kind != Kind {
		t.Errorf("template %s of kind %s", tmpl.Metadata.Name, tmpl.Spec.CRD.Spec.Names.Kind)
	}
	var ids []string
	for _, r := range rules {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	props := tmpl.Spec.CRD.Spec.Validation.Schema.Properties
	for _, name := range []string{"rules", "skipRules"} {
		b, _ := yaml.Marshal(props[name])
		var l list
		if err := yaml.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(l.Items.Enum))
		if l.Type != "array" || !slices.Equal(got, ids) {
			t.Errorf("%s: %s of %v, want an array of the admission rules %v", name, l.Type, got, ids)
		}
	}
	for _, name := range []string{"defaultBranch", "argocdNamespace", "kargoVersion", "annotationWaivers"} {
		if _, ok := props[name]; !ok {
			t.Errorf("the schema lacks the %s parameter", name)
		}
	}
}
