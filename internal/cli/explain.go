package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/docs"
	"github.com/flipflop-dev/flipflop/internal/explain"
	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/suggest"
)

const explainLong = `With a rule id (see '%[1]s rules'), prints the rule's documentation: what it
catches, why it breaks (with the message Kargo reports), an example that fires and
one that does not, the ways out and what each costs, how to waive it, references.

With manifests (files, directories, - for stdin) or --cluster, replays every
shared-branch contradiction (and foreign-branch writer) on your own Stages,
Applications and branch: the commit each promotion pushes, what each pinning Stage
expects, what Argo CD then reports, and which Stage is Healthy after each
promotion; then lists the other findings.

Exit codes: 0, or 2 on a usage error, when some input could not be read, or when
the inputs hold no Kargo Stage and no Argo CD Application (unless --allow-empty).`

func newExplainCommand(stdio IO) *cobra.Command {
	var inputs inputFlags
	cmd := &cobra.Command{
		Use:   "explain RULE | [flags] [PATH... | --cluster]",
		Short: "Print a rule's documentation, or replay each shared-branch contradiction as a promotion timeline",
		Long:  fmt.Sprintf(explainLong, programName()),
		Example: examples(
			"flipflop explain shared-branch-contradiction # why it breaks, the ways out, how to waive it",
			"flipflop explain gitops/ # your estate's contradictions, promotion by promotion",
			"flipflop explain --cluster",
		),
		Args: cobra.ArbitraryArgs,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return completeRuleIDs(cmd, args, toComplete)
			}
			return nil, cobra.ShellCompDirectiveDefault
		},
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runExplain(cmd.Context(), &inputs, paths, stdio)
		},
	}
	inputs.registerAll(cmd.Flags())
	return cmd
}

func runExplain(ctx context.Context, inputs *inputFlags, paths []string, stdio IO) error {
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
	if err := explain.Write(stdio.Out, model, report, in.ev.Rules()); err != nil {
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
		hint := suggest.DidYouMean(arg, ids)
		if hint == "" {
			hint = fmt.Sprintf(" ('%s rules' lists them)", programName())
		}
		return true, usagef("%q is neither a rule nor a file%s", arg, hint)
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
