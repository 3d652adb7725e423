// Package explain replays, on the user's own Stages, Applications and branches,
// what a shared-branch contradiction does: which commit each promotion pushes,
// what each pinning Stage expects, what Argo CD then reports, and which Stage is
// Healthy after each promotion. It reads flipflop's model (evaluator.Model) and
// the findings of shared-branch-contradiction and foreign-branch-writer.
package explain

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// Rules are the rules whose findings get a timeline.
var Rules = []string{"shared-branch-contradiction", "foreign-branch-writer"}

// MaxStages is how many Stages a timeline plays through; the rest are named.
const MaxStages = 8

// Health of a Stage after a step.
const (
	Healthy     = "Healthy"
	Unhealthy   = "Unhealthy"
	Unknown     = "Unknown"
	NotPromoted = "-"
)

// Timeline is what the promotions of the Stages on one floating pointer do to
// the Stages' health.
type Timeline struct {
	// Pointer is the shared pointer (the findings' key names it).
	Pointer evaluator.Pointer
	// Findings are the findings about the pointer, in report order.
	Findings []evaluator.Finding
	// Pinners are the Stages that pin an Application on the pointer (the
	// columns of the health table), Writers those that push to it, in
	// pipeline order (upstream first), keys as "namespace/name"; both without
	// the Omitted ones.
	Pinners, Writers []string
	// Omitted are Stages left out of the replay (beyond MaxStages).
	Omitted []string
	Steps   []Step
	// Issue is the health issue Kargo reports for the first Stage that turns
	// Unhealthy (IssueStage), with commit letters for SHAs.
	Issue, IssueStage string
	// AutoSync says per pinned Application whether auto-sync is on (true,
	// false or "unknown").
	AutoSync map[string]any

	names map[string]string          // display names of Stages and Applications
	pins  map[string][]evaluator.Pin // pins on the pointer by Stage
}

// Step is one promotion.
type Step struct {
	// Stage is the Stage promoted.
	Stage string
	// Commit is the commit it pushes to the pointer ("" when it does not push to it).
	Commit string
	// Head is the pointer's head after the step ("" when unknown).
	Head string
	// Health is every pinning Stage's health after the step.
	Health map[string]string
	// Lines narrate the step.
	Lines []string
}

// expectation is what one pin of a Stage expects an Application source to report.
type expectation struct {
	pin   evaluator.Pin
	value string // a commit letter, or the literal
	class string
}

// Build returns a timeline per pointer that a finding of Rules is about, in
// the order of the findings.
func Build(m *evaluator.Model, report *evaluator.Report, objs []evaluator.Object) []Timeline {
	depth := stageDepths(objs)
	var out []Timeline
	seen := map[string]int{}
	for _, f := range report.Findings {
		if !slices.Contains(Rules, f.Rule) || f.Key == "" {
			continue
		}
		if i, ok := seen[f.Key]; ok {
			out[i].Findings = append(out[i].Findings, f)
			continue
		}
		t, ok := build(m, f.Key, depth)
		if !ok {
			continue
		}
		t.Findings = []evaluator.Finding{f}
		// The rules know auto-sync of the pinned Applications also when the
		// model lists them under an ApplicationSet pattern.
		if as, ok := f.Details["autoSync"].(map[string]any); ok {
			for app, v := range as {
				if _, pinned := t.AutoSync[app]; pinned {
					t.AutoSync[app] = v
				}
			}
		}
		seen[f.Key] = len(out)
		out = append(out, t)
	}
	return out
}

