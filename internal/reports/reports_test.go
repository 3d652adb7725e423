package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

var now = time.Unix(1798761600, 0)

func stage(ns, name string) evaluator.Resource {
	return evaluator.Resource{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: ns, Name: name, File: "cluster:prod"}
}

func app(ns, name string) evaluator.Resource {
	return evaluator.Resource{APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Namespace: ns, Name: name, File: "gitops/apps.yaml", Line: 7}
}

var rules = []evaluator.Rule{
	{ID: "shared-branch-contradiction", Title: "Several Stages pin one floating pointer", Severity: "error", Admission: true},
	{ID: "shared-write-branch", Title: "Several Stages push to one branch", Severity: "warning"},
	{ID: "shared-application", Title: "Several Stages pin one Application", Severity: "error", Admission: true},
	{ID: "unknown-promotion-task", Title: "A Stage runs a PromotionTask that is not among the inputs", Severity: "warning"},
}

// sample has a finding across two namespaces, one in one namespace, a
// waived one, one naming a cluster-scoped object, one naming an object
// without a namespace, an info finding, and an input error.
func sample() *evaluator.Report {
	return &evaluator.Report{
		Findings: []evaluator.Finding{
			{Rule: "shared-branch-contradiction", Severity: "error", Title: "Several Stages pin one floating pointer",
				Message:     "Stages acme/dev, acme/qa pin\nApplications argocd/dev, argocd/qa.",
				Remediation: "Give each Stage a pointer only it moves:\n1. a branch per Stage.\n",
				Resources:   []evaluator.Resource{stage("acme", "dev"), stage("acme", "qa"), app("argocd", "dev"), app("argocd", "qa")},
				Key:         "github.com/acme/deploy@main", PointerText: "github.com/acme/deploy @ main"},
			{Rule: "shared-write-branch", Severity: "warning", Title: "Several Stages push to one branch",
				Message: "Stages web/a, web/b push to main.", Resources: []evaluator.Resource{stage("web", "a"), stage("web", "b")}},
			{Rule: "shared-write-branch", Severity: "warning", Title: "Several Stages push to one branch",
				Message: "Stages web/c, web/d push to release.", Resources: []evaluator.Resource{stage("web", "c"), stage("web", "d")},
				Waived: &evaluator.Waived{Reason: "hotfixes", By: "waiver 1 (shared-write-branch)", Expires: "2031-01-31"}},
			{Rule: "unknown-promotion-task", Severity: "warning", Title: "A Stage runs a PromotionTask that is not among the inputs",
				Message: "Stage web/e runs ClusterPromotionTask deploy.",
				Resources: []evaluator.Resource{stage("web", "e"),
					{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "ClusterPromotionTask", Name: "deploy"}}},
			{Rule: "legacy", Severity: "info", Title: "Legacy", Message: "A file without a namespace.",
				Resources: []evaluator.Resource{{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Name: "x", File: "a.yaml", Line: 1}}},
		},
		Errors: []evaluator.LoadError{{Path: "cluster:prod: stages.kargo.akuity.io in all namespaces", Message: "forbidden (403)"}},
	}
}

func find(t *testing.T, rs []Report, ns string) Report {
	t.Helper()
	for _, r := range rs {
		if r.Namespace == ns && r.Name == Name {
			return r
		}
	}
	t.Fatalf("no report in namespace %q", ns)
	return Report{}
}

func policies(r Report) []string {
	var out []string
	for _, x := range r.Results {
		out = append(out, x.Policy+"="+x.Result)
	}
	return out
}

