package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Gatekeeper in deny, with the template and the shipped constraint (every
// rule, its action switched to deny): each documented way out of the seed
// contradiction (examples/contradiction to examples/fix-*), replayed one
// object at a time in several orders, is admitted at every step, and
// changes that make the estate worse are denied by the rule that finds them,
// and by no other (each violation's message leads with its rule id), on
// every gator of the matrix. gator reviews each step as the API server would
// send it (an AdmissionReview with the old object), against the estate
// before the step as the synced inventory.
// policies/hosts/gatekeeper/fixes_test.rego replays every order of every way
// out through the same adapter in OPA.
func TestCompatGatorFixesAdmittedInDeny(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFile(t, gkTemplate, filepath.Join(dir, "template.yaml"))
	writeFile(t, filepath.Join(dir, "constraint.yaml"), switchAction(t, gkConstraint, "deny"))

	s := &replaySuite{dir: dir}
	steps := 0
	for _, r := range waysOutReplays(t) {
		for _, st := range r.steps {
			s.add(t, st.name, st.state, st.obj, nil)
			steps++
		}
	}
	for _, w := range changesForTheWorse(t) {
		s.add(t, w.name, w.state, w.obj, w.want)
		steps++
	}
	// Orders of one way out share steps (every order of fix-stage-branches
	// starts by writing the PromotionTask into the seed): such a step is one
	// case; every step of every order is still one of the cases.
	t.Logf("%d steps, %d distinct reviews", steps, len(s.cases))

	var suite strings.Builder
	suite.WriteString("apiVersion: test.gatekeeper.sh/v1alpha1\nkind: Suite\nmetadata:\n  name: fixes\ntests:\n")
	suite.WriteString("- name: fixes\n  template: template.yaml\n  constraint: constraint.yaml\n  cases:\n")
	for _, c := range s.cases {
		fmt.Fprintf(&suite, "  - name: %s\n    object: %s\n    inventory:\n    - %s\n    assertions:\n", c.name, c.object, c.inventory)
		total := 0
		for _, rule := range slices.Sorted(maps.Keys(c.want)) {
			total += c.want[rule]
			fmt.Fprintf(&suite, "    - violations: %d\n      message: '^\\[%s\\] '\n", c.want[rule], rule)
		}
		want := "'no'"
		if total > 0 {
			want = fmt.Sprint(total)
		}
		fmt.Fprintf(&suite, "    - violations: %s\n", want)
	}
	writeFile(t, filepath.Join(dir, "suite.yaml"), []byte(suite.String()))
	// gator compiles the template for every case (about half a CPU-second
	// each), so the suite runs once per gator.
	for _, g := range hostsOf(t, "gator") {
		t.Run(g.String(), func(t *testing.T) {
			t.Parallel()
			out, stderr, code := runCmd(t, dir, g.Path, "verify", "-v", "suite.yaml")
			if code != 0 {
				t.Fatalf("gator verify failed (exit %d):\n%s\n%s", code, out, stderr)
			}
			if n := strings.Count(out, "--- PASS") - 1; n != len(s.cases) { // and the test's own PASS
				t.Errorf("%d passing cases, want %d:\n%s", n, len(s.cases), out)
			}
		})
	}
}

// switchAction is a constraint file of bundles/gatekeeper with its scoped
// action (warn) switched to action.
func switchAction(t *testing.T, path, action string) []byte {
	t.Helper()
	c, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switched := bytes.Replace(c, []byte("\n  - action: warn\n"), []byte("\n  - action: "+action+"\n"), 1)
	if bytes.Equal(switched, c) && action != "warn" {
		t.Fatalf("%s: no scoped action: warn to switch", path)
	}
	return switched
}

// replaySuite collects gator cases: an AdmissionReview and the inventory it is
// reviewed against, with the violations of each rule the constraint must
// report.
type replaySuite struct {
	dir   string
	cases []replayCase
	// seen maps the content of a case (review without its uid, inventory,
	// expected violations) to its index in cases: a step written into the
	// same estate by two orders is reviewed once.
	seen map[string]int
}

type replayCase struct {
	name, object, inventory string
	want                    map[string]int
}

// add writes the review of obj written into state (UPDATE when state holds
// it, else CREATE) and state as the inventory, unless a case already reviews
// the same object written into the same state with the same expectations.
func (s *replaySuite) add(t *testing.T, name string, state map[string]map[string]any, obj map[string]any, want map[string]int) {
	t.Helper()
	same, err := json.Marshal([]any{state, obj, want})
	if err != nil {
		t.Fatal(err)
	}
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	if i, ok := s.seen[string(same)]; ok {
		t.Logf("%s: the same review as %s", name, s.cases[i].name)
		return
	}
	s.seen[string(same)] = len(s.cases)
	key := keyOf(obj)
	meta, _ := obj["metadata"].(map[string]any)
	group, version, _ := strings.Cut(fmt.Sprint(obj["apiVersion"]), "/")
	req := map[string]any{
		"uid":       fmt.Sprintf("00000000-0000-0000-0000-%012d", len(s.cases)+1),
		"kind":      map[string]any{"group": group, "version": version, "kind": obj["kind"]},
		"resource":  map[string]any{"group": group, "version": version, "resource": strings.ToLower(fmt.Sprint(obj["kind"])) + "s"},
		"name":      meta["name"],
		"operation": "CREATE",
		"userInfo":  map[string]any{"username": "alice"},
		"object":    obj,
	}
	if ns, ok := meta["namespace"]; ok {
		req["namespace"] = ns
	}
	if old, ok := state[key]; ok {
		req["operation"] = "UPDATE"
		req["oldObject"] = old
	}
	review, err := yaml.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	if err != nil {
		t.Fatal(err)
	}
	var inv [][]byte
	for _, k := range slices.Sorted(maps.Keys(state)) {
		b, err := yaml.Marshal(state[k])
		if err != nil {
			t.Fatal(err)
		}
		inv = append(inv, b)
	}
	c := replayCase{name: name, object: name + "-review.yaml", inventory: name + "-inventory.yaml", want: want}
	writeFile(t, filepath.Join(s.dir, c.object), review)
	writeFile(t, filepath.Join(s.dir, c.inventory), bytes.Join(inv, []byte("---\n")))
	s.cases = append(s.cases, c)
}

// loadEstate reads the objects of a directory's YAML files by "Kind/name"
// (the examples' names are unique by kind).
func loadEstate(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	out := map[string]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var o map[string]any
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o != nil {
				out[keyOf(o)] = o
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no objects in %s", dir)
	}
	return out
}

func keyOf(o map[string]any) string {
	meta, _ := o["metadata"].(map[string]any)
	return fmt.Sprintf("%v/%v", o["kind"], meta["name"])
}

// changedObjects are the objects of fix that seed lacks or holds otherwise.
func changedObjects(seed, fix map[string]map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for k, o := range fix {
		if !reflect.DeepEqual(seed[k], o) {
			out[k] = o
		}
	}
	return out
}

// written is state with objs written (created or replaced).
func written(state map[string]map[string]any, objs ...map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for k, o := range state {
		out[k] = o
	}
	for _, o := range objs {
		out[keyOf(o)] = o
	}
	return out
}

func without(state map[string]map[string]any, key string) map[string]map[string]any {
	out := written(state)
	delete(out, key)
	return out
}

func valuesOf(m map[string]map[string]any) []map[string]any {
	var out []map[string]any
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waysOut lists each documented way out of the seed contradiction
// (examples/contradiction to examples/<fix>) with the orders its changes are
// replayed in, as "Kind/name"; the first order names all the fix's changes.
var waysOut = []struct {
	fix    string
	orders [][]string
}{
	{"fix-no-desired-revision", [][]string{{"Stage/dev", "Stage/qa"}, {"Stage/qa", "Stage/dev"}}},
	{"fix-update-target-revision", [][]string{{"Stage/dev", "Stage/qa"}, {"Stage/qa", "Stage/dev"}}},
	{"fix-stage-branches", [][]string{
		// Stage first, then its Application; Application first; both
		// Stages, then both Applications; and the reverse.
		{"PromotionTask/render", "Stage/dev", "Application/dev", "Stage/qa", "Application/qa"},
		{"PromotionTask/render", "Application/dev", "Stage/dev", "Application/qa", "Stage/qa"},
		{"PromotionTask/render", "Stage/qa", "Stage/dev", "Application/qa", "Application/dev"},
		{"PromotionTask/render", "Application/dev", "Application/qa", "Stage/dev", "Stage/qa"},
	}},
}

// replay is one order of one way out: the seed, then each step's object with
// the estate it is written into.
type replay struct {
	name  string
	seed  map[string]map[string]any
	steps []replayStep
}

type replayStep struct {
	name  string
	state map[string]map[string]any // the estate before the step
	obj   map[string]any
}

// waysOutReplays are the replays of waysOut, each checked to end in its fix.
func waysOutReplays(t *testing.T) []replay {
	t.Helper()
	seed := loadEstate(t, "../examples/contradiction")
	var out []replay
	for _, way := range waysOut {
		changes := changedObjects(seed, loadEstate(t, "../examples/"+way.fix))
		if len(changes) != len(way.orders[0]) {
			t.Fatalf("%s changes %v, the orders name %v", way.fix, slices.Sorted(maps.Keys(changes)), way.orders[0])
		}
		for i, order := range way.orders {
			r := replay{name: fmt.Sprintf("%s-order%d", way.fix, i+1), seed: seed}
			state := seed
			for j, name := range order {
				obj, ok := changes[name]
				if !ok {
					t.Fatalf("%s: %s is not one of its changes %v", way.fix, name, slices.Sorted(maps.Keys(changes)))
				}
				r.steps = append(r.steps, replayStep{
					name:  fmt.Sprintf("%s-step%d-%s", r.name, j+1, strings.ReplaceAll(strings.ToLower(name), "/", "-")),
					state: state, obj: obj,
				})
				state = written(state, obj)
			}
			if !reflect.DeepEqual(state, written(seed, valuesOf(changes)...)) {
				t.Fatalf("%s order %d does not end in the fix", way.fix, i+1)
			}
			out = append(out, r)
		}
	}
	return out
}

// worseChange is a change that makes the estate worse: written into state,
// obj must be denied by the rules of want (each with that many violations),
// and by no other.
type worseChange struct {
	name  string
	state map[string]map[string]any
	obj   map[string]any
	want  map[string]int
}

// changesForTheWorse: a Stage created next to the other completes the
// contradiction; halfway out (dev on its branch), dev writing main again is
// a foreign writer next to qa's pin.
func changesForTheWorse(t *testing.T) []worseChange {
	t.Helper()
	seed := loadEstate(t, "../examples/contradiction")
	fix := loadEstate(t, "../examples/fix-stage-branches")
	halfway := written(seed, fix["PromotionTask/render"], fix["Stage/dev"], fix["Application/dev"])
	unpinned := loadEstate(t, "../examples/fix-no-desired-revision")["Stage/dev"]
	return []worseChange{
		{"create-qa-into-dev-is-denied", without(seed, "Stage/qa"), seed["Stage/qa"], map[string]int{"shared-branch-contradiction": 1}},
		{"dev-writing-main-again-halfway-is-denied", halfway, unpinned, map[string]int{"foreign-branch-writer": 1}},
	}
}
