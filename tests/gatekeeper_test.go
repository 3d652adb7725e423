package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The Gatekeeper folder (bundles/gatekeeper): its one template, the one
// constraint, and the deny and warn pair.
const (
	gkDir        = "../bundles/gatekeeper"
	gkTemplate   = gkDir + "/template.yaml"
	gkConstraint = gkDir + "/constraint.yaml"
	gkPairDeny   = gkDir + "/deny-and-warn/deny.yaml"
	gkPairWarn   = gkDir + "/deny-and-warn/warn.yaml"
)

// gator verify passes for the generated suite (allowed and disallowed cases
// of every admission rule, with the reviewed object in the inventory too,
// each rule's violations counted by the rule id leading its message), on the
// shipped constraint as it is (scoped: gator is one of its enforcement
// points), on every gator of the matrix: the template compiles on the
// oldest and the newest Gatekeeper.
func TestCompatGatorVerify(t *testing.T) {
	t.Parallel()
	suite, err := os.ReadFile(gkDir + "/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := strings.Count(string(suite), "\n    name: ")
	if cases < 4*4 {
		t.Fatalf("want cases for each admission rule, found %d", cases)
	}
	for _, g := range hostsOf(t, "gator") {
		t.Run(g.String(), func(t *testing.T) {
			out, stderr, code := runCmd(t, gkDir, g.Path, "verify", "-v", "./...")
			if code != 0 {
				t.Fatalf("gator verify failed (exit %d):\n%s\n%s", code, out, stderr)
			}
			if n := strings.Count(out, "--- PASS") - 1; n != cases { // and the test's own PASS
				t.Errorf("%d passing cases, want %d:\n%s", n, cases, out)
			}
		})
	}
}

// selecting writes the shipped constraint into dir as constraint.yaml,
// reporting the rules given alone, with the parameters given beside.
func selecting(t *testing.T, dir string, params map[string]any, rules ...string) string {
	t.Helper()
	b, err := os.ReadFile(gkConstraint)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	p := map[string]any{"rules": rules}
	for k, v := range params {
		p[k] = v
	}
	c["spec"].(map[string]any)["parameters"] = p
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "constraint.yaml")
	writeFile(t, path, out)
	return path
}

