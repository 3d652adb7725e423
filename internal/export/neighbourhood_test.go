package export

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// reviewQuery is what a Gatekeeper review finds about input.review (in audit,
// with no operation) twice: over the adapter's related objects (c1), and over
// every inventory object (c2, input.full).
const reviewQuery = `docs := data.lib.flipflop.gatekeeper.docs with data.inventory as input.inventory
fs1 := data.flipflop.all_findings with input as docs
c1 := data.lib.flipflop.gatekeeper.candidates(fs1) with data.inventory as input.inventory
fs2 := data.flipflop.all_findings with input as input.full
c2 := data.lib.flipflop.gatekeeper.candidates(fs2) with data.inventory as input.inventory
n := count(docs)
narrowed := [x | x := data.lib.flipflop.gatekeeper.narrowed with data.inventory as input.inventory]`

// A review reads only the reviewed object's neighbourhood in the inventory
// (the objects on its repositories' pointers, by cheap tests; see the
// adapter), and must find exactly what it would find reading the whole
// inventory: for every Stage, Application, ApplicationSet and task of every
// example, rule sample and test estate, of every real repository in
// ../shared/corpus, and of generated estates of every benchmark shape, the
// findings of the admission rules (those Gatekeeper templates are generated
// for) involving the object are the same either way.
func TestReviewReadsItsNeighbourhoodOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("reviews several hundred objects twice")
	}
	// Under -race it skips: its goroutines only evaluate one prepared query
	// side by side, what the evaluator's parallel evaluation does under the
	// detector in its own package's race run.
	race.Sequential(t)
	pq, err := rego.New(policyQuery(t, reviewQuery)...).PrepareForEval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The corpus (../shared/corpus beside the repository) is read when
	// present; a real-world repository's at-<sha> folders (an older commit
	// defining the same objects: one cluster never holds both) are estates
	// of their own, as the corpus README checks them.
	var dirs []string
	for _, g := range []string{"../../examples/*", "../../testdata/*", "../../policies/rules/*/samples/*/*", "../../../shared/corpus/real/*", "../../../shared/corpus/real-world/*"} {
		m, _ := filepath.Glob(g)
		for _, d := range m {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				dirs = append(dirs, d)
				commits, _ := filepath.Glob(filepath.Join(d, "at-*"))
				dirs = append(dirs, commits...)
			}
		}
	}
	// The reviews are independent evaluations of one prepared query (safe
	// for concurrent use): they are listed here, estate by estate, and run
	// GOMAXPROCS at a time below.
	type review struct {
		name string
		inv  map[string]any
		kept []reviewed
		i    int
	}
	var jobs []review
	// check lists reviews of up to n objects of an estate, evenly spread.
	check := func(name string, objs []evaluator.Object, n int) {
		inv, kept := inventory(t, objs)
		step := max(1, len(kept)/n)
		for i := 0; i < len(kept); i += step {
			jobs = append(jobs, review{name, inv, kept, i})
		}
	}
	for _, d := range dirs {
		l := &loader.Loader{Exclude: []loader.Exclude{{Pattern: "at-*/", Dir: d, Source: "test"}}}
		objs, _ := l.Load([]string{d})
		check(d, objs, 6)
	}
	for _, shape := range estate.Shapes {
		files, err := estate.Shape(shape, 12)
		if err != nil {
			t.Fatal(err)
		}
		check("shape "+shape, load(t, files), 12)
	}
	files, _ := estate.Generate(estate.Options{Objects: 300, Seed: 1})
	check("bench estate", load(t, files), 12)

	// related[j] is the number of objects review j read, -1 when it failed.
	related := make([]int, len(jobs))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := int(next.Add(1) - 1); j < len(jobs); j = int(next.Add(1) - 1) {
				job := jobs[j]
				r := job.kept[job.i]
				related[j] = -1
				in := map[string]any{
					"review":    map[string]any{"object": r.obj},
					"inventory": job.inv,
					"full":      fullDocs(job.kept, job.i),
				}
				rs, err := pq.Eval(context.Background(), rego.EvalInput(in))
				if err != nil || len(rs) == 0 {
					t.Errorf("%s: reviewing %s: %v (no result: %v)", job.name, r.id, err, len(rs) == 0)
					continue
				}
				b := rs[0].Bindings
				c1, _ := json.Marshal(admitted(b["c1"]))
				c2, _ := json.Marshal(admitted(b["c2"]))
				if string(c1) != string(c2) {
					t.Errorf("%s: reviewing %s (narrowed %v, %v related of %d):\nneighbourhood: %s\nwhole inventory: %s", job.name, r.id, b["narrowed"], b["n"], len(job.kept), c1, c2)
				}
				related[j] = 0
				if n, err := b["n"].(json.Number).Int64(); err == nil {
					related[j] = int(n)
				}
			}
		}()
	}
	wg.Wait()
	reviews, corpus, read, total := 0, 0, 0, 0
	for j, job := range jobs {
		if related[j] < 0 {
			continue
		}
		reviews++
		if strings.Contains(job.name, "/shared/corpus/") {
			corpus++
		}
		read += related[j]
		total += len(job.kept)
	}
	t.Logf("%d reviews (%d of corpus repositories) read %d related objects in all, of %d in their inventories", reviews, corpus, read, total)
	if reviews-corpus < 200 {
		t.Errorf("only %d reviews outside the corpus: the estates were not found", reviews-corpus)
	}
	if corpus == 0 {
		t.Log("../shared/corpus is absent: its repositories were not reviewed")
	}
}

