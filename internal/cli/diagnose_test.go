package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/internal/diagnose"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// liveHead is the head of main in examples/live-status, which Stage acme/dev
// pinned; acme/qa pinned qaPin.
const (
	liveHead = "225361422845539e3c23c50ee7c0797bf4311ab1"
	qaPin    = "bfddbf9c11e16b9ee2f52c7d605090f9b5dd5a80"
)

// Manifests from Git hold no status: diagnose says that it needs one and how
// to get it, and exits 2 (nothing was diagnosed), where it printed "0 with a
// health status" and exited 0.
func TestDiagnoseFilesWithoutStatus(t *testing.T) {
	race.Sequential(t)
	stdout, stderr, code := run(t, "", "diagnose", "../../examples/contradiction")
	if code != ExitIncomplete {
		t.Errorf("exit %d, want %d", code, ExitIncomplete)
	}
	for _, want := range []string{
		"NO STATUS  none of the 2 Stages read has a status: there is nothing to diagnose.",
		"    " + liveDumpCommand + "\n",
		"    flipflop diagnose live.yaml\n",
		"    flipflop diagnose --cluster\n",
		"examples/live-status",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("standard output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.HasPrefix(stderr, "flipflop: nothing diagnosed: none of the 2 Stages read has a status") {
		t.Errorf("standard error: %s", stderr)
	}

	stdout, _, code = run(t, "", "diagnose", "-o", "json", "../../examples/contradiction")
	var rep diagnose.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if code != ExitIncomplete || rep.Summary != (diagnose.Summary{Stages: 2}) || !strings.Contains(rep.Note, liveDumpCommand) {
		t.Errorf("-o json: exit %d, summary %+v, note %q", code, rep.Summary, rep.Note)
	}

	// Files with Applications and no Stage: the same.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"argocd.yaml": readExample(t, "argocd.yaml")})
	stdout, _, code = run(t, "", "diagnose", dir)
	if code != ExitIncomplete || !strings.Contains(stdout, "NO STATUS  no Kargo Stage was read") {
		t.Errorf("Applications only: exit %d\n%s", code, stdout)
	}
}

// examples/live-status is a live dump of the contradiction's Stages and
// Applications: diagnose explains the flip-flop from it.
func TestDiagnoseLiveStatusExample(t *testing.T) {
	race.Sequential(t)
	stdout, stderr, code := run(t, "", "diagnose", "../../examples/live-status")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitFindings, stdout, stderr)
	}
	for _, want := range []string{
		"FLIP-FLOP  Stage acme/qa  shared-branch-contradiction\n",
		"  pointer    github.com/acme/deploy @ main\n",
		"  head       " + liveHead + "  (pinned by acme/dev)\n",
		"the promotion of acme/dev moved",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("standard output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "NO STATUS") || strings.Contains(stdout, "Stage acme/dev  shared") {
		t.Errorf("unexpected diagnosis:\n%s", stdout)
	}
	checkLiveVerdict(t, "../../examples/live-status")
}

// The README shows the start of diagnose's output on examples/live-status as
// it is.
func TestDiagnoseLiveStatusInREADME(t *testing.T) {
	race.Sequential(t)
	chdir(t, "../..")
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "$ flipflop diagnose examples/live-status\n"
	_, block, ok := strings.Cut(string(readme), prompt)
	block, _, _ = strings.Cut(block, "```")
	if !ok || block == "" {
		t.Fatalf("the README shows no %q", prompt)
	}
	stdout, _, _ := run(t, "", "diagnose", "examples/live-status")
	shown := strings.TrimSuffix(strings.TrimSuffix(block, "\n"), " ...")
	if !strings.HasPrefix(stdout, shown) {
		t.Errorf("the README shows\n%s\nbut diagnose prints\n%s", shown, stdout)
	}
}

// The same dump as kubectl writes it, one List of every object, diagnoses the
// same.
func TestDiagnoseKubectlList(t *testing.T) {
	race.Sequential(t)
	src, err := os.ReadFile("../../examples/live-status/live.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var items []any
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		items = append(items, doc)
	}
	list, err := sigsyaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "live.yaml")
	if err := os.WriteFile(file, list, 0o644); err != nil {
		t.Fatal(err)
	}
	checkLiveVerdict(t, file)
}

// checkLiveVerdict checks diagnose's JSON verdict on the live dump at path.
func checkLiveVerdict(t *testing.T, path string) {
	t.Helper()
	stdout, stderr, code := run(t, "", "diagnose", "-o", "json", path)
	if code != ExitFindings {
		t.Fatalf("%s: exit %d\n%s", path, code, stderr)
	}
	var rep diagnose.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary != (diagnose.Summary{Stages: 2, WithStatus: 2, WithHealth: 2, Unhealthy: 1, Mismatch: 1, Contradictions: 1}) || rep.Note != "" || len(rep.Errors) != 0 {
		t.Fatalf("%s: summary %+v, note %q, errors %v", path, rep.Summary, rep.Note, rep.Errors)
	}
	d := rep.Diagnoses[0]
	if d.Stage != "acme/qa" || d.Cause != "shared-branch-contradiction" || !d.Contradiction || d.Evidence != diagnose.EvidenceConfig ||
		d.Head != liveHead || len(d.HeadHeldBy) != 1 || d.HeadHeldBy[0] != "acme/dev" {
		t.Errorf("%s: diagnosis %+v", path, d)
	}
	if len(d.Mismatches) != 1 || d.Mismatches[0] != (diagnose.Mismatch{Application: "argocd/qa", RepoURL: "https://github.com/acme/deploy.git", Desired: qaPin, Observed: liveHead, SyncStatus: "Synced", AppHealth: "Healthy"}) {
		t.Errorf("%s: mismatches %+v", path, d.Mismatches)
	}
}
