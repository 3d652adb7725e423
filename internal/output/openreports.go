package output

import (
	"io"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/reports"
)

// writeOpenReports writes the report as OpenReports (openreports.io/v1alpha1)
// Reports, one per namespace the findings touch, and a ClusterReport: the
// same results as the policyreport format, in the kinds that succeed it.
func writeOpenReports(w io.Writer, report *evaluator.Report, opts Options) error {
	return reports.OpenReports.WriteYAML(w, reports.Build(report, opts.reportOptions()))
}
