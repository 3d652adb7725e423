package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// laughStage is a Stage whose aliases expand to laughValues values: far under
// any per-document limit, but many of them add up.
func laughStage(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: %s, namespace: other}\nspec:\n", name)
	for _, l := range strings.Split(strings.TrimSuffix(billionLaughs(5), "\n"), "\n")[2:] {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// laughValues is what the aliases of one laughStage expand to.
const laughValues = 135740

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// laughFiles writes n files of one laughStage each beside a copy of
// examples/contradiction, and returns the directory and the bytes written.
func laughFiles(t *testing.T, n int) (string, int) {
	t.Helper()
	dir := writeHostile(t, "plain.yaml", []byte("kind: Plain\n"))
	size := 0
	for _, f := range []string{"kargo.yaml", "argocd.yaml", "plain.yaml"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		size += int(fi.Size())
	}
	for i := range n {
		s := laughStage(fmt.Sprintf("laugh-%03d", i))
		size += len(s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("laugh-%03d.yaml", i)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, size
}

// Alias expansion is bounded over the run, not per document or per file:
// files of one Stage each, every one far under what a document may expand
// to, share one budget (AliasValuesBase, and AliasValuesPerByte for each
// byte read). Those it pays for are read; each one after is an error at its
// file and line, and every other file's objects are kept: the contradiction
// of examples/contradiction is still found. Twice the files cost no more
// than the budget: the bytes allocated grow by what the second half's bytes
// bring, where each file used to expand in full (33 KB of Stages spread over
// files took 61-73 s and 2.8 GB).
func TestAliasExpansionBoundedOverFiles(t *testing.T) {
	race.Sequential(t)
	load := func(n int) (Loaded, int, uint64) {
		dir, size := laughFiles(t, n)
		var r Loaded
		alloc := allocated(func() { r = (&Loader{}).LoadAll([]string{dir}) })
		return r, size, alloc
	}
	const n = 24
	r, size, small := load(n)
	_, _, large := load(2 * n)

	// Objects: the contradiction's (Stages dev, qa; Applications dev, qa;
	// the Warehouse) and the laughing Stages the budget paid for.
	fits := (1_000_000 + size) / laughValues
	laughing, cut := 0, 0
	for _, o := range r.Objects {
		if strings.HasPrefix(o.Name, "laugh-") {
			laughing++
		}
	}
	for _, e := range r.Errors {
		if !strings.HasPrefix(filepath.Base(e.Path), "laugh-") || e.Line < 5 || !strings.Contains(e.Message, "aliases expand to more values than are left of the run's budget") {
			t.Errorf("error %+v: want a laughing file, at an alias's line, over the run's budget", e)
		}
		cut++
	}
	if laughing > fits || laughing+cut != n {
		t.Errorf("%d of %d laughing Stages read, %d errors: the budget pays for %d", laughing, n, cut, fits)
	}
	contradictionFound(t, r.Objects)
	// What the budget pays for is at most 1,000,000 values and one per byte:
	// about 100 MB allocated here. Twice the files add their bytes' share.
	t.Logf("allocated %d MB for %d files, %d MB for %d", small>>20, n, large>>20, 2*n)
	if large > small+small/4 {
		t.Errorf("allocated %d MB for %d files, %d MB for %d: alias expansion grows with the files, not with their bytes", small>>20, n, large>>20, 2*n)
	}
}

// Standard input is a file of the run: its aliases draw on the same budget.
func TestAliasBudgetCoversStandardInput(t *testing.T) {
	race.Sequential(t)
	dir, _ := laughFiles(t, 8)
	var in bytes.Buffer
	for i := range 8 {
		fmt.Fprintf(&in, "---\n%s", laughStage(fmt.Sprintf("stdin-%d", i)))
	}
	r := (&Loader{Stdin: &in}).LoadAll([]string{dir, "-"})
	fromStdin := 0
	for _, o := range r.Objects {
		if o.Path == "<stdin>" {
			fromStdin++
		}
	}
	var stdinErrors []evaluator.LoadError
	for _, e := range r.Errors {
		if e.Path == "<stdin>" {
			stdinErrors = append(stdinErrors, e)
		}
	}
	// 8 files and 8 documents of about 136,000 values: no more than 7 of
	// them fit in 1,000,000 values and the bytes' share, and the files
	// come first.
	if fromStdin != 0 || len(stdinErrors) != 8 {
		t.Errorf("%d Stages read from standard input, errors %v: the files before it spent the run's budget", fromStdin, stdinErrors)
	}
}

// paramsAppSet is an ApplicationSet whose git files generator reads
// params/*.yaml of the checkout.
const paramsAppSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: files, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: https://github.com/acme/params.git
      revision: HEAD
      files: [{path: "params/*.yaml"}]
  template:
    metadata: {name: 'p-{{.path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://github.com/acme/deploy.git, targetRevision: main, path: x}
      destination: {server: https://kubernetes.default.svc, namespace: x}
`

// The files git generators read share the run's alias budget too: parameter
// files of about 136,000 values each, far under any per-file limit, stop
// their generator with an error naming the file and line once the budget is
// spent, and twice the files cost no more (40 files of 228 bytes took 2.0 GB,
// each expanding to what one document could).
func TestAliasExpansionBoundedOverGitFiles(t *testing.T) {
	race.Sequential(t)
	expand := func(n int) ([]evaluator.LoadError, uint64) {
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, "params"), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(root, "params", fmt.Sprintf("p%03d.yaml", i)), []byte(billionLaughs(5)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		objs, errs := LoadBytes("appset.yaml", []byte(paramsAppSet))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var genErrs []evaluator.LoadError
		alloc := allocated(func() { _, genErrs = ExpandGitGenerators(objs, []RepoRoot{{Dir: root}}) })
		return genErrs, alloc
	}
	const n = 16
	errs, small := expand(n)
	_, large := expand(2 * n)
	// 7 files fit in 1,000,000 values; the eighth is cut at a4 (line 7).
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "git files generator: params/p007.yaml:7: aliases expand to more values than are left of the run's budget") {
		t.Errorf("errors %v: want the eighth parameters file over the run's budget", errs)
	}
	t.Logf("allocated %d MB for %d files, %d MB for %d", small>>20, n, large>>20, 2*n)
	if large > small+small/4 {
		t.Errorf("allocated %d MB for %d parameter files, %d MB for %d: alias expansion grows with the files, not with their bytes", small>>20, n, large>>20, 2*n)
	}
}
