package export

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// minify drops comments, never a # in a string, and keeps a rule's identity
// in its METADATA; the code is as written.
func TestMinifyKeepsCodeAndRuleIdentity(t *testing.T) {
	src := "# METADATA\n# title: A rule\n# description: long text\n# custom:\n#   id: a-rule\n#   severity: error\n#   why: because\n#   remediation: |\n#     fix it\n" +
		"package lib.flipflop.rules.a\n\n# dropped note\n# another\n\nx := \"a#b\" # trailing\n\ny := `raw # not a comment`\n\nz contains v if {\n\t# inside\n\tsome v in [1, 2] # trailing too\n}\n"
	got, err := minify("a.rego", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"dropped note", "another", "trailing", "inside", "description", "why", "because"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q left in:\n%s", gone, got)
		}
	}
	for _, kept := range []string{"# METADATA\n", "title: A rule", "id: a-rule", "severity: error", "fix it", `x := "a#b"` + "\n", "y := `raw # not a comment`", "\tsome v in [1, 2]\n"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q lost:\n%s", kept, got)
		}
	}
	// A lib's METADATA (no rule id) is documentation: it goes too.
	lib, err := minify("l.rego", "# METADATA\n# title: L\npackage lib.flipflop.l\n\nx := 1\n")
	if err != nil || strings.Contains(lib, "#") || !strings.Contains(lib, "x := 1") {
		t.Errorf("lib: %q, %v", lib, err)
	}
	if _, err := minify("bad.rego", "package p\n\nx := \n"); err == nil {
		t.Error("an unparsable module minified")
	}
	if _, err := minify("r.rego", "# METADATA\n# custom:\n#   id: r\npackage lib.flipflop.rules.r\n"); err == nil || !strings.Contains(err.Error(), "severity") {
		t.Errorf("a rule without a severity: %v", err)
	}
}

// The template fits kubectl's client-side apply, which stores the object, as
// JSON, in the kubectl.kubernetes.io/last-applied-configuration annotation:
// every annotation of an object together is at most 256 KiB (Kubernetes'
// TotalAnnotationSizeLimitB), with room to spare for the rules to grow.
func TestTemplateFitsClientSideApply(t *testing.T) {
	race.Sequential(t)
	rules, err := evaluator.BundleRules()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Template(slices.DeleteFunc(rules, func(r evaluator.Rule) bool { return !r.Admission }))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(tmpl, &obj); err != nil {
		t.Fatal(err)
	}
	applied, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	size := len("kubectl.kubernetes.io/last-applied-configuration") + len(applied) + 1
	annotations, _ := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
	for k, v := range annotations {
		size += len(k) + len(v.(string))
	}
	const limit = 256 << 10
	t.Logf("annotations with the last-applied copy: %d bytes of %d", size, limit)
	if size > limit*95/100 {
		t.Errorf("the template's annotations would take %d bytes with kubectl's last-applied copy, over 95%% of the %d Kubernetes allows", size, limit)
	}
	var parsed struct {
		Spec struct {
			Targets []struct {
				Code []struct {
					Source struct {
						Libs []string `json:"libs"`
					} `json:"source"`
				} `json:"code"`
			} `json:"targets"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(tmpl, &parsed); err != nil {
		t.Fatal(err)
	}
	ids := 0
	for _, lib := range parsed.Spec.Targets[0].Code[0].Source.Libs {
		if strings.Contains(lib, "# METADATA\n") {
			ids++
		}
	}
	admission := slices.DeleteFunc(rules, func(r evaluator.Rule) bool { return !r.Admission })
	if ids != len(admission) {
		t.Errorf("%d libs keep METADATA, want the %d admission rules'", ids, len(admission))
	}
}
