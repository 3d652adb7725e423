package digest

import (
	"context"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/fix"
	"github.com/flipflop-dev/flipflop/internal/graph"
	"github.com/flipflop-dev/flipflop/internal/race"
)

func TestSentences(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"One. Two. Three.", 2, "One. Two."},
		{"Track github.com/acme/deploy @ main. Only one commit. More.", 2, "Track github.com/acme/deploy @ main. Only one commit."},
		{"Ways: 1. Stage branches. 2. No pin. 3. Other.", 2, "Ways: 1. Stage branches. 2. No pin."},
		{"No end", 2, "No end"},
		{"Why? Because! Then.", 2, "Why? Because!"},
		{"  padded.  ", 1, "padded."},
	} {
		if got := Sentences(c.in, c.n, 1000); got != c.want {
			t.Errorf("Sentences(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := Sentences(strings.Repeat("é", 50), 2, 10); got != strings.Repeat("é", 9)+"…" {
		t.Errorf("not cut by runes: %q", got)
	}
}

// On the seed contradiction, the error's digest holds its picture (the same
// nodes as the estate's graph), its why in two sentences, and the ways out
// fix offers, stage-branches first with its command.
func TestBuildContradiction(t *testing.T) {
	race.Sequential(t)
	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := (&loader.Loader{}).Load([]string{"../../examples/contradiction"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	report, model, err := ev.Analyze(ctx, objs, evaluator.Detailed())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := fix.New(objs, report, model, fix.Options{Rules: ev.Rules(), Dir: "../.."})
	if err != nil {
		t.Fatal(err)
	}
	d := Build(Input{Report: report, Model: model, Plan: plan, Command: func(w fix.Way) string { return "flipflop fix --way " + string(w) + " X" }})
	if len(d.Items) != len(report.Findings) || d.Estate == nil {
		t.Fatalf("%d items for %d findings", len(d.Items), len(report.Findings))
	}
	it := d.Items[0]
	if it.Finding.Rule != "shared-branch-contradiction" {
		t.Fatalf("first item %s", it.Finding.Rule)
	}
	if it.Picture == nil || len(it.Picture.Nodes) != 5 || len(it.Picture.Edges) != 6 {
		t.Fatalf("picture %+v", it.Picture)
	}
	if got := graph.Mermaid(it.Picture); got != graph.Mermaid(d.Estate) {
		t.Errorf("the contradiction's picture is not the estate's (the whole estate is the contradiction):\n%s", got)
	}
	if strings.Count(it.Why, ". ") != 1 || !strings.HasSuffix(it.Why, "Synced and Healthy.") {
		t.Errorf("why %q", it.Why)
	}
	rec := it.Recommended()
	if rec == nil || rec.Way != fix.StageBranches || rec.Command != "flipflop fix --way stage-branches X" {
		t.Errorf("recommended %+v", rec)
	}
	if len(it.Ways) != len(fix.Ways()) {
		t.Errorf("ways %+v", it.Ways)
	}
	// The warning (shared-write-branch) is not fix's: no way out.
	if w := d.Items[1]; w.Finding.Rule != "shared-write-branch" || len(w.Ways) != 0 || w.Picture == nil {
		t.Errorf("warning item %+v", w)
	}

	// Without a model and a plan: no picture, no way.
	bare := Build(Input{Report: report, NoFix: "stdin"})
	if bare.Items[0].Picture != nil || len(bare.Items[0].Ways) != 0 || bare.NoFix != "stdin" {
		t.Errorf("bare digest %+v", bare.Items[0])
	}
}

// A picture larger than MaxPictureNodes is left out and counted, and labels
// are cut.
func TestPictureBounds(t *testing.T) {
	m := &evaluator.Model{}
	f := evaluator.Finding{Rule: "r", Severity: "error", Pointer: "r@main"}
	for i := range MaxPictureNodes + 5 {
		key := "p/" + strings.Repeat("s", 100) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		m.Stages = append(m.Stages, evaluator.ModelStage{Key: key})
		f.Stages = append(f.Stages, key)
	}
	d := Build(Input{Report: &evaluator.Report{Findings: []evaluator.Finding{f}}, Model: m})
	if it := d.Items[0]; it.Picture != nil || it.PictureNodes != MaxPictureNodes+5 {
		t.Errorf("picture of %d nodes drawn (%d)", it.PictureNodes, len(it.Picture.Nodes))
	}
	f.Stages = f.Stages[:3]
	d = Build(Input{Report: &evaluator.Report{Findings: []evaluator.Finding{f}}, Model: m})
	if it := d.Items[0]; it.Picture == nil || len([]rune(it.Picture.Nodes[0].Label)) != MaxLabel {
		t.Errorf("labels not cut: %+v", it.Picture)
	}
	if len([]rune(d.Estate.Nodes[0].Label)) == MaxLabel {
		t.Error("cutting a picture's labels cut the estate's")
	}
}
