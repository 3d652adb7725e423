package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

const (
	head = "2222222222222222222222222222222222222222"
	old  = "1111111111111111111111111111111111111111"
)

// load reads files relative to the repository root.
func load(t *testing.T, paths ...string) []evaluator.Object {
	t.Helper()
	var full []string
	for _, p := range paths {
		full = append(full, filepath.Join("..", "..", p))
	}
	objs, errs := (&loader.Loader{}).Load(full)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}

// loadYAML reads a document written by the test.
func loadYAML(t *testing.T, doc string) []evaluator.Object {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, errs := (&loader.Loader{}).Load([]string{path})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}

// sharedEvaluator compiles the policies once for all tests.
var sharedEvaluator = sync.OnceValues(func() (*evaluator.Evaluator, error) {
	return evaluator.New(context.Background(), evaluator.Settings{})
})

// The rules whose findings explain mismatches, by the kind of contradiction
// their METADATA names.
const (
	sharedBranch = "shared-branch-contradiction"
	sharedApp    = "shared-application"
	foreignPush  = "foreign-branch-writer"
	unreachable  = "unreachable-desired-revision"
)

// input evaluates the configuration statically, as the CLI does, and adds
// the status objects for the diagnosis.
func input(t *testing.T, config []evaluator.Object, status ...evaluator.Object) Input {
	t.Helper()
	ev, err := sharedEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	rep, m, err := ev.Analyze(context.Background(), config)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Objects: append(slices.Clone(config), status...), Findings: rep.Findings, Model: m, Rules: ev.Rules()}
}

func remediation(in Input, rule string) string {
	for _, r := range in.Rules {
		if r.ID == rule {
			return r.Remediation
		}
	}
	return ""
}

func only(t *testing.T, rep *Report) Diagnosis {
	t.Helper()
	if len(rep.Diagnoses) != 1 {
		t.Fatalf("%d diagnoses, want 1: %+v", len(rep.Diagnoses), rep.Diagnoses)
	}
	return rep.Diagnoses[0]
}

// The live flip-flop: acme/qa Unhealthy, acme/dev holds main's head.
func TestSharedBranchFlipFlop(t *testing.T) {
	in := input(t, load(t, "examples/contradiction"), load(t, "internal/diagnose/testdata/flipflop-status.yaml")...)
	rep := Diagnose(in)
	d := only(t, rep)
	if d.Stage != "acme/qa" || d.Cause != sharedBranch || !d.Contradiction || d.Evidence != EvidenceConfig {
		t.Errorf("diagnosis %+v", d)
	}
	if d.Head != head || !slices.Equal(d.HeadHeldBy, []string{"acme/dev"}) || d.Pointer != "github.com/acme/deploy @ main" {
		t.Errorf("head %q held by %v, pointer %q", d.Head, d.HeadHeldBy, d.Pointer)
	}
	if len(d.Mismatches) != 1 || d.Mismatches[0] != (Mismatch{Application: "argocd/qa", RepoURL: "https://github.com/acme/deploy.git", Desired: old, Observed: head, SyncStatus: "Synced", AppHealth: "Healthy"}) {
		t.Errorf("mismatches %+v", d.Mismatches)
	}
	if len(d.Stages) != 2 || d.Stages[0].Stage != "acme/dev" || !d.Stages[0].HoldsHead || d.Stages[0].Health != "Healthy" ||
		d.Stages[1].Stage != "acme/qa" || d.Stages[1].HoldsHead || d.Stages[1].Health != "Unhealthy" {
		t.Errorf("stages %+v", d.Stages)
	}
	if d.Remediation == "" || d.Remediation != remediation(in, sharedBranch) {
		t.Errorf("remediation %q", d.Remediation)
	}
	if !strings.Contains(d.Message, "the promotion of acme/dev moved github.com/acme/deploy @ main to "+head) || d.Promotion != "qa.01j1111" {
		t.Errorf("message %q", d.Message)
	}
	if rep.Summary != (Summary{Stages: 2, WithStatus: 2, WithHealth: 2, Unhealthy: 1, Mismatch: 1, Contradictions: 1}) {
		t.Errorf("summary %+v", rep.Summary)
	}
	// A Stage read from the cluster is named by its source.
	if d.Resource.Kind != "Stage" || d.Resource.Name != "qa" {
		t.Errorf("resource %+v", d.Resource)
	}
}

