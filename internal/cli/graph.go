package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/internal/graph"
)

const graphUsage = `Usage: %[1]s graph [flags] [PATH... | --cluster]

Draws the estate as flipflop models it: Stages, the Applications they pin (edges
labelled with what the pin expects), the repository @ revision each Application
tracks, and the branches the Stages push to (dashed). What an error finding is
about is drawn in red.

  -o mermaid   a Mermaid flowchart (paste it into a mermaid block of GitHub Markdown)
  -o dot       Graphviz DOT: %[1]s graph -o dot PATH | dot -Tsvg > estate.svg

Exit codes: 0, or 2 on a usage error or when some input could not be read.

Flags:
%[2]s`

func runGraph(ctx context.Context, args []string, stdio IO) error {
	var inputs inputFlags
	fs := pflag.NewFlagSet("graph", pflag.ContinueOnError)
	format := fs.StringP("output", "o", "mermaid", "output format: "+joinOr(graph.Formats()))
	inputs.register(fs)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() { fmt.Fprintf(stdio.Err, graphUsage, programName(), fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return usagef("%s", err)
	}
	paths := fs.Args()
	if !slices.Contains(graph.Formats(), *format) {
		return usagef("unknown output format %q (want %s)", *format, joinOr(graph.Formats()))
	}
	in, err := inputs.prepare(ctx, paths, stdio)
	if err != nil {
		return err
	}
	ev, objs, loadErrs := in.ev, in.objs, in.errs
	model, err := ev.Model(ctx, objs)
	if err != nil {
		return err
	}
	report, err := ev.Evaluate(ctx, objs)
	if err != nil {
		return err
	}
	if err := graph.Write(stdio.Out, *format, graph.Build(model, report)); err != nil {
		return err
	}
	return loadErrors(loadErrs, stdio.Err)
}
