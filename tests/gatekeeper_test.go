package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gator verify passes for every generated suite (allowed and disallowed cases,
// with the reviewed object in the inventory too), on every gator of the matrix:
// each template compiles on the oldest and the newest Gatekeeper.
func TestCompatGatorVerify(t *testing.T) {
	t.Parallel()
	suites, _ := filepath.Glob("../bundles/gatekeeper/*/suite.yaml")
	if len(suites) < 4 {
		t.Fatalf("want a suite for each admission rule, found %v", suites)
	}
	for _, g := range hostsOf(t, "gator") {
		t.Run(g.String(), func(t *testing.T) {
			out, stderr, code := runCmd(t, "../bundles/gatekeeper", g.Path, "verify", "-v", "./...")
			if code != 0 {
				t.Fatalf("gator verify failed (exit %d):\n%s\n%s", code, out, stderr)
			}
			if strings.Count(out, "--- PASS") < 4*4 {
				t.Errorf("too few passing cases:\n%s", out)
			}
		})
	}
}

// What Gatekeeper does at admission (tests/testdata/gatekeeper/admission): the
// message carries the rule id once (Gatekeeper adds the constraint's name), a
// change is denied only when it introduces or worsens a contradiction (never a
// status write or a fix of an existing one), and PromotionTasks and
// ClusterPromotionTasks are reviewed for the Stages that use them.
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
	copyFile(t, "../bundles/gatekeeper/shared-branch-contradiction/template.yaml", filepath.Join(dir, "template.yaml"))
	copyFile(t, "../bundles/gatekeeper/constraints/shared-branch-contradiction.yaml", filepath.Join(dir, "constraint.yaml"))
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

// gator sync test: every template's sync requirements are met by the SyncSet,
// and not without it.
func TestCompatGatorSync(t *testing.T) {
	t.Parallel()
	templates, _ := filepath.Glob("../bundles/gatekeeper/*/template.yaml")
	for _, g := range hostsOf(t, "gator") {
		t.Run(g.String(), func(t *testing.T) {
			for _, tmpl := range templates {
				if _, stderr, code := runCmd(t, ".", g.Path, "sync", "test", "--filename", tmpl, "--filename", "../bundles/gatekeeper/sync.yaml", "--force-omit-gvk-manifest"); code != 0 {
					t.Errorf("%s: sync requirements not met: %s", tmpl, stderr)
				}
				if _, _, code := runCmd(t, ".", g.Path, "sync", "test", "--filename", tmpl, "--force-omit-gvk-manifest"); code == 0 {
					t.Errorf("%s: sync test passes without the SyncSet; requires-sync-data is missing", tmpl)
				}
			}
		})
	}
}

// gator test over the examples: every object of the contradiction estate that a
// finding names gets a violation from the real Gatekeeper engine, with the
// message flipflop prints, from the constraint named after the rule; every fix
// estate gets none.
//
// The all-rules constraint (bundles/gatekeeper/admission), installed alone,
// reports the same findings, each message led by its rule id.
func TestCompatGatorOnExamples(t *testing.T) {
	t.Parallel()
	bin := tool(t, "FLIPFLOP_BIN")
	args := []string{"test", "-o", "json"}
	templates, _ := filepath.Glob("../bundles/gatekeeper/*/template.yaml")
	for _, tmpl := range templates {
		if filepath.Base(filepath.Dir(tmpl)) != "admission" {
			args = append(args, "-f", tmpl, "-f", constraintOf(tmpl))
		}
	}
	all := []string{"test", "-o", "json", "-f", "../bundles/gatekeeper/admission/template.yaml", "-f", "../bundles/gatekeeper/admission/constraint.yaml"}
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
			var want, wantAll []string
			for _, f := range r.Findings {
				if !admissionRule(f.Rule) || f.Waived != nil {
					continue
				}
				for _, res := range f.Resources {
					want = append(want, res.Kind+" "+res.Namespace+"/"+res.Name+": ["+f.Rule+"] "+f.Message)
					wantAll = append(wantAll, res.Kind+" "+res.Namespace+"/"+res.Name+": [flipflop] ["+f.Rule+"] "+f.Message)
				}
			}
			slices.Sort(want)
			want = slices.Compact(want)
			slices.Sort(wantAll)
			wantAll = slices.Compact(wantAll)
			for _, g := range gators {
				got := gatorResults(t, g, append(args, "-f", dir))
				for _, line := range got {
					if _, msg, _ := strings.Cut(line, "] "); strings.HasPrefix(msg, "[") {
						t.Errorf("%s: message starts with a rule id, which Gatekeeper adds itself: %q", g, line)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s:\n  %s\nflipflop:\n  %s", g, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
				}
				if got := gatorResults(t, g, append(all, "-f", dir)); !slices.Equal(got, wantAll) {
					t.Errorf("%s, all-rules constraint:\n  %s\nflipflop:\n  %s", g, strings.Join(got, "\n  "), strings.Join(wantAll, "\n  "))
				}
			}
		})
	}
}

// gatorResults runs gator test with args and returns its results as
// "Kind namespace/name: [constraint] message", sorted.
func gatorResults(t *testing.T, g host, args []string) []string {
	t.Helper()
	out, stderr, code := runCmd(t, ".", g.Path, args...)
	if code != 0 {
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
			t.Fatalf("%s JSON: %v\n%s", g, err, out)
		}
	}
	var got []string
	for _, res := range results {
		got = append(got, res.Resource.Kind+" "+res.Resource.Metadata.Namespace+"/"+res.Resource.Metadata.Name+": ["+res.Constraint.Metadata.Name+"] "+res.Msg)
	}
	slices.Sort(got)
	return got
}

// constraintOf is the constraint of a template of bundles/gatekeeper: a rule's
// in constraints/, the all-rules template's beside it.
func constraintOf(tmpl string) string {
	dir := filepath.Dir(tmpl)
	if filepath.Base(dir) == "admission" {
		return filepath.Join(dir, "constraint.yaml")
	}
	return filepath.Join(filepath.Dir(dir), "constraints", filepath.Base(dir)+".yaml")
}

func admissionRule(id string) bool {
	_, err := os.Stat(filepath.Join("../bundles/gatekeeper", id, "template.yaml"))
	return err == nil
}

// The malformed objects of the hardening tests never make a template error at
// admission: gator reviews each of them against every template.
func TestCompatGatorOnMalformedObjects(t *testing.T) {
	t.Parallel()
	args := []string{"test", "-o", "json"}
	templates, _ := filepath.Glob("../bundles/gatekeeper/*/template.yaml")
	for _, tmpl := range templates {
		args = append(args, "-f", tmpl, "-f", constraintOf(tmpl))
	}
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