func build(m *evaluator.Model, key string, depth map[string]int) (Timeline, bool) {
	t := Timeline{AutoSync: map[string]any{}}
	pins := map[string][]evaluator.Pin{}
	assumed := false
	for _, p := range m.Pins {
		if p.Pointer.Key == key {
			pins[p.Stage] = append(pins[p.Stage], p)
			t.Pointer = p.Pointer
			assumed = assumed || p.Pointer.Assumed
		}
	}
	t.Pointer.Assumed = assumed // some pinned Application tracks HEAD, taken to be this branch
	if len(pins) == 0 {
		return t, false
	}
	t.pins = pins
	writes := map[string]bool{}
	elsewhere := map[string]string{} // a Stage's first push to another pointer
	for _, w := range m.Writes {
		if w.Pointer.Key == key {
			writes[w.Stage] = true
		} else if _, ok := elsewhere[w.Stage]; !ok && w.Pointer.Known {
			elsewhere[w.Stage] = w.Pointer.Text
		}
	}
	order := func(a, b string) int { return cmp.Or(cmp.Compare(depth[a], depth[b]), cmp.Compare(a, b)) }
	t.Pinners = slices.SortedFunc(maps.Keys(pins), order)
	t.Writers = slices.SortedFunc(maps.Keys(writes), order)
	actors := slices.SortedFunc(maps.Keys(union(pins, writes)), order)
	if len(actors) > MaxStages {
		t.Omitted = actors[MaxStages:]
		actors = actors[:MaxStages]
		kept := func(s string) bool { return !slices.Contains(actors, s) }
		t.Pinners = slices.DeleteFunc(t.Pinners, kept)
		t.Writers = slices.DeleteFunc(t.Writers, kept)
	}
	for _, s := range t.Pinners {
		for _, p := range pins[s] {
			t.AutoSync[p.Application] = "unknown"
			for _, a := range m.Applications {
				if a.Key == p.Application {
					t.AutoSync[p.Application] = a.AutoSync
				}
			}
		}
	}
	t.names = displayNames(append(slices.Clone(actors), t.Omitted...), m.Pins, key)

	// Replay: every Stage once in pipeline order, then the first one again.
	seq := slices.Clone(actors)
	if len(actors) > 1 {
		seq = append(seq, actors[0])
	}
	var (
		head     string
		next     int
		expected = map[string][]expectation{}
		health   = map[string]string{}
	)
	commit := func() string { next++; return letters(next) }
	branch := safetext.Text(t.Pointer.Name)
	if branch == "" {
		branch = "the branch"
	}
	for _, s := range seq {
		step := Step{Stage: s}
		before := head
		switch {
		case writes[s]:
			step.Commit = commit()
			head = step.Commit
			step.Lines = append(step.Lines, fmt.Sprintf("promote to %s → %s pushes commit %s to %s; %s is now %s",
				t.name(s), t.name(s), head, branch, branch, head))
		case head == "":
			head = commit()
			before = head
			step.Lines = append(step.Lines, fmt.Sprintf("promote to %s (it does not push to %s; %s is at %s)", t.name(s), branch, branch, head))
		default:
			step.Lines = append(step.Lines, fmt.Sprintf("promote to %s (it does not push to %s; %s stays %s)", t.name(s), branch, branch, head))
		}
		if ps, ok := pins[s]; ok {
			var own string
			var exps []expectation
			for _, p := range ps {
				e := expectation{pin: p, class: p.DesiredClass}
				switch p.DesiredClass {
				case "own":
					if step.Commit == "" && own == "" {
						own = commit()
						where := "another branch"
						if w, ok := elsewhere[s]; ok {
							where = safetext.Text(w)
						}
						step.Lines = append(step.Lines, fmt.Sprintf("%s pushes its own commit %s to %s, never to %s", t.name(s), own, where, branch))
					}
					e.value = cmp.Or(step.Commit, own)
				case "freight":
					e.value = before
				case "literal":
					e.value = p.DesiredRevision
				}
				exps = append(exps, e)
			}
			expected[s] = exps
			state := evaluate(exps, head)
			step.Lines = append(step.Lines, fmt.Sprintf("%s expects %s on %s: %s", t.name(s), t.describe(exps), t.apps(exps), state))
			if state == Unhealthy && t.Issue == "" {
				t.Issue, t.IssueStage = issue(exps, head), s
			}
			health[s] = state
		}
		for _, o := range t.Pinners {
			if o == s || health[o] == "" {
				continue
			}
			state := evaluate(expected[o], head)
			if state != health[o] {
				step.Lines = append(step.Lines, fmt.Sprintf("%s now %s %s ≠ %s → %s %s",
					t.apps(expected[o]), reports(expected[o]), head, t.describe(expected[o]), t.name(o), state))
				if state == Unhealthy && t.Issue == "" {
					t.Issue, t.IssueStage = issue(expected[o], head), o
				}
			}
			health[o] = state
		}
		step.Head = head
		step.Health = map[string]string{}
		for _, p := range t.Pinners {
			step.Health[p] = cmp.Or(health[p], NotPromoted)
		}
		t.Steps = append(t.Steps, step)
	}
	return t, true
}

// evaluate is Kargo's verdict on a Stage's pins when the pointer is at head:
// Healthy when every pinned source reports what the Stage expects.
func evaluate(exps []expectation, head string) string {
	state := Healthy
	for _, e := range exps {
		switch {
		case e.class == "literal":
			return Unhealthy
		case e.class == "expression" || e.value == "":
			state = Unknown
		case e.value != head:
			return Unhealthy
		}
	}
	return state
}

// issue renders Kargo's health issue for the first Application whose pinned
// sources do not report what the Stage expects.
func issue(exps []expectation, head string) string {
	for _, e := range exps {
		if evaluate([]expectation{e}, head) != Unhealthy {
			continue
		}
		app := e.pin.ApplicationRef
		var issues []string
		for _, x := range exps {
			if x.pin.Application != e.pin.Application || evaluate([]expectation{x}, head) != Unhealthy {
				continue
			}
			want := x.value
			if x.class != "literal" {
				want = "<SHA of " + want + ">"
			}
			issues = append(issues, fmt.Sprintf("Source %d with RepoURL %s of Application %q in namespace %q does not match the desired revision %q",
				x.pin.Source, x.pin.RepoURL, app.Name, app.Namespace, want))
		}
		return fmt.Sprintf("Not all sources of Application %q in namespace %q are synced to the desired revisions. Issues: %s.",
			app.Name, app.Namespace, strings.Join(issues, "; "))
	}
	return ""
}

