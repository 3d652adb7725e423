package upstream_test

import (
	"os"
	"os/exec"
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

// The report CRDs: both kinds of both APIs, each from its release.
func TestReportCRDsAreThere(t *testing.T) {
	pr, err := upstream.PolicyReportCRDs()
	if err != nil {
		t.Fatal(err)
	}
	or, err := upstream.OpenReportsCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range append(pr, or...) {
		names = append(names, filepath.Base(p))
	}
	want := "openreports.io_clusterreports.yaml openreports.io_reports.yaml wgpolicyk8s.io_clusterpolicyreports.yaml wgpolicyk8s.io_policyreports.yaml"
	got := strings.Join(names, " ")
	if strings.Join(append(names[2:], names[:2]...), " ") != want {
		t.Errorf("report CRDs %s, want %s", got, want)
	}
}

// The OpenReports CRDs are those of the release whose Go types flipflop
// builds its reports with.
func TestOpenReportsVersionIsGoMods(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", upstream.OpenReportsModule).Output()
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(out)); v != upstream.OpenReportsVersion {
		t.Errorf("go.mod requires %s@%s, upstream pins %s", upstream.OpenReportsModule, v, upstream.OpenReportsVersion)
	}
}
