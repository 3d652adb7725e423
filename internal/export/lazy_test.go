package export

import (
	"context"
	"fmt"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// A Gatekeeper review scans every synced object to find its neighbourhood,
// and must read of an unrelated object only what its tests look at.
// Gatekeeper's store holds Go values and OPA reads an object from it as a lazy
// value, converted to Rego field by field as rules read it; but OPA memoises
// a function call by its arguments, and hashing an object converts all of it.
// So a scan that hands an inventory object to a function converts every
// synced object whole, status included (a live Stage's freight history, a
// live Application's resource list). The scan hands functions the object's
// place in the inventory instead (adapter.rego, inv), and the related
// objects go to the model as what it reads of them (view), without their
// status. This test gives every inventory object a large status and requires
// that a review allocates about as much as without it, on the benchmark
// estate (few related objects) and on the branch shape (every Stage and
// Application on one branch of one repository: every object is related).
func TestReviewLeavesStatusUnread(t *testing.T) {
	race.Sequential(t)
	bench, _ := estate.Generate(estate.Options{Objects: 400, Seed: 1})
	branch, err := estate.Shape("branch", 60)
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string][]estate.File{"bench estate": bench, "branch shape": branch} {
		t.Run(name, func(t *testing.T) { reviewAllocs(t, load(t, files)) })
	}
}

// reviewAllocs compares the allocations of a review of objs' first Stage with
// and without a status on every inventory object.
func reviewAllocs(t *testing.T, objs []evaluator.Object) {
	allocs := func(status bool) float64 {
		inv, kept := inventory(t, objs)
		var stage map[string]any
		for _, r := range kept {
			if r.obj["kind"] == "Stage" && stage == nil {
				stage = r.obj
			}
			if status {
				r.obj["status"] = bigStatus()
			}
		}
		if stage == nil {
			t.Fatal("the estate has no Stage")
		}
		// The reviewed object is the admission request's, not the store's.
		review := map[string]any{}
		for k, v := range stage {
			if k != "status" {
				review[k] = v
			}
		}
		store := inmem.NewFromObject(map[string]any{"inventory": inv})
		pq, err := rego.New(append(policyQuery(t, `n := count(data.lib.flipflop.gatekeeper.docs)`), rego.Store(store))...).PrepareForEval(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]any{"review": map[string]any{"object": review}}
		var n any
		a := testing.AllocsPerRun(3, func() {
			rs, err := pq.Eval(context.Background(), rego.EvalInput(in))
			if err != nil || len(rs) == 0 {
				t.Fatalf("review: %v (no result: %v)", err, len(rs) == 0)
			}
			n = rs[0].Bindings["n"]
		})
		t.Logf("status %v: %.0f allocations a review, %v objects in its model's input of %d in the inventory", status, a, n, len(kept))
		return a
	}
	without, with := allocs(false), allocs(true)
	if with > 1.5*without {
		t.Errorf("a review allocates %.0f times with every inventory object carrying a status, %.0f without (%.2f×): the review converts statuses", with, without, with/without)
	}
}

// bigStatus is a status like a live Stage's: a freight history of 100 entries.
func bigStatus() map[string]any {
	var history []any
	for i := range 100 {
		history = append(history, map[string]any{
			"name":   fmt.Sprintf("freight-%03d", i),
			"origin": map[string]any{"kind": "Warehouse", "name": "w"},
			"commits": []any{map[string]any{
				"repoURL": "https://git.example.com/other/repo.git",
				"id":      fmt.Sprintf("%040d", i),
				"branch":  "main",
			}},
		})
	}
	return map[string]any{"freightHistory": history, "phase": "Steady"}
}