// Main moved to a commit no Stage promoted: still the contradiction, and the
// message says nobody holds the head.
func TestSharedBranchForeignHead(t *testing.T) {
	status := strings.ReplaceAll(readFile(t, "testdata/flipflop-status.yaml"), `revision: "`+head+`"`, `revision: "3333333333333333333333333333333333333333"`)
	in := input(t, load(t, "examples/contradiction"), loadYAML(t, status)...)
	d := only(t, Diagnose(in))
	if d.Cause != sharedBranch || len(d.HeadHeldBy) != 0 || d.Head != "3333333333333333333333333333333333333333" ||
		!strings.Contains(d.Message, "No Stage's last Promotion pinned the head") {
		t.Errorf("diagnosis %+v", d)
	}
}

// Without a static finding (the model could not tell), the live status alone
// shows the flip-flop: another Stage pinned exactly the revision reported.
func TestSharedBranchFromStatusOnly(t *testing.T) {
	in := input(t, nil, load(t, "internal/diagnose/testdata/flipflop-status.yaml")...)
	d := only(t, Diagnose(in))
	if d.Cause != sharedBranch || d.Evidence != EvidenceStatus || !slices.Equal(d.HeadHeldBy, []string{"acme/dev"}) || d.Remediation == "" {
		t.Errorf("diagnosis %+v", d)
	}
}

// Stage branches (no contradiction), and a mismatch nobody explains: other.
func TestOther(t *testing.T) {
	status := readFile(t, "testdata/flipflop-status.yaml")
	// acme/dev pinned something else, so nothing holds the head.
	status = strings.Replace(status, `desiredRevisions: ["`+head+`"]`, `desiredRevisions: ["4444444444444444444444444444444444444444"]`, 1)
	in := input(t, load(t, "examples/fix-stage-branches"), loadYAML(t, status)...)
	rep := Diagnose(in)
	d := only(t, rep)
	if d.Cause != CauseOther || d.Contradiction || d.Remediation != "" || !strings.Contains(d.Message, "No configuration contradiction explains it") {
		t.Errorf("diagnosis %+v", d)
	}
	if rep.Summary.Contradictions != 0 || rep.Summary.Mismatch != 1 {
		t.Errorf("summary %+v", rep.Summary)
	}
}

// A desired revision that is a ref never matches a resolved SHA.
func TestUnreachableFromStatus(t *testing.T) {
	status := strings.ReplaceAll(readFile(t, "testdata/flipflop-status.yaml"), old, "main")
	in := input(t, nil, loadYAML(t, status)...)
	d := only(t, Diagnose(in))
	if d.Cause != unreachable || !d.Contradiction || !strings.Contains(d.Message, `"main" is not a commit`) {
		t.Errorf("diagnosis %+v", d)
	}
}

// Without the Applications, the revision comes from the copy Kargo keeps in
// the Stage's health output (a JSON value, or a string holding one).
func TestObservedFromHealthOutput(t *testing.T) {
	var stages []evaluator.Object
	for _, o := range load(t, "internal/diagnose/testdata/flipflop-status.yaml") {
		if o.Kind == "Stage" {
			stages = append(stages, o)
		}
	}
	d := only(t, Diagnose(input(t, nil, stages...)))
	if d.Mismatches[0].Observed != head {
		t.Errorf("observed %q", d.Mismatches[0].Observed)
	}
	out := healthOutput(json.RawMessage(`"[{\"applicationStatuses\":[{\"Namespace\":\"argocd\",\"Name\":\"qa\",\"sync\":{\"revisions\":[\"a\",\"b\"]}}]}]"`))
	if a := out["argocd/qa"]; a.revision(1) != "b" || a.revision(2) != "" {
		t.Errorf("string output: %+v", out)
	}
}

