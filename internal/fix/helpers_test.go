package fix

import (
	"context"
	"sync"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

var (
	evOnce sync.Once
	ev     *evaluator.Evaluator
	evErr  error
)

// evaluatorFor returns one shared evaluator (compiling the policies is slow).
func evaluatorFor(t *testing.T) *evaluator.Evaluator {
	t.Helper()
	evOnce.Do(func() { ev, evErr = evaluator.New(context.Background(), evaluator.Settings{}) })
	if evErr != nil {
		t.Fatal(evErr)
	}
	return ev
}

// planFor loads paths, evaluates them and plans the fixes.
func planFor(t *testing.T, dir string, paths ...string) (*Plan, *evaluator.Report) {
	t.Helper()
	ctx := context.Background()
	e := evaluatorFor(t)
	objs, errs := (&loader.Loader{}).Load(paths)
	if len(errs) > 0 {
		t.Fatalf("load: %v", errs)
	}
	report, model, err := e.Analyze(ctx, objs, evaluator.Detailed())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := New(objs, report, model, Options{Dir: dir, Rules: e.Rules()})
	if err != nil {
		t.Fatal(err)
	}
	return plan, report
}
