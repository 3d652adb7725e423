package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/output"
	"github.com/flipflop-dev/flipflop/internal/safefile"
	"github.com/flipflop-dev/flipflop/internal/version"
)

var failLevels = output.FailLevels()

// checkFlags are the flags of `flipflop check`.
type checkFlags struct {
	output  string
	out     string
	summary string
	color   string
	failOn  string
	inputs  inputFlags
	reports writeReportFlags
}

// register registers the flags of check on fs.
func (f *checkFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.output, "output", "o", "text", "output format: "+joinOr(output.Formats()))
	fs.StringVar(&f.color, "color", output.ColorAuto, "colour the text output: "+joinOr(output.ColorModes())+" (auto: when stdout is a terminal and NO_COLOR is unset)")
	fs.StringVar(&f.failOn, "fail-on", "error", "exit 1 on findings at or above this severity: "+joinOr(failLevels))
	fs.StringVar(&f.out, "out", "", "write the report to this file instead of standard output (a regular file, never written through a symbolic link)")
	fs.StringVar(&f.summary, "summary", "", "also append the report as Markdown (what -o markdown prints) to this file: a GitHub job summary ($GITHUB_STEP_SUMMARY), a merge-request note (a regular file, never written through a symbolic link)")
	setFlagGroup(fs, groupOutput, "output", "color", "fail-on", "out", "summary")
	setFlagChoices(fs, "output", output.Formats()...)
	setFlagChoices(fs, "color", output.ColorModes()...)
	setFlagChoices(fs, "fail-on", failLevels...)
	setFlagFiles(fs, nil, "out", "summary")
	f.inputs.registerAll(fs)
	f.reports.register(fs)
}

func (f *checkFlags) validateOutput() error {
	if !slices.Contains(output.Formats(), f.output) {
		return usagef("unknown output format %q (want %s)", f.output, joinOr(output.Formats()))
	}
	if !slices.Contains(output.ColorModes(), f.color) {
		return usagef("unknown --color mode %q (want %s)", f.color, joinOr(output.ColorModes()))
	}
	if !slices.Contains(failLevels, f.failOn) {
		return usagef("unknown --fail-on level %q (want %s)", f.failOn, joinOr(failLevels))
	}
	return nil
}

const checkLong = `Checks Kargo and Argo CD manifests in files, directories (recursively: .yaml, .yml, .json),
standard input (-) and, with --cluster, a live cluster. Paths matched by --exclude, by exclude:
in .flipflop.yaml or by a .flipflopignore file (.gitignore syntax) are not read.

` + readHelp + `
Exit codes: 0 clean; 1 findings at or above --fail-on; 2 a usage error, an input that could not
be read, or no Kargo Stage and no Argo CD Application among the inputs (unless --allow-empty).`

func newCheckCommand(stdio IO) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check [flags] [PATH...]",
		Short: "Check manifests (files, directories, - for stdin) and, with --cluster, a live cluster",
		Long:  checkLong,
		Example: examples(
			"flipflop check gitops/ # a repository's manifests, charts and kustomizations rendered",
			"flipflop check --cluster # a live cluster (get and list only)",
			"flipflop check --cluster gitops/ # the repository's copies win over the cluster's",
			"kubectl get stages,applications -A -o yaml | flipflop check - # standard input",
			"flipflop check -o sarif --out flipflop.sarif gitops/ # for code scanning",
		),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runCheck(cmd.Context(), cmd.Flags(), f, paths, stdio)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func runCheck(ctx context.Context, fs *pflag.FlagSet, f *checkFlags, paths []string, stdio IO) error {
	// The configuration file gives the flags the command line does not.
	if err := f.inputs.configure(); err != nil {
		return err
	}
	if err := f.validateOutput(); err != nil {
		return err
	}
	if err := f.reports.validate(&f.inputs, paths); err != nil {
		return err
	}
	in, err := f.inputs.prepare(ctx, paths, stdio)
	if err != nil {
		return err
	}
	ev := in.ev
	opts := output.Options{Rules: ev.Rules(), Color: f.color, Version: version.String(), FailOn: f.failOn}
	if err := f.reports.outputOptions(f.output, in, &opts); err != nil {
		return err
	}
	var report *evaluator.Report
	if f.output == "markdown" || f.summary != "" {
		// The pictures and the ways out need the model and a fix plan.
		a, err := analyze(ctx, in, &f.inputs, fs, paths, evaluator.DetailedForErrors())
		if err != nil {
			return err
		}
		report, opts.Digest = a.report, a.digest
	} else {
		report, err = in.evaluate(ctx)
		if err != nil {
			return err
		}
		in.complete(report)
	}
	if f.out == "" {
		if err := output.Write(stdio.Out, f.output, report, opts); err != nil {
			return err
		}
	} else {
		var b bytes.Buffer
		if err := output.Write(&b, f.output, report, opts); err != nil {
			return err
		}
		if err := safefile.Write(f.out, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if f.summary != "" {
		if err := appendSummary(f.summary, report, opts); err != nil {
			return err
		}
	}
	if err := f.reports.writeReports(ctx, &f.inputs.cluster, report, opts, stdio); err != nil {
		return err
	}
	return verdict(report, f.failOn)
}

// appendSummary appends the report as Markdown to file (GitHub gives each
// step its own summary file, to append to): a regular file, never a named
// pipe or a device, and never through a symbolic link (safefile).
func appendSummary(file string, report *evaluator.Report, opts output.Options) error {
	var b bytes.Buffer
	if err := output.Write(&b, "markdown", report, opts); err != nil {
		return err
	}
	if err := safefile.Append(file, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--summary: %w", err)
	}
	return nil
}

// verdict maps a printed report to the error ExitCode turns into the exit code:
// load errors win over findings.
func verdict(report *evaluator.Report, failOn string) error {
	if len(report.Errors) > 0 {
		return &IncompleteError{Count: len(report.Errors)}
	}
	if failOn != "never" && report.Count(failOn) > 0 {
		return ErrFindings
	}
	return nil
}
