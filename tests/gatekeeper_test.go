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
// with the reviewed object in the inventory too).
func TestGatorVerify(t *testing.T) {
	gator := tool(t, "GATOR_BIN")
	suites, _ := filepath.Glob("../bundles/gatekeeper/*/suite.yaml")
	if len(suites) < 4 {
		t.Fatalf("want a suite for each admission rule, found %v", suites)
	}
	out, stderr, code := runCmd(t, "../bundles/gatekeeper", gator, "verify", "-v", "./...")
	if code != 0 {
		t.Fatalf("gator verify failed (exit %d):\n%s\n%s", code, out, stderr)
	}
	if strings.Count(out, "--- PASS") < 4*4 {
		t.Errorf("too few passing cases:\n%s", out)
	}
}

// gator sync test: every template's sync requirements are met by the SyncSet,
// and not without it.
func TestGatorSync(t *testing.T) {
	gator := tool(t, "GATOR_BIN")
	templates, _ := filepath.Glob("../bundles/gatekeeper/*/template.yaml")
	for _, tmpl := range templates {
		if _, stderr, code := runCmd(t, ".", gator, "sync", "test", "--filename", tmpl, "--filename", "../bundles/gatekeeper/sync.yaml", "--force-omit-gvk-manifest"); code != 0 {
			t.Errorf("%s: sync requirements not met: %s", tmpl, stderr)
		}
		if _, _, code := runCmd(t, ".", gator, "sync", "test", "--filename", tmpl, "--force-omit-gvk-manifest"); code == 0 {
			t.Errorf("%s: sync test passes without the SyncSet; requires-sync-data is missing", tmpl)
		}
	}
}

// gator test over the examples: every object of the contradiction estate that a
// finding names gets a violation from the real Gatekeeper engine, the same
// message flipflop prints, and every fix estate gets none.
func TestGatorOnExamples(t *testing.T) {
	gator := tool(t, "GATOR_BIN")
	bin := tool(t, "FLIPFLOP_BIN")
	args := []string{"test", "-o", "json"}
	templates, _ := filepath.Glob("../bundles/gatekeeper/*/template.yaml")
	for _, tmpl := range templates {
		args = append(args, "-f", tmpl, "-f", filepath.Join(filepath.Dir(tmpl), "constraint.yaml"))
	}
	examples, _ := filepath.Glob("../examples/*")
	for _, dir := range examples {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out, stderr, code := runCmd(t, ".", gator, append(args, "-f", dir)...)
			if code != 0 {
				t.Fatalf("gator test exit %d: %s", code, stderr)
			}
			var results []struct {
				Msg      string `json:"msg"`
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
					t.Fatalf("gator JSON: %v\n%s", err, out)
				}
			}
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
			json.Unmarshal([]byte(report), &r)
			var want, got []string
			for _, f := range r.Findings {
				if !admissionRule(f.Rule) || f.Waived != nil {
					continue
				}
				for _, res := range f.Resources {
					want = append(want, res.Kind+" "+res.Namespace+"/"+res.Name+": ["+f.Rule+"] "+f.Message)
				}
			}
			for _, res := range results {
				got = append(got, res.Resource.Kind+" "+res.Resource.Metadata.Namespace+"/"+res.Resource.Metadata.Name+": "+res.Msg)
			}
			slices.Sort(want)
			slices.Sort(got)
			want = slices.Compact(want)
			if !slices.Equal(got, want) {
				t.Errorf("gator:\n  %s\nflipflop:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

func admissionRule(id string) bool {
	_, err := os.Stat(filepath.Join("../bundles/gatekeeper", id, "template.yaml"))
	return err == nil
}

// The malformed objects of the hardening tests never make a template error at
// admission: gator reviews each of them against every template.
func TestGatorOnMalformedObjects(t *testing.T) {
	gator := tool(t, "GATOR_BIN")
	args := []string{"test", "-o", "json"}
	templates, _ := filepath.Glob("../bundles/gatekeeper/*/template.yaml")
	for _, tmpl := range templates {
		args = append(args, "-f", tmpl, "-f", filepath.Join(filepath.Dir(tmpl), "constraint.yaml"))
	}
	out, stderr, code := runCmd(t, ".", gator, append(args, "-f", "../evaluator/testdata/malformed.yaml")...)
	if code != 0 || strings.Contains(out+stderr, "error") && !strings.Contains(out, "[") {
		t.Fatalf("gator failed on malformed objects (exit %d):\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(stderr, "eval_") || strings.Contains(out, "eval_") {
		t.Fatalf("template evaluation error:\n%s\n%s", out, stderr)
	}
}