// describe says what a Stage expects: "A", `"main" (a name)`, "a revision flipflop cannot know".
func (t *Timeline) describe(exps []expectation) string {
	var parts []string
	for _, e := range exps {
		var s string
		switch {
		case e.class == "literal":
			s = fmt.Sprintf("%s (a name, never the commit SHA Argo CD reports)", safetext.Quote(e.value))
		case e.class == "expression" || e.value == "":
			s = "a revision flipflop cannot know"
		default:
			s = e.value
		}
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// apps lists the Applications of a Stage's pins.
func (t *Timeline) apps(exps []expectation) string {
	var names []string
	for _, e := range exps {
		n := t.name(e.pin.Application)
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

func reports(exps []expectation) string {
	apps := map[string]bool{}
	for _, e := range exps {
		apps[e.pin.Application] = true
	}
	if len(apps) > 1 {
		return "report"
	}
	return "reports"
}

// name is how a Stage or Application is shown: its name when every Stage (or
// every pinned Application) of the timeline shares one namespace, else its key;
// each part quoted when Kubernetes would reject it (safetext.Name).
func (t *Timeline) name(key string) string {
	return displayKey(t.label(key))
}

// label is name before escaping.
func (t *Timeline) label(key string) string {
	if n, ok := t.names[key]; ok {
		return n
	}
	return key
}

// displayKey escapes a "namespace/name" key, or a bare name, for display.
func displayKey(k string) string {
	if ns, name, ok := strings.Cut(k, "/"); ok {
		return safetext.Name(ns) + "/" + safetext.Name(name)
	}
	return safetext.Name(k)
}

func displayNames(stages []string, pins []evaluator.Pin, key string) map[string]string {
	names := map[string]string{}
	short := func(keys []string) {
		ns := map[string]bool{}
		for _, k := range keys {
			ns[namespaceOf(k)] = true
		}
		if len(ns) != 1 {
			return
		}
		for _, k := range keys {
			names[k] = k[strings.Index(k, "/")+1:]
		}
	}
	short(stages)
	var apps []string
	for _, p := range pins {
		if p.Pointer.Key == key && !slices.Contains(apps, p.Application) {
			apps = append(apps, p.Application)
		}
	}
	short(apps)
	// A Stage and an Application may not share a display name.
	for _, a := range apps {
		for _, s := range stages {
			if names[a] != "" && names[a] == names[s] {
				names[a] = a
			}
		}
	}
	return names
}

func namespaceOf(key string) string {
	if i := strings.Index(key, "/"); i >= 0 {
		return key[:i]
	}
	return ""
}

func union(pins map[string][]evaluator.Pin, writes map[string]bool) map[string]bool {
	out := maps.Clone(writes)
	for s := range pins {
		out[s] = true
	}
	return out
}

// letters names commit n (1-based): A … Z, AA, AB, …
func letters(n int) string {
	s := ""
	for n > 0 {
		n--
		s = string(rune('A'+n%26)) + s
		n /= 26
	}
	return s
}

// stageDepths orders Stages along their pipelines: a Stage that takes Freight
// only from its origin is at depth 0, one that takes it from upstream Stages one
// deeper than the deepest of them. Keys are "namespace/name".
func stageDepths(objs []evaluator.Object) map[string]int {
	upstream := map[string][]string{}
	for _, o := range objs {
		if o.Kind != "Stage" || !strings.HasPrefix(o.APIVersion, "kargo.akuity.io/") {
			continue
		}
		key := o.Namespace + "/" + o.Name
		upstream[key] = nil
		v, err := ast.JSON(o.Value)
		if err != nil {
			continue
		}
		spec, _ := v.(map[string]any)["spec"].(map[string]any)
		reqs, _ := spec["requestedFreight"].([]any)
		for _, r := range reqs {
			sources, _ := r.(map[string]any)["sources"].(map[string]any)
			ups, _ := sources["stages"].([]any)
			for _, u := range ups {
				if name, ok := u.(string); ok {
					upstream[key] = append(upstream[key], o.Namespace+"/"+name)
				}
			}
		}
	}
	depth := map[string]int{}
	visiting := map[string]bool{}
	var visit func(string) int
	visit = func(k string) int {
		if d, ok := depth[k]; ok {
			return d
		}
		if visiting[k] {
			return 0 // a cycle: Kargo rejects these, so any order will do
		}
		visiting[k] = true
		d := 0
		for _, u := range upstream[k] {
			if _, known := upstream[u]; known {
				d = max(d, visit(u)+1)
			}
		}
		visiting[k] = false
		depth[k] = d
		return d
	}
	for k := range upstream {
		visit(k)
	}
	return depth
}
