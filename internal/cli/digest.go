package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/digest"
	"github.com/flipflop-dev/flipflop/internal/fix"
)

// analyzed is a check's report with the model it was computed from, and the
// digest of both: what -o markdown, --summary and report need beyond the
// findings.
type analyzed struct {
	report *evaluator.Report
	model  *evaluator.Model
	plan   *fix.Plan
	digest *digest.Digest
}

// analyze evaluates the loaded objects once for the findings and the model
// (as fix reads it), fills the report as check does, and digests it: each
// finding's picture and why, and, when the inputs are files fix can patch,
// its ways out with the fix command that previews each. fs holds the flags
// given (those fix also takes are repeated in its commands).
//
// detail is evaluator.Detailed for a digest that offers every finding's ways
// out (report), evaluator.DetailedForErrors for one that offers them for
// errors only (check -o markdown, --summary): with no error, the model is not
// detailed and nothing is planned.
func analyze(ctx context.Context, l *loaded, in *inputFlags, fs *pflag.FlagSet, paths []string, detail evaluator.ModelOption) (*analyzed, error) {
	report, model, err := l.analyze(ctx, detail)
	if err != nil {
		return nil, err
	}
	l.complete(report)
	a := &analyzed{report: report, model: model}
	di := digest.Input{Report: report, Model: model}
	switch {
	case in.cluster.enabled():
		di.NoFix = "flipflop fix previews changes to files, not to a cluster"
	case slices.Contains(paths, "-"):
		di.NoFix = "flipflop fix previews changes to files, not to standard input"
	case len(l.errs) > 0:
		di.NoFix = "some input could not be read, and fix previews no change computed from part of the estate"
	case !model.Detailed:
		// no finding needs a way out planned
	default:
		plan, err := fix.New(l.objs, report, model, fix.Options{Rules: l.ev.Rules()})
		if err != nil {
			di.NoFix = fmt.Sprintf("fix could not plan: %v", err)
			break
		}
		a.plan, di.Plan = plan, plan
		di.Command = previewCommand(fs, paths, fixTakes())
	}
	a.digest = digest.Build(di)
	return a, nil
}

// fixTakes reports whether flipflop fix has a flag of this name (the input
// flags a preview command repeats).
func fixTakes() func(name string) bool {
	fs := pflag.NewFlagSet("fix", pflag.ContinueOnError)
	var in inputFlags
	in.register(fs)
	return func(name string) bool { return fs.Lookup(name) != nil }
}