// What Gatekeeper does at admission (tests/testdata/gatekeeper/admission),
// through a constraint that reports shared-branch-contradiction alone: the
// message carries the rule id once, a change is denied only when it
// introduces or worsens a contradiction (never a status write or a fix of
// an existing one), and PromotionTasks and ClusterPromotionTasks are
// reviewed for the Stages that use them.
func TestCompatGatorAdmission(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "testdata/gatekeeper/admission"
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		copyFile(t, filepath.Join(src, e.Name()), filepath.Join(dir, e.Name()))
	}
	copyFile(t, gkTemplate, filepath.Join(dir, "template.yaml"))
	selecting(t, dir, nil, "shared-branch-contradiction")
	for _, g := range hostsOf(t, "gator") {
		t.Run(g.String(), func(t *testing.T) {
			out, stderr, code := runCmd(t, dir, g.Path, "verify", "-v", ".")
			if code != 0 {
				t.Fatalf("gator verify failed (exit %d):\n%s\n%s", code, out, stderr)
			}
			if n := strings.Count(out, "--- PASS"); n < 10 {
				t.Errorf("%d passing cases, want 10:\n%s", n, out)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gator sync test: the template's sync requirements are met by the SyncSet,
// and not without it.
func TestCompatGatorSync(t *testing.T) {
	t.Parallel()
	for _, g := range hostsOf(t, "gator") {
		t.Run(g.String(), func(t *testing.T) {
			if _, stderr, code := runCmd(t, ".", g.Path, "sync", "test", "--filename", gkTemplate, "--filename", gkDir+"/sync.yaml", "--force-omit-gvk-manifest"); code != 0 {
				t.Errorf("sync requirements not met: %s", stderr)
			}
			if _, _, code := runCmd(t, ".", g.Path, "sync", "test", "--filename", gkTemplate, "--force-omit-gvk-manifest"); code == 0 {
				t.Errorf("sync test passes without the SyncSet; requires-sync-data is missing")
			}
		})
	}
}

// gator test over the examples: every object of an estate that a finding of
// an admission rule names gets a violation from the real Gatekeeper engine,
// through the shipped constraint, with the message flipflop prints led by
// the rule id; every fix estate gets none. The deny and warn pair reports the
// same, split: the deny constraint the rules it lists (and gator test fails,
// as for a deny), the warn one the rest.
func TestCompatGatorOnExamples(t *testing.T) {
	t.Parallel()
	bin := tool(t, "FLIPFLOP_BIN")
	one := []string{"test", "-o", "json", "-f", gkTemplate, "-f", gkConstraint}
	pair := []string{"test", "-o", "json", "-f", gkTemplate, "-f", gkPairDeny, "-f", gkPairWarn}
	denied := pairDenies(t)
	admission := offeredRules(t)
	examples, _ := filepath.Glob("../examples/*")
	gators := hostsOf(t, "gator")
	for _, dir := range examples {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			// What flipflop says for the admission rules, per object.
			report, _, _ := runCmd(t, "..", bin, "check", "-o", "json", "--fail-on", "never", strings.TrimPrefix(dir, "../"))
			var r struct {
				Findings []struct {
					Rule      string     `json:"rule"`
					Message   string     `json:"message"`
					Resources []resource `json:"resources"`
					Waived    any        `json:"waived"`
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(report), &r); err != nil {
				t.Fatalf("flipflop JSON: %v\n%s", err, report)
			}
			var want, wantPair []string
			for _, f := range r.Findings {
				if !slices.Contains(admission, f.Rule) || f.Waived != nil {
					continue
				}
				c := "flipflop-warn"
				if slices.Contains(denied, f.Rule) {
					c = "flipflop-deny"
				}
				for _, res := range f.Resources {
					obj := res.Kind + " " + res.Namespace + "/" + res.Name + ": "
					want = append(want, obj+"[flipflop] ["+f.Rule+"] "+f.Message)
					wantPair = append(wantPair, obj+"["+c+"] ["+f.Rule+"] "+f.Message)
				}
			}
			for _, w := range []*[]string{&want, &wantPair} {
				slices.Sort(*w)
				*w = slices.Compact(*w)
			}
			denies := slices.ContainsFunc(wantPair, func(s string) bool { return strings.Contains(s, "[flipflop-deny]") })
			for _, g := range gators {
				if got := gatorResults(t, g, append(one, "-f", dir)); !slices.Equal(got, want) {
					t.Errorf("%s:\n  %s\nflipflop:\n  %s", g, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
				}
				got, code := gatorTest(t, g, append(pair, "-f", dir))
				if !slices.Equal(got, wantPair) {
					t.Errorf("%s, the deny and warn pair:\n  %s\nflipflop:\n  %s", g, strings.Join(got, "\n  "), strings.Join(wantPair, "\n  "))
				}
				if denies != (code == 1) {
					t.Errorf("%s, the deny and warn pair: gator test exit %d, want 1 exactly when the deny constraint reports", g, code)
				}
			}
		})
	}
}

// offeredRules are the rules the template offers (its rules parameter).
func offeredRules(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(gkTemplate)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Spec struct {
			CRD struct {
				Spec struct {
					Validation struct {
						Schema struct {
							Properties struct {
								Rules struct {
									Items struct {
										Enum []string `json:"enum"`
									} `json:"items"`
								} `json:"rules"`
							} `json:"properties"`
						} `json:"openAPIV3Schema"`
					} `json:"validation"`
				} `json:"spec"`
			} `json:"crd"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &tmpl); err != nil {
		t.Fatal(err)
	}
	rules := tmpl.Spec.CRD.Spec.Validation.Schema.Properties.Rules.Items.Enum
	if len(rules) < 4 {
		t.Fatalf("the template offers the rules %v", rules)
	}
	return rules
}

// pairDenies are the rules the pair's deny constraint lists.
func pairDenies(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(gkPairDeny)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Spec struct {
			Parameters struct {
				Rules []string `json:"rules"`
			} `json:"parameters"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil || len(c.Spec.Parameters.Rules) == 0 {
		t.Fatalf("%s: rules %v (%v)", gkPairDeny, c.Spec.Parameters.Rules, err)
	}
	return c.Spec.Parameters.Rules
}

// gatorResults runs gator test with args, which must find nothing to deny,
// and returns its results as "Kind namespace/name: [constraint] message",
// sorted.
func gatorResults(t *testing.T, g host, args []string) []string {
	t.Helper()
	got, code := gatorTest(t, g, args)
	if code != 0 {
		t.Fatalf("%s test exit %d", g, code)
	}
	return got
}

// gatorTest runs gator test with args and returns its results (as
// gatorResults) and its exit code: 0, or 1 when a constraint denies.
func gatorTest(t *testing.T, g host, args []string) ([]string, int) {
	t.Helper()
	out, stderr, code := runCmd(t, ".", g.Path, args...)
	if code != 0 && code != 1 {
		t.Fatalf("%s test exit %d: %s", g, code, stderr)
	}
	var results []struct {
		Msg        string `json:"msg"`
		Constraint struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"constraint"`
		Resource struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		} `json:"violatingObject"`
	}
	if strings.TrimSpace(out) != "" && strings.TrimSpace(out) != "null" {
		if err := json.Unmarshal([]byte(out), &results); err != nil {
			t.Fatalf("%s JSON: %v\n%s\n%s", g, err, out, stderr)
		}
	}
	var got []string
	for _, res := range results {
		got = append(got, res.Resource.Kind+" "+res.Resource.Metadata.Namespace+"/"+res.Resource.Metadata.Name+": ["+res.Constraint.Metadata.Name+"] "+res.Msg)
	}
	slices.Sort(got)
	return got, code
}

// The settings the policies read are the constraint's parameters, through
// the real Gatekeeper engine on every gator of the matrix: with
// annotationWaivers false, a contradiction the flipflop.dev/ignore annotation
// waives is reported; with defaultBranch trunk, HEAD no longer stands for the
// main branch a Stage pushes, so the Applications that track HEAD have no
// foreign writer. Each against the same constraint without the parameter.
func TestCompatGatorParameters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, rule, estate string
		params             map[string]any
		// without: the objects reported without the parameter; with: with it.
		without, with []string
	}{
		{
			name: "annotationWaivers", rule: "shared-branch-contradiction",
			estate: "../policies/rules/shared_branch_contradiction/samples/clean/waived",
			params: map[string]any{"annotationWaivers": false},
			with:   []string{"ApplicationSet argocd/envs", "PromotionTask shop/promote", "Stage shop/dev", "Stage shop/qa"},
		},
		{
			name: "defaultBranch", rule: "foreign-branch-writer",
			estate:  "../policies/rules/foreign_branch_writer/samples/fires/head-pinned-main-pushed",
			params:  map[string]any{"defaultBranch": "trunk"},
			without: []string{"Application argocd/site", "Stage site/prod", "Stage site/stage"},
		},
	}
	gators := hostsOf(t, "gator")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plain := selecting(t, t.TempDir(), nil, c.rule)
			set := selecting(t, t.TempDir(), c.params, c.rule)
			for _, g := range gators {
				for _, run := range []struct {
					label, constraint string
					want              []string
				}{{"without " + c.name, plain, c.without}, {"with " + c.name, set, c.with}} {
					got := reported(gatorResults(t, g, []string{"test", "-o", "json", "-f", gkTemplate, "-f", run.constraint, "-f", c.estate}), c.rule)
					if !slices.Equal(got, run.want) {
						t.Errorf("%s, %s: %s reported on %v, want %v", g, run.label, c.rule, got, run.want)
					}
				}
			}
		})
	}
}

// reported are the objects results (as gatorResults) report rule on, sorted,
// each once.
func reported(results []string, rule string) []string {
	var objs []string
	for _, r := range results {
		obj, msg, ok := strings.Cut(r, ": ")
		if ok && strings.Contains(msg, "] ["+rule+"] ") {
			objs = append(objs, obj)
		}
	}
	slices.Sort(objs)
	return slices.Compact(objs)
}

// The malformed objects of the hardening tests never make the template error
// at admission: gator reviews each of them against the shipped constraint.
func TestCompatGatorOnMalformedObjects(t *testing.T) {
	t.Parallel()
	args := []string{"test", "-o", "json", "-f", gkTemplate, "-f", gkConstraint}
	for _, g := range hostsOf(t, "gator") {
		t.Run(g.String(), func(t *testing.T) {
			out, stderr, code := runCmd(t, ".", g.Path, append(args, "-f", "../evaluator/testdata/malformed.yaml")...)
			if code != 0 || strings.Contains(out+stderr, "error") && !strings.Contains(out, "[") {
				t.Fatalf("gator failed on malformed objects (exit %d):\n%s\n%s", code, out, stderr)
			}
			if strings.Contains(stderr, "eval_") || strings.Contains(out, "eval_") {
				t.Fatalf("template evaluation error:\n%s\n%s", out, stderr)
			}
		})
	}
}
