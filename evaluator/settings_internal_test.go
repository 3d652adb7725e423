package evaluator

import (
	"context"
	"reflect"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/estate"
)

// This host evaluates data.flipflop.all_findings with the settings read from
// its store (settingsFromStore), not data.flipflop.findings, conftest's
// entrypoint, which puts them in place with `with`: both give the same
// findings under settings that change them.
func TestSettingsFromStoreAsWith(t *testing.T) {
	ctx := context.Background()
	files, err := estate.Shape("branch", 40)
	if err != nil {
		t.Fatal(err)
	}
	objs := shapeObjects(t, files)
	for _, s := range []Settings{{}, {DefaultBranch: "trunk", ArgoCDNamespace: "gitops", KargoVersion: "v1.2"}} {
		e, err := New(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		pq, err := e.prepare(ctx, "x = "+Query)
		if err != nil {
			t.Fatal(err)
		}
		withWith, err := e.eval(ctx, pq, objs)
		if err != nil {
			t.Fatal(err)
		}
		fromStore, err := e.eval(ctx, e.query, objs)
		if err != nil {
			t.Fatal(err)
		}
		want, got := withWith[0].Bindings["x"], fromStore[0].Expressions[0].Value
		if fs, _ := got.([]any); len(fs) == 0 {
			t.Fatalf("settings %+v: no findings: the test proves nothing", s)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("settings %+v: the findings with the settings from the store differ from %s's", s, Query)
		}
	}
}