// Unhealthy for another reason, Healthy, or no status: no diagnosis.
func TestNotAMismatch(t *testing.T) {
	in := input(t, nil, loadYAML(t, `
apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: a, namespace: p}
status:
  health: {status: Unhealthy, issues: ['Argo CD Application "x" in namespace "argocd" has health status Degraded']}
---
apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: b, namespace: p}
status: {health: {status: Healthy}}
---
apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: c, namespace: p}
spec: {}
`)...)
	rep := Diagnose(in)
	if len(rep.Diagnoses) != 0 || rep.Summary != (Summary{Stages: 3, WithStatus: 2, WithHealth: 2, Unhealthy: 1}) {
		t.Errorf("report %+v", rep)
	}
}

func TestParseIssues(t *testing.T) {
	ms := parseIssues([]string{`Not all sources of Application "multi" in namespace "apps" are synced to the desired revisions. Issues: Source 0 with RepoURL https://git.example/a.git of Application "multi" in namespace "apps" does not match the desired revision "aaa"; Source 2 with RepoURL https://git.example/b.git of Application "multi" in namespace "apps" does not match the desired revision "bbb".`})
	want := []Mismatch{
		{Application: "apps/multi", Source: 0, RepoURL: "https://git.example/a.git", Desired: "aaa"},
		{Application: "apps/multi", Source: 2, RepoURL: "https://git.example/b.git", Desired: "bbb"},
	}
	if !slices.Equal(ms, want) {
		t.Errorf("got %+v", ms)
	}
}

func TestWrite(t *testing.T) {
	in := input(t, load(t, "examples/contradiction"), load(t, "internal/diagnose/testdata/flipflop-status.yaml")...)
	rep := Diagnose(in)
	rep.Errors = append(rep.Errors, evaluator.LoadError{Path: "cluster: stages.kargo.akuity.io in namespace x", Message: "forbidden (403): no"})
	var text bytes.Buffer
	if err := Write(&text, "text", rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FLIP-FLOP  Stage acme/qa  shared-branch-contradiction",
		"pointer    github.com/acme/deploy @ main",
		"head       " + head + "  (pinned by acme/dev)",
		"holds the head",
		"Kargo says",
		"does not match the desired revision",
		"fix\n    Give each Stage a pointer only it moves",
		"ERROR  could not read cluster: stages.kargo.akuity.io in namespace x: forbidden (403): no",
		"2 Stage(s) read, 2 with a health status: 1 Unhealthy, 1 on a desired-revision mismatch, 1 explained by a configuration contradiction",
		"incomplete: 1 input(s) could not be read",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := Write(&js, "json", rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Diagnoses []map[string]any `json:"diagnoses"`
		Errors    []map[string]any `json:"errors"`
		Summary   map[string]int   `json:"summary"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Diagnoses) != 1 || back.Diagnoses[0]["cause"] != sharedBranch || back.Diagnoses[0]["head"] != head ||
		back.Errors[0]["file"] != "cluster: stages.kargo.akuity.io in namespace x" || back.Summary["contradictions"] != 1 {
		t.Errorf("json: %s", js.String())
	}
	// Empty reports keep arrays.
	js.Reset()
	Write(&js, "json", Diagnose(Input{}))
	if !strings.Contains(js.String(), `"diagnoses": []`) || !strings.Contains(js.String(), `"errors": []`) {
		t.Errorf("empty json: %s", js.String())
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every kind of contradiction diagnose knows is named by exactly one rule of
// the bundle (METADATA custom.diagnose), and no rule names another.
func TestKindsComeFromMetadata(t *testing.T) {
	ev, err := sharedEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	named := map[string][]string{}
	for _, r := range ev.Rules() {
		if r.Diagnose != "" {
			named[r.Diagnose] = append(named[r.Diagnose], r.ID)
		}
	}
	for _, k := range kinds {
		if len(named[k]) != 1 {
			t.Errorf("kind %s is named by rules %v, want exactly one", k, named[k])
		}
		delete(named, k)
	}
	if len(named) > 0 {
		t.Errorf("rules name kinds diagnose does not know: %v", named)
	}
}
