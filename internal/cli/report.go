package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/explain"
	"github.com/flipflop-dev/flipflop/internal/htmlreport"
	"github.com/flipflop-dev/flipflop/internal/safefile"
	"github.com/flipflop-dev/flipflop/internal/version"
)

const reportLong = `Writes what check finds as one self-contained HTML page, to attach to a ticket or
share: the findings by severity and rule, the estate and each finding drawn as a
picture (the graph '%[1]s graph' draws, as inline SVG), why, the ways out with the
commands that preview them, the promotion timeline '%[1]s explain' replays, and
the fix previews as diffs. The page loads nothing and runs no script (its
Content-Security-Policy forbids both), so it shows the same offline.

Exit codes, as check: 0 clean; 1 findings at or above --fail-on; 2 a usage error,
an input that could not be read (the page is still written, and lists them), no
Kargo Stage and no Argo CD Application among the inputs (unless --allow-empty), or
a page that could not be written.`

// reportFlags are the flags of flipflop report.
type reportFlags struct {
	out, failOn string
	inputs      inputFlags
}

func newReportCommand(stdio IO) *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report [flags] [PATH... | --cluster]",
		Short: "Write the findings as one self-contained HTML page (pictures, timelines, fix previews)",
		Long:  fmt.Sprintf(reportLong, programName()),
		Example: examples(
			"flipflop report gitops/ > report.html",
			"flipflop report --out report.html --cluster",
		),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runReport(cmd.Context(), cmd.Flags(), f, paths, stdio)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.out, "out", "", "write the page to this file (default: standard output; a regular file, never written through a symbolic link)")
	fs.StringVar(&f.failOn, "fail-on", "error", "exit 1 on findings at or above this severity: "+joinOr(failLevels))
	setFlagGroup(fs, groupOutput, "out", "fail-on")
	setFlagChoices(fs, "fail-on", failLevels...)
	setFlagFiles(fs, []string{"html"}, "out")
	f.inputs.registerAll(fs)
	return cmd
}

func runReport(ctx context.Context, fs *pflag.FlagSet, f *reportFlags, paths []string, stdio IO) error {
	inputs := &f.inputs
	// The configuration file gives the flags the command line does not.
	if err := inputs.configure(); err != nil {
		return err
	}
	if !slices.Contains(failLevels, f.failOn) {
		return usagef("unknown --fail-on level %q (want %s)", f.failOn, joinOr(failLevels))
	}
	in, err := inputs.prepare(ctx, paths, stdio)
	if err != nil {
		return err
	}
	a, err := analyze(ctx, in, inputs, fs, paths, evaluator.Detailed())
	if err != nil {
		return err
	}
	var b bytes.Buffer
	err = htmlreport.Write(&b, htmlreport.Page{
		Digest:    a.digest,
		Timelines: explain.Build(a.model, a.report, in.ev.Rules()),
		Plan:      a.plan,
		Rules:     in.ev.Rules(),
		Version:   version.String(),
		Paths:     paths,
	})
	if err != nil {
		return err
	}
	if f.out == "" {
		if _, err := stdio.Out.Write(b.Bytes()); err != nil {
			return err
		}
	} else if err := safefile.Write(f.out, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return verdict(a.report, f.failOn)
}
