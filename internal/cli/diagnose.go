package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/internal/diagnose"
)

// diagnoseFlags are the flags of `flipflop diagnose`.
type diagnoseFlags struct {
	output string
	inputs inputFlags
}

func runDiagnose(ctx context.Context, args []string, stdio IO) error {
	f := &diagnoseFlags{}
	fs := pflag.NewFlagSet("diagnose", pflag.ContinueOnError)
	fs.StringVarP(&f.output, "output", "o", "text", "output format: "+joinOr(diagnose.Formats()))
	f.inputs.registerAll(fs)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() {
		fmt.Fprintf(stdio.Err, `Usage: %s diagnose --cluster [flags] [PATH...]

Explains why Kargo Stages are Unhealthy with "does not match the desired revision":
reads the Stages' status (the last Promotion's health checks), the Applications'
status.sync.revision(s) and flipflop's findings on the same objects, and says per
Stage whether it is the shared-branch flip-flop (which Stages pin the pointer, the
commits involved, which Stage holds the head now) or something else.
Files (e.g. a 'kubectl get -o yaml' dump with status, or the repository's manifests,
which win over the cluster's copies) can be given as well.

Exit codes:
  0  no Stage is Unhealthy because of a configuration contradiction
  1  a flip-flop (or a revision that can never match) diagnosed
  2  usage error, some input could not be read, or no Kargo Stage and no Argo CD
     Application was found (unless --allow-empty)

Flags:
%s`, programName(), fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	paths := fs.Args()
	if !slices.Contains(diagnose.Formats(), f.output) {
		return usagef("unknown output format %q (want %s)", f.output, joinOr(diagnose.Formats()))
	}
	// A diagnosis reads what the cluster observed: the Stages' health, the
	// Applications' synced revisions.
	f.inputs.cluster.keepStatus = true
	in, err := f.inputs.prepare(ctx, paths, stdio)
	if err != nil {
		return err
	}
	ev, objs, loadErrs := in.ev, in.objs, in.errs
	report, model, err := in.analyze(ctx)
	if err != nil {
		return err
	}
	rep := diagnose.Diagnose(diagnose.Input{
		Objects:         objs,
		Findings:        report.Findings,
		Model:           model,
		Rules:           ev.Rules(),
		ArgoCDNamespace: in.settings.ArgoCDNamespace,
	})
	rep.Errors = append(rep.Errors, loadErrs...)
	if err := diagnose.Write(stdio.Out, f.output, rep); err != nil {
		return err
	}
	switch {
	case len(rep.Errors) > 0:
		return &IncompleteError{Count: len(rep.Errors)}
	case rep.Summary.Contradictions > 0:
		return ErrFindings
	}
	return nil
}
