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
	ref := evaluator.Resource{File: "chart/templates/stages.yaml", Line: 5, Kind: "Stage", Namespace: "acme", Name: "dev", RenderedBy: "helm chart chart"}
	e := newEstate(nil, nil, read)
	_, _, err := e.object(ref)
	if err == nil || !strings.Contains(err.Error(), "was rendered by helm chart chart: change the template or kustomization by hand") {
		t.Errorf("err = %v", err)
	}
}