func TestBuildPlacement(t *testing.T) {
	rs := Build(sample(), Options{Rules: rules, Now: now})
	var where []string
	for _, r := range rs {
		where = append(where, r.Namespace+"/"+r.Name)
	}
	if want := []string{"/flipflop", "acme/flipflop", "argocd/flipflop", "web/flipflop"}; !slices.Equal(where, want) {
		t.Fatalf("reports %q, want %q", where, want)
	}
	cluster := find(t, rs, "")
	if got, want := policies(cluster), []string{"unknown-promotion-task=warn", "legacy=warn", "input-error=error", "shared-application=pass"}; !slices.Equal(got, want) {
		t.Errorf("cluster report: %q, want %q", got, want)
	}
	if got, want := cluster.Summary, (PolicyReportSummary{Pass: 1, Warn: 2, Error: 1}); got != want {
		t.Errorf("cluster summary %+v, want %+v", got, want)
	}
	acme, argocd := find(t, rs, "acme"), find(t, rs, "argocd")
	if got := policies(acme); !slices.Equal(got, []string{"shared-branch-contradiction=fail"}) {
		t.Errorf("acme: %q", got)
	}
	if got := policies(argocd); !slices.Equal(got, []string{"shared-branch-contradiction=fail"}) {
		t.Errorf("argocd: %q", got)
	}
	// Each copy lists every object, its own namespace's first.
	names := func(r PolicyReportResult) []string {
		var out []string
		for _, o := range r.Resources {
			out = append(out, o.Namespace+"/"+o.Name)
		}
		return out
	}
	if got := names(acme.Results[0]); !slices.Equal(got, []string{"acme/dev", "acme/qa", "argocd/dev", "argocd/qa"}) {
		t.Errorf("acme's resources %q", got)
	}
	if got := names(argocd.Results[0]); !slices.Equal(got, []string{"argocd/dev", "argocd/qa", "acme/dev", "acme/qa"}) {
		t.Errorf("argocd's resources %q", got)
	}
	web := find(t, rs, "web")
	if got, want := policies(web), []string{"shared-write-branch=warn", "shared-write-branch=skip", "unknown-promotion-task=warn"}; !slices.Equal(got, want) {
		t.Errorf("web: %q, want %q", got, want)
	}
	if got, want := web.Summary, (PolicyReportSummary{Warn: 2, Skip: 1}); got != want {
		t.Errorf("web summary %+v, want %+v", got, want)
	}

	r := acme.Results[0]
	if r.Source != "flipflop" || r.Rule != "shared-branch-contradiction" || r.Severity != "high" || !r.Scored ||
		r.Category != CategoryContradiction || r.Timestamp.Seconds != now.Unix() {
		t.Errorf("result %+v", r)
	}
	if r.Message != "Stages acme/dev, acme/qa pin Applications argocd/dev, argocd/qa." {
		t.Errorf("message %q", r.Message)
	}
	wantProps := map[string]string{
		"title": "Several Stages pin one floating pointer", "key": "github.com/acme/deploy@main",
		"pointer": "github.com/acme/deploy @ main", "remediation": "Give each Stage a pointer only it moves: 1. a branch per Stage.",
		"locations": "cluster:prod, gitops/apps.yaml:7",
		"doc":       "https://github.com/flipflop-dev/flipflop/blob/main/docs/rules/shared-branch-contradiction.md",
	}
	if !reflect.DeepEqual(r.Properties, wantProps) {
		t.Errorf("properties %v, want %v", r.Properties, wantProps)
	}
	skip := web.Results[1]
	if skip.Properties["waiver"] != "hotfixes" || skip.Properties["waivedBy"] != "waiver 1 (shared-write-branch)" || skip.Scored || skip.Severity != "medium" {
		t.Errorf("waived result %+v", skip)
	}
	if e := cluster.Results[2]; e.Message != "cluster:prod: stages.kargo.akuity.io in all namespaces: forbidden (403)" || e.Category != CategoryInput || e.Severity != "" {
		t.Errorf("error result %+v", e)
	}
	if p := cluster.Results[3]; p.Severity != "high" || !p.Scored || p.Message != "no finding: Several Stages pin one Application" {
		t.Errorf("pass result %+v", p)
	}
	if info := cluster.Results[1]; info.Severity != "info" || info.Result != "warn" || info.Scored {
		t.Errorf("info result %+v", info)
	}
}

// A report with nothing in it is still a cluster-scoped report: the run
// happened.
func TestBuildEmpty(t *testing.T) {
	rs := Build(&evaluator.Report{}, Options{Now: now})
	if len(rs) != 1 || rs[0].Namespace != "" || rs[0].Name != Name || len(rs[0].Results) != 0 {
		t.Fatalf("%+v", rs)
	}
}

