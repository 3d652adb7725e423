package upstream_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/upstream"
)

func TestSchemasAreThere(t *testing.T) {
	kargo, err := upstream.KargoCRDs()
	if err != nil {
		t.Fatal(err)
	}
	argo, err := upstream.ArgoCDCRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"kargo.akuity.io_stages.yaml": false, "kargo.akuity.io_promotiontasks.yaml": false, "application-crd.yaml": false, "applicationset-crd.yaml": false}
	for _, p := range append(kargo, argo...) {
		if _, ok := want[filepath.Base(p)]; ok {
			want[filepath.Base(p)] = true
		}
	}
	for f, seen := range want {
		if !seen {
			t.Errorf("%s missing", f)
		}
	}
	dir, err := upstream.KargoStepSchemaDir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "argocd-update-config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "desiredRevision") {
		t.Error("argocd-update schema has no desiredRevision")
	}
}
