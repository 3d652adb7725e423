package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/explain"
	"github.com/flipflop-dev/flipflop/internal/htmlreport"
	"github.com/flipflop-dev/flipflop/internal/safefile"
	"github.com/flipflop-dev/flipflop/internal/version"
)

const reportUsage = `Usage: %[1]s report [flags] [PATH... | --cluster] > report.html
       %[1]s report --out report.html [flags] [PATH...]

Writes what check finds as one self-contained HTML page, to attach to a ticket or
share: the findings by severity and rule, the estate and each finding drawn as a
picture (the graph '%[1]s graph' draws, as inline SVG), why, the ways out with the
commands that preview them, the promotion timeline '%[1]s explain' replays, and
the fix previews as diffs. The page loads nothing and runs no script (its
Content-Security-Policy forbids both), so it shows the same offline.

Exit codes, as check: 0 clean; 1 findings at or above --fail-on; 2 a usage error,
an input that could not be read (the page is still written, and lists them), no
Kargo Stage and no Argo CD Application among the inputs (unless --allow-empty), or
a page that could not be written.

Flags:
%[2]s`

func runReport(ctx context.Context, args []string, stdio IO) error {
	var inputs inputFlags
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	out := fs.String("out", "", "write the page to this file (default: standard output; a regular file, never written through a symbolic link)")
	failOn := fs.String("fail-on", "error", "exit 1 on findings at or above this severity: "+joinOr(failLevels))
	inputs.registerAll(fs)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() { fmt.Fprintf(stdio.Err, reportUsage, programName(), fs.FlagUsages()) }
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	paths := fs.Args()
	if err := inputs.configure(); err != nil {
		return err
	}
	if !slices.Contains(failLevels, *failOn) {
		return usagef("unknown --fail-on level %q (want %s)", *failOn, joinOr(failLevels))
	}
	in, err := inputs.prepare(ctx, paths, stdio)
	if err != nil {
		return err
	}
	a, err := analyze(ctx, in, &inputs, fs, paths, evaluator.Detailed())
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
	if *out == "" {
		if _, err := stdio.Out.Write(b.Bytes()); err != nil {
			return err
		}
	} else if err := safefile.Write(*out, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return verdict(a.report, *failOn)
}