// admissionRules are the rules Gatekeeper templates are generated for.
var admissionRules = func() map[string]bool {
	rules, err := evaluator.BundleRules()
	if err != nil {
		panic(err)
	}
	m := map[string]bool{}
	for _, r := range rules {
		if r.Admission {
			m[r.ID] = true
		}
	}
	return m
}()

// admitted keeps the findings of admission rules.
func admitted(v any) []any {
	var out []any
	fs, _ := v.([]any)
	for _, f := range fs {
		if m, ok := f.(map[string]any); ok && admissionRules[fmt.Sprint(m["rule"])] {
			out = append(out, f)
		}
	}
	return out
}

type reviewed struct {
	id  string
	obj map[string]any
}

var reviewedKinds = map[string]bool{"Stage": true, "Application": true, "ApplicationSet": true, "PromotionTask": true, "ClusterPromotionTask": true, "Warehouse": true}

// inventory builds Gatekeeper's synced inventory of objs (a namespace given to
// an object a file leaves without one, as kubectl apply would), and lists the
// objects a review can be of.
func inventory(t *testing.T, objs []evaluator.Object) (map[string]any, []reviewed) {
	t.Helper()
	inv := map[string]any{"namespace": map[string]any{}, "cluster": map[string]any{}}
	var kept []reviewed
	for _, o := range objs {
		if !reviewedKinds[o.Kind] {
			continue
		}
		v, err := ast.JSON(o.Value)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := v.(map[string]any)
		if !ok || o.Name == "" || o.APIVersion == "" {
			continue
		}
		md, _ := m["metadata"].(map[string]any)
		var byKind map[string]any
		if o.Kind == "ClusterPromotionTask" {
			byKind = sub(inv["cluster"].(map[string]any), o.APIVersion)
		} else {
			ns := o.Namespace
			if ns == "" {
				ns = "default"
				if strings.HasPrefix(o.APIVersion, "argoproj.io/") {
					ns = "argocd"
				}
				md["namespace"] = ns
			}
			byKind = sub(sub(inv["namespace"].(map[string]any), ns), o.APIVersion)
		}
		names := sub(byKind, o.Kind)
		if _, dup := names[o.Name]; dup {
			continue // Gatekeeper holds one object per key
		}
		names[o.Name] = m
		kept = append(kept, reviewed{id: fmt.Sprintf("%s %v/%s", o.Kind, md["namespace"], o.Name), obj: m})
	}
	return inv, kept
}

func sub(m map[string]any, k string) map[string]any {
	if v, ok := m[k].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[k] = v
	return v
}

// fullDocs is the model's input when a review reads the whole inventory: the
// reviewed object, then every other object.
func fullDocs(kept []reviewed, i int) []any {
	docs := []any{map[string]any{"path": "admission review", "contents": kept[i].obj}}
	for j, r := range kept {
		if j != i {
			docs = append(docs, map[string]any{"path": "inventory", "contents": r.obj})
		}
	}
	return docs
}

func load(t *testing.T, files []estate.File) []evaluator.Object {
	t.Helper()
	var objs []evaluator.Object
	for _, f := range files {
		o, errs := loader.LoadBytes(f.Path, f.Content)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		objs = append(objs, o...)
	}
	return objs
}
