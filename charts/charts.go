// Package charts holds flipflop's Helm chart (charts/flipflop) and what
// completes it: the policy report CRDs it installs where they are absent are
// not kept in the repository but taken from their releases (Kyverno's for
// wgpolicyk8s.io, reports-api's for openreports.io, through the Go module
// cache: internal/upstream) when the chart is loaded or packaged.
package charts

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// CRDDir is where the chart keeps the report CRDs it installs
// (templates/crds.yaml renders them).
const CRDDir = "files/crds/"

// Load loads the chart in dir and adds the released report CRDs under
// CRDDir, replacing any there.
func Load(dir string) (*chart.Chart, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	if err := AddReportCRDs(ch); err != nil {
		return nil, err
	}
	return ch, nil
}

// AddReportCRDs adds the released wgpolicyk8s.io/v1alpha2 and
// openreports.io/v1alpha1 CRDs to the chart's files under CRDDir.
func AddReportCRDs(ch *chart.Chart) error {
	pr, err := upstream.PolicyReportCRDs()
	if err != nil {
		return err
	}
	or, err := upstream.OpenReportsCRDs()
	if err != nil {
		return err
	}
	ch.Files = slices.DeleteFunc(ch.Files, func(f *common.File) bool { return strings.HasPrefix(f.Name, CRDDir) })
	for _, p := range append(pr, or...) {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ch.Files = append(ch.Files, &common.File{Name: CRDDir + filepath.Base(p), Data: b})
	}
	return nil
}

// Package writes the chart in dir, with the report CRDs, as a chart archive
// of the given version (the release's, without a leading v: chart version
// and appVersion alike) into outDir, and returns its path.
func Package(dir, version, outDir string) (string, error) {
	ch, err := Load(dir)
	if err != nil {
		return "", err
	}
	v := strings.TrimPrefix(version, "v")
	if v == "" {
		return "", fmt.Errorf("no version to package the chart as")
	}
	ch.Metadata.Version, ch.Metadata.AppVersion = v, v
	if err := ch.Validate(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	return chartutil.Save(ch, outDir)
}