func TestSeverityAndOutcome(t *testing.T) {
	for _, c := range []struct {
		severity string
		waived   bool
		sev, res string
	}{
		{"error", false, "high", "fail"},
		{"warning", false, "medium", "warn"},
		{"info", false, "info", "warn"},
		{"error", true, "high", "skip"},
	} {
		f := evaluator.Finding{Severity: c.severity}
		if c.waived {
			f.Waived = &evaluator.Waived{}
		}
		if got := Severity(c.severity); got != c.sev {
			t.Errorf("Severity(%s) = %s, want %s", c.severity, got, c.sev)
		}
		if got := Outcome(&f); got != c.res {
			t.Errorf("Outcome(%s, waived %v) = %s, want %s", c.severity, c.waived, got, c.res)
		}
	}
}

// Results that do not fit one object go to more, named flipflop-2, ...; each
// summary counts its own; and a finding naming more objects than a result
// lists says how many were left out.
func TestBuildBounds(t *testing.T) {
	rep := &evaluator.Report{}
	for i := range 50 {
		rep.Findings = append(rep.Findings, evaluator.Finding{Rule: "shared-write-branch", Severity: "warning",
			Message: strings.Repeat("m", 300), Resources: []evaluator.Resource{stage("big", fmt.Sprintf("s%02d", i))}})
	}
	var many []evaluator.Resource
	for i := range MaxResources + 7 {
		many = append(many, stage("other", fmt.Sprintf("s%03d", i)))
	}
	many = append(many, app("argocd", "last"))
	rep.Findings = append(rep.Findings, evaluator.Finding{Rule: "shared-application", Severity: "error",
		Message: strings.Repeat("é", 5000), Resources: many})

	rs := Build(rep, Options{Now: now, MaxBytes: 4096})
	total := 0
	var names []string
	for _, r := range rs {
		if r.Namespace != "big" {
			continue
		}
		names = append(names, r.Name)
		b, _ := json.Marshal(r.Results)
		if len(b) > 4096 {
			t.Errorf("%s holds %d bytes of results", r.Name, len(b))
		}
		if r.Summary.Warn != len(r.Results) {
			t.Errorf("%s: summary %+v for %d results", r.Name, r.Summary, len(r.Results))
		}
		total += len(r.Results)
	}
	if total != 50 || len(names) < 2 || names[0] != "flipflop" || names[1] != "flipflop-2" {
		t.Errorf("%d results in %q", total, names)
	}
	argocd := find(t, rs, "argocd").Results[0]
	if len(argocd.Resources) != MaxResources || argocd.Properties["resourcesLeftOut"] != "8" {
		t.Errorf("%d resources, left out %q", len(argocd.Resources), argocd.Properties["resourcesLeftOut"])
	}
	if argocd.Resources[0].Name != "last" {
		t.Errorf("the report's own namespace's object is not first: %v", argocd.Resources[0])
	}
	if n := len([]rune(argocd.Message)); n != maxMessage+1 || !strings.HasSuffix(argocd.Message, "…") {
		t.Errorf("message of %d characters", n)
	}
}

func TestUIDs(t *testing.T) {
	obj, err := evaluator.NewObject("cluster:prod", 0, map[string]any{
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": map[string]any{"namespace": "acme", "name": "dev", "uid": "0b6e-uid"}})
	if err != nil {
		t.Fatal(err)
	}
	noUID, _ := evaluator.NewObject("a.yaml", 1, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}})
	odd := evaluator.Object{Value: ast.String("not an object")}
	uids := UIDs([]evaluator.Object{obj, noUID, odd})
	if len(uids) != 1 || uids[RefOf("kargo.akuity.io/v1alpha1", "Stage", "acme", "dev")] != "0b6e-uid" {
		t.Fatalf("%v", uids)
	}
	rs := Build(sample(), Options{Now: now, UIDs: uids})
	got := find(t, rs, "acme").Results[0].Resources
	if got[0].UID != "0b6e-uid" || got[1].UID != "" {
		t.Errorf("uids %q %q", got[0].UID, got[1].UID)
	}
}

