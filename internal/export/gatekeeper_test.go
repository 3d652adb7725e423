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
	// nil: descriptions from METADATA (the CLI passes docs.Text, which imports
	// this package).
	f, err := Gatekeeper(context.Background(), ev, nil)
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

// kinds reads the kinds of the resources a kustomization in files lists.
func kinds(t *testing.T, files Files, kustomization string) map[string][]string {
	t.Helper()
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(files[kustomization], &k); err != nil {
		t.Fatalf("%s: %v", kustomization, err)
	}
	out := map[string][]string{}
	for _, r := range k.Resources {
		p := path.Join(path.Dir(kustomization), r)
		b, ok := files[p]
		if !ok {
			t.Errorf("%s lists %s, which is not generated", kustomization, r)
			continue
		}
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(b, &obj); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[obj.Kind] = append(out[obj.Kind], obj.Metadata.Name)
	}
	return out
}

// Two kustomizations: the first holds what Gatekeeper needs before any
// constraint can exist (the SyncSet, every template), the second every
// constraint and nothing else, so `kubectl apply -k` of each in turn never
// names a kind that does not exist yet.
func TestGatekeeperKustomizationsInTwoSteps(t *testing.T) {
	race.Sequential(t)
	files, rules := gatekeeperFiles(t)
	first := kinds(t, files, "kustomization.yaml")
	second := kinds(t, files, "constraints/kustomization.yaml")
	if len(first) != 2 || len(first["SyncSet"]) != 1 || len(first["ConstraintTemplate"]) != len(rules)+1 ||
		!slices.Contains(first["ConstraintTemplate"], strings.ToLower(AdmissionKind)) {
		t.Errorf("step 1 holds %v, want the SyncSet, %d rules' templates and the all-rules one", first, len(rules))
	}
	var constraints []string
	for kind, names := range second {
		if !strings.HasPrefix(kind, "Flipflop") {
			t.Errorf("step 2 holds a %s", kind)
		}
		constraints = append(constraints, names...)
	}
	var ids []string
	for _, r := range rules {
		ids = append(ids, r.ID)
		if _, ok := second[ConstraintKind(r.ID)]; !ok {
			t.Errorf("step 2 lacks the %s constraint", ConstraintKind(r.ID))
		}
	}
	slices.Sort(constraints)
	slices.Sort(ids)
	if !slices.Equal(constraints, ids) {
		t.Errorf("constraints %v, want one per admission rule %v", constraints, ids)
	}
}

// Constraints review PromotionTasks and ClusterPromotionTasks too: a task edit
// can make the Stages that use it contradict each other.
func TestConstraintsMatchTasks(t *testing.T) {
	race.Sequential(t)
	files, rules := gatekeeperFiles(t)
	for _, r := range rules {
		var c struct {
			Spec struct {
				Match struct {
					Kinds []struct {
						APIGroups []string `json:"apiGroups"`
						Kinds     []string `json:"kinds"`
					} `json:"kinds"`
				} `json:"match"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(files[ConstraintPath(r.ID)], &c); err != nil {
			t.Fatal(err)
		}
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
				t.Errorf("%s: constraint does not match %s (matches %v)", r.ID, want, matched)
			}
		}
	}
}

// The all-rules template offers exactly the admission rules in its rules
// parameter, and its constraint (admission/constraint.yaml) is not in step 2:
// it is installed instead of the rules' constraints, never with them.
func TestAdmissionTemplateListsEveryAdmissionRule(t *testing.T) {
	race.Sequential(t)
	files, rules := gatekeeperFiles(t)
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
	if err := yaml.Unmarshal(files["admission/template.yaml"], &tmpl); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rules {
		ids = append(ids, r.ID)
	}
	got := tmpl.Spec.CRD.Spec.Validation.Schema.Properties.Rules.Items.Enum
	slices.Sort(got)
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Errorf("rules parameter offers %v, want the admission rules %v", got, ids)
	}
	var c struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(files["admission/constraint.yaml"], &c); err != nil || c.Kind != AdmissionKind {
		t.Errorf("admission/constraint.yaml is a %q (%v), want %s", c.Kind, err, AdmissionKind)
	}
	if second := kinds(t, files, "constraints/kustomization.yaml"); len(second[AdmissionKind]) > 0 {
		t.Errorf("step 2 installs the all-rules constraint next to the rules' own")
	}
}
