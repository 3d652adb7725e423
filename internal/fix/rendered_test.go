package fix

import (
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Objects a Helm chart or kustomization rendered are not in their file as they
// stand: fix never patches them.
func TestRenderedObjectsAreNotPatched(t *testing.T) {
	read := func(string) ([]byte, error) {
		t.Fatal("a rendered object's file was read for patching")
		return nil, nil
	}
	o := evaluator.Object{Path: "chart/templates/stages.yaml", Line: 5, Kind: "Stage", Namespace: "acme", Name: "dev", Rendered: evaluator.ModeHelm}
	e := newEstate([]evaluator.Object{o}, read)
	_, _, err := e.node(&e.objs[0])
	if err == nil || !strings.Contains(err.Error(), "was rendered by helm: change the template or kustomization by hand") {
		t.Errorf("err = %v", err)
	}
}