// crdSchema compiles the openAPIV3Schema of a released report CRD (internal/upstream) into a JSON
// schema that, like the API server's strict field validation, also refuses
// fields the CRD does not declare.
func crdSchema(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	pr, err := upstream.PolicyReportCRDs()
	if err != nil {
		t.Fatal(err)
	}
	or, err := upstream.OpenReportsCRDs()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(append(pr, or...), func(p string) bool { return filepath.Base(p) == file })
	if i < 0 {
		t.Fatalf("no released CRD %s", file)
	}
	b, err := os.ReadFile(append(pr, or...)[i])
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%s: %d versions", file, len(crd.Spec.Versions))
	}
	s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	strict(s)
	js, _ := json.Marshal(s)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(file+".json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(file + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// strict adds additionalProperties: false to every object schema that lists
// its properties (metadata, which lists none, stays open).
func strict(s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		if _, has := s["additionalProperties"]; !has {
			s["additionalProperties"] = false
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				strict(m)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if m, ok := s[k].(map[string]any); ok {
			strict(m)
		}
	}
}

func validate(t *testing.T, sch *jsonschema.Schema, obj any) error {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// Every object both APIs build validates against the CRD it is written to
// (Kyverno v1.19.0's wgpolicyk8s.io CRDs, reports-api v0.2.1's openreports.io
// ones, as their releases ship them), and the check catches what the CRD
// refuses.
func TestSchema(t *testing.T) {
	rep := sample()
	rep.Findings = append(rep.Findings, evaluator.Finding{Rule: "x\x1b[31m", Severity: "error", Message: "\u202e",
		Resources: []evaluator.Resource{{Kind: "\n", Namespace: "a b", Name: strings.Repeat("n", 400)}}})
	rs := Build(rep, Options{Rules: rules, Now: now})
	for _, api := range APIs() {
		prefix := api.Group + "_"
		ns, cl := crdSchema(t, prefix+api.Resource+".yaml"), crdSchema(t, prefix+api.ClusterResource+".yaml")
		for _, r := range rs {
			sch := ns
			if r.Namespace == "" {
				sch = cl
			}
			obj := api.Object(r)
			if err := validate(t, sch, obj); err != nil {
				t.Errorf("%s %s/%s: %v", api.Format, r.Namespace, r.Name, err)
			}
			u, err := api.Unstructured(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, u.Object); err != nil {
				t.Errorf("%s %s/%s (unstructured): %v", api.Format, r.Namespace, r.Name, err)
			}
			// What the CRD refuses: a result outside its enum, an
			// undeclared field.
			bad := u.DeepCopy()
			results := bad.Object["results"].([]any)
			if len(results) > 0 {
				results[0].(map[string]any)["result"] = "failed"
				if validate(t, sch, bad.Object) == nil {
					t.Errorf("%s: a result outside the enum validates", api.Format)
				}
			}
			bad = u.DeepCopy()
			bad.Object["findings"] = []any{}
			if validate(t, sch, bad.Object) == nil {
				t.Errorf("%s: an undeclared field validates", api.Format)
			}
		}
	}
}

// The YAML stream decodes back into the objects, in order, kinds and
// apiVersions as each API names them.
func TestWriteYAML(t *testing.T) {
	rs := Build(sample(), Options{Rules: rules, Now: now})
	for _, api := range APIs() {
		var b bytes.Buffer
		if err := api.WriteYAML(&b, rs); err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(b.String(), "---\n")[1:]
		if len(docs) != len(rs) {
			t.Fatalf("%s: %d documents for %d reports", api.Format, len(docs), len(rs))
		}
		for i, d := range docs {
			var got map[string]any
			if err := yaml.Unmarshal([]byte(d), &got); err != nil {
				t.Fatal(err)
			}
			u, _ := api.Unstructured(rs[i])
			want, _ := json.Marshal(u.Object)
			have, _ := json.Marshal(got)
			if !bytes.Equal(want, have) {
				t.Errorf("%s document %d:\n%s\nwant\n%s", api.Format, i, have, want)
			}
			kind := api.Kind
			if rs[i].Namespace == "" {
				kind = api.ClusterKind
			}
			if got["kind"] != kind || got["apiVersion"] != api.Group+"/"+api.Version {
				t.Errorf("%s document %d: %v %v", api.Format, i, got["apiVersion"], got["kind"])
			}
		}
	}
	if rs[0].Results[0].Timestamp.Seconds != now.Unix() {
		t.Error("timestamp")
	}
}
