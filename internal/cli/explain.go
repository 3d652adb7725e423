package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/docs"
	"github.com/flipflop-dev/flipflop/internal/explain"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

const explainUsage = `Usage: %[1]s explain RULE
       %[1]s explain [flags] [PATH... | --cluster]

With a rule id (see '%[1]s rules'), prints the rule's documentation: what it
catches, why it breaks (with the message Kargo reports), an example that fires and
one that does not, the ways out and what each costs, how to waive it, references.

With manifests (files, directories, - for stdin) or --cluster, replays every
shared-branch contradiction (and foreign-branch writer) on your own Stages,
Applications and branch: the commit each promotion pushes, what each pinning Stage
expects, what Argo CD then reports, and which Stage is Healthy after each
promotion; then lists the other findings.

Exit codes: 0, or 2 on a usage error, when some input could not be read, or when
the inputs hold no Kargo Stage and no Argo CD Application (unless --allow-empty).

Flags:
%[2]s`

func runExplain(ctx context.Context, args []string, stdio IO) error {
	var inputs inputFlags
	fs := pflag.NewFlagSet("explain", pflag.ContinueOnError)
	inputs.registerAll(fs)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() { fmt.Fprintf(stdio.Err, explainUsage, programName(), fs.FlagUsages()) }
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 1 && !inputs.cluster.enabled() {
		if done, err := explainRule(ctx, paths[0], stdio.Out); done || err != nil {
			return err
		}
	}
	in, err := inputs.prepare(ctx, paths, stdio)
	if err != nil {
		return err
	}
	if in.empty && !inputs.allowEmpty {
		return loadErrors(in.errs, stdio.Err) // nothing to explain
	}
	model, report, err := in.modelAndReport(ctx)
	if err != nil {
		return err
	}
	if err := explain.Write(stdio.Out, model, report, in.objs); err != nil {
		return err
	}
	return loadErrors(in.errs, stdio.Err)
}

// explainRule prints the documentation of rule id when arg names a rule and no
// file of that name exists; done reports that it did.
func explainRule(ctx context.Context, arg string, w io.Writer) (done bool, err error) {
	if arg == "-" {
		return false, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return false, nil
	}
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		return true, err
	}
	var ids []string
	for _, r := range ev.Rules() {
		if r.ID == arg {
			text, err := docs.Text(r)
			if err != nil {
				return true, err
			}
			_, err = io.WriteString(w, text)
			return true, err
		}
		ids = append(ids, r.ID)
	}
	if !strings.ContainsAny(arg, `/\.`) {
		return true, usagef("%q is neither a rule nor a file (rules: %s)", arg, strings.Join(ids, ", "))
	}
	return false, nil
}

// loadErrors prints the inputs that could not be read and returns the error
// that exits 2, or nil when there are none.
func loadErrors(errs []evaluator.LoadError, w io.Writer) error {
	for _, e := range errs {
		fmt.Fprintf(w, "%s: %s\n", programName(), safetext.Text(e.Error()))
	}
	if len(errs) > 0 {
		return &IncompleteError{Count: len(errs)}
	}
	return nil
}
