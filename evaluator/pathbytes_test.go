package evaluator_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// A file name is bytes, not text: one that is not UTF-8 ("a\xff/kargo.yaml")
// comes back from the policies byte for byte, in findings, their messages and
// the model, and not as U+FFFD, which would name another file
// ("a\uFFFD/kargo.yaml", a directory a pull request can add beside it; fix
// patched that one).
func TestPathsKeepTheirBytes(t *testing.T) {
	race.Sequential(t)
	ctx := context.Background()
	var objs []evaluator.Object
	paths := map[string]bool{}
	for _, dir := range []string{"a\xff", "a\uFFFD", "b\xfe\xff"} {
		for _, name := range []string{"kargo.yaml", "argocd.yaml"} {
			src, err := os.ReadFile("../examples/contradiction/" + name)
			if err != nil {
				t.Fatal(err)
			}
			got, errs := loader.LoadBytes(dir+"/"+name, src)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			objs = append(objs, got...)
			paths[dir+"/"+name] = true
		}
	}
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, r evaluator.Resource) {
		t.Helper()
		if r.File != "" && !paths[r.File] {
			t.Errorf("%s names file %q, which was not read (read: %q)", what, r.File, keys(paths))
		}
	}
	report, model, err := ev.Analyze(ctx, objs, evaluator.Detailed())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range report.Findings {
		if f.Rule == "duplicate-object" && !strings.Contains(f.Message, "b\xfe\xff/") {
			t.Errorf("duplicate-object's message lost the file name's bytes: %q", f.Message)
		}
		for _, r := range f.Resources {
			check("finding "+f.Rule, r)
			seen[r.File] = true
		}
	}
	for p := range paths {
		if !seen[p] {
			t.Errorf("no finding names %q", p)
		}
	}
	for _, p := range model.Pins {
		check("pin", p.Entry.Ref)
		check("pin", p.AppEntry.Ref)
	}
	plain, err := ev.Evaluate(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plain.Findings {
		for _, r := range f.Resources {
			check("finding "+f.Rule, r)
		}
	}
	m, err := ev.Model(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Stages {
		check("stage", s.Ref)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
