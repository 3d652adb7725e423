package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
	"github.com/flipflop-dev/flipflop/internal/output"
	"github.com/flipflop-dev/flipflop/internal/reports"
	"github.com/flipflop-dev/flipflop/internal/reports/writer"
)

// writeReportFlags are check's flags that write the findings to the cluster as
// policy reports (the auditor: a scheduled check --cluster --write-reports).
type writeReportFlags struct {
	write bool
	apis  []string
	fs    *pflag.FlagSet
}

func (r *writeReportFlags) register(fs *pflag.FlagSet) {
	r.fs = fs
	fs.BoolVar(&r.write, "write-reports", false, "with --cluster: write the findings to the cluster as policy reports (a PolicyReport per namespace the findings touch and a ClusterPolicyReport named flipflop, what -o policyreport prints; OpenReports Reports where that CRD is installed), updated in place, flipflop's stale ones deleted; a failure to write them exits 2")
	fs.StringSliceVar(&r.apis, "report-api", nil, "with --write-reports: the report APIs to write, policyreport (wgpolicyk8s.io/v1alpha2) and/or openreports (openreports.io/v1alpha1), comma-separated (default: each one the API server serves; flipflop never installs their CRDs)")
	setFlagGroup(fs, groupCluster, "write-reports", "report-api")
	setFlagChoices(fs, "report-api", reportAPIs()...)
}

// reportAPIs are the --report-api values.
func reportAPIs() []string {
	var out []string
	for _, api := range reports.APIs() {
		out = append(out, api.Format)
	}
	return out
}

// validate checks the report flags against the rest of the command line:
// the reports describe the whole estate as the cluster holds it.
func (r *writeReportFlags) validate(in *inputFlags, paths []string) error {
	for _, a := range r.apis {
		if !slices.Contains(reportAPIs(), a) {
			return usagef("unknown --report-api %q (want %s)", a, joinOr(reportAPIs()))
		}
	}
	if !r.write {
		if len(r.apis) > 0 {
			return usagef("--report-api needs --write-reports")
		}
		return nil
	}
	switch {
	case !in.cluster.enabled():
		return usagef("--write-reports writes the findings of the cluster to it: it needs --cluster")
	case len(paths) > 0:
		return usagef("--write-reports writes what the cluster holds: give no PATH (a report of files would be taken for the cluster's)")
	case len(in.cluster.namespaces) > 0:
		return usagef("--write-reports needs the whole estate: the report of an Argo CD namespace holds the findings of every project, so -n/--namespace would drop the others'; leave it out")
	}
	return nil
}

// reportTime is the time the reports' results carry: SOURCE_DATE_EPOCH when
// it is set (reproducible output to diff), else now.
func reportTime() (time.Time, error) {
	s, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || s == "" {
		return time.Now(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, usagef("SOURCE_DATE_EPOCH must be a number of seconds since 1970 (%s)", strconv.Quote(s))
	}
	return time.Unix(n, 0), nil
}

// outputOptions sets what the policyreport and openreports formats, and the
// writer, need of the run: its time, and the UIDs of the objects read from
// the cluster.
func (r *writeReportFlags) outputOptions(format string, in *loaded, opts *output.Options) error {
	if !r.write && !slices.Contains(reportAPIs(), format) {
		return nil
	}
	now, err := reportTime()
	if err != nil {
		return err
	}
	var live []evaluator.Object
	for _, o := range in.objs {
		if cluster.IsLive(o) {
			live = append(live, o)
		}
	}
	opts.Now, opts.UIDs = now, reports.UIDs(live)
	return nil
}

// writeReports writes report's policy reports to the cluster, and says what
// it did on standard error. A run that could not read everything updates the
// reports it has and deletes none (a namespace that was not read is not
// clean). A failure is an error: exit 2, whatever the findings.
func (r *writeReportFlags) writeReports(ctx context.Context, c *clusterFlags, report *evaluator.Report, opts output.Options, stdio IO) error {
	if !r.write {
		return nil
	}
	cfg, _, err := c.config()
	if err != nil {
		return fmt.Errorf("--write-reports: %w", err)
	}
	var apis []reports.API
	for _, api := range reports.APIs() {
		if slices.Contains(r.apis, api.Format) {
			apis = append(apis, api)
		}
	}
	rs := reports.Build(report, reports.Options{Rules: opts.Rules, Now: opts.Now, UIDs: opts.UIDs})
	outs, err := writer.Write(ctx, cfg, rs, writer.Options{
		APIs:             apis,
		DeleteStale:      len(report.Errors) == 0,
		MaxResponseBytes: c.maxResponse,
		ChunkSize:        c.chunkSize,
	})
	for _, o := range outs {
		fmt.Fprintf(stdio.Err, "flipflop: %s: %d written, %d unchanged, %d deleted\n", o.API, o.Written, o.Unchanged, o.Deleted)
	}
	if err != nil {
		return fmt.Errorf("--write-reports: %w", err)
	}
	if len(report.Errors) > 0 {
		fmt.Fprintln(stdio.Err, "flipflop: some input could not be read: no report was deleted")
	}
	return nil
}
