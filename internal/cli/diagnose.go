package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/flipflop-dev/flipflop/internal/diagnose"
)

// diagnoseFlags are the flags of `flipflop diagnose`.
type diagnoseFlags struct {
	output string
	inputs inputFlags
}

const diagnoseLong = `Explains why Kargo Stages are Unhealthy with "does not match the desired revision":
reads the Stages' status (the last Promotion's health checks), the Applications'
status.sync.revision(s) and flipflop's findings on the same objects, and says per
Stage whether it is the shared-branch flip-flop (which Stages pin the pointer, the
commits involved, which Stage holds the head now) or something else.
Files (e.g. a 'kubectl get -o yaml' dump with status, or the repository's manifests,
which win over the cluster's copies) can be given as well.

Diagnosing files needs the live status in them:
  %[2]s
  %[1]s diagnose live.yaml

Exit codes:
  0  no Stage is Unhealthy because of a configuration contradiction
  1  a flip-flop (or a revision that can never match) diagnosed
  2  usage error, some input could not be read, no Kargo Stage and no Argo CD
     Application was found (unless --allow-empty), or no Stage in the files
     given has a status (nothing to diagnose)`

func newDiagnoseCommand(stdio IO) *cobra.Command {
	f := &diagnoseFlags{}
	cmd := &cobra.Command{
		Use:   "diagnose --cluster [flags] [PATH...]",
		Short: `Explain Stages that are Unhealthy with "does not match the desired revision"`,
		Long:  fmt.Sprintf(diagnoseLong, programName(), liveDumpCommand),
		Example: examples(
			"flipflop diagnose --cluster",
			"flipflop diagnose --cluster gitops/ # the repository's copies win over the cluster's",
			"flipflop diagnose live.yaml # a dump with status (examples/live-status is one)",
		),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runDiagnose(cmd.Context(), f, paths, stdio)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.output, "output", "o", "text", "output format: "+joinOr(diagnose.Formats()))
	setFlagGroup(fs, groupOutput, "output")
	setFlagChoices(fs, "output", diagnose.Formats()...)
	f.inputs.registerAll(fs)
	return cmd
}

func runDiagnose(ctx context.Context, f *diagnoseFlags, paths []string, stdio IO) error {
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
	// No status, nothing to diagnose: say what is needed. Files without
	// status are a mistake (manifests from Git); a cluster whose Stages have
	// none has simply promoted nothing yet.
	noStatus := rep.Summary.WithStatus == 0 && !in.empty
	if noStatus {
		rep.Note = noStatusNote(rep.Summary.Stages, f.inputs.cluster.enabled())
	}
	if err := diagnose.Write(stdio.Out, f.output, rep); err != nil {
		return err
	}
	switch {
	case len(rep.Errors) > 0:
		return &IncompleteError{Count: len(rep.Errors)}
	case noStatus && !f.inputs.cluster.enabled():
		return &noStatusError{stages: rep.Summary.Stages}
	case rep.Summary.Contradictions > 0:
		return ErrFindings
	}
	return nil
}

// liveDumpCommand writes what diagnose reads, from the cluster, to a file.
const liveDumpCommand = "kubectl get stages.kargo.akuity.io,applications.argoproj.io -A -o yaml > live.yaml"

// noStatusNote says why there is nothing to diagnose: no Stage read has a
// status (stages is how many Stages were read), and how to get one.
func noStatusNote(stages int, cluster bool) string {
	name := programName()
	if cluster {
		if stages == 0 {
			return "NO STAGES  no Kargo Stage was read: there is nothing to diagnose.\n" +
				"diagnose explains Kargo Stages; check the namespaces read (-n, -A) and the context (--context)."
		}
		return fmt.Sprintf("NO STATUS  none of the %s read has a health status or a last Promotion yet: there is nothing to diagnose.\n"+
			"Kargo sets them when a Promotion of the Stage runs its health checks; run %s diagnose --cluster again after one.", nounCount(stages, "Stage"), name)
	}
	what := fmt.Sprintf("none of the %s read has a status", nounCount(stages, "Stage"))
	if stages == 0 {
		what = "no Kargo Stage was read"
	}
	return fmt.Sprintf("NO STATUS  %s: there is nothing to diagnose.\n"+
		"diagnose explains Unhealthy Stages from what Kargo and Argo CD observed (a Stage's\n"+
		"status.health and status.lastPromotion, an Application's status.sync); manifests from Git\n"+
		"hold none. Dump the live objects and diagnose the dump:\n"+
		"  %s\n"+
		"  %s diagnose live.yaml\n"+
		"or read the cluster itself:\n"+
		"  %s diagnose --cluster\n"+
		"A dump that shows the flip-flop: examples/live-status in flipflop's repository.\n"+
		"To check manifests for contradictions (no status needed): %s check PATH...",
		what, liveDumpCommand, name, name, name)
}

// noStatusError ends a diagnosis of files in which no Stage has a status:
// exit 2, nothing could be diagnosed.
type noStatusError struct{ stages int }

func (e *noStatusError) Error() string {
	return fmt.Sprintf("nothing diagnosed: none of the %s read has a status (dump the live objects with '%s', or use --cluster)",
		nounCount(e.stages, "Stage"), liveDumpCommand)
}
