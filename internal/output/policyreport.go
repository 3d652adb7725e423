package output

import (
	"io"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/reports"
)

// writePolicyReport writes the report as wgpolicyk8s.io/v1alpha2
// PolicyReports, one per namespace the findings touch, and a
// ClusterPolicyReport (package reports places the results): a YAML stream to
// `kubectl apply -f` or to diff in CI, the same objects `check --cluster
// --write-reports` writes.
func writePolicyReport(w io.Writer, report *evaluator.Report, opts Options) error {
	return reports.PolicyReports.WriteYAML(w, reports.Build(report, opts.reportOptions()))
}

// reportOptions are the options of package reports that opts carry.
func (o Options) reportOptions() reports.Options {
	return reports.Options{Rules: o.Rules, Now: o.Now, UIDs: o.UIDs}
}
