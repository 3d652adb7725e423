package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/flipflop-dev/flipflop/internal/graph"
)

const graphLong = `Draws the estate as flipflop models it: Stages, the Applications they pin (edges
labelled with what the pin expects), the repository @ revision each Application
tracks, and the branches the Stages push to (dashed). What an error finding is
about is drawn in red.

  -o mermaid   a Mermaid flowchart (paste it into a mermaid block of GitHub Markdown)
  -o dot       Graphviz DOT: %[1]s graph -o dot PATH | dot -Tsvg > estate.svg
  -o svg       an SVG picture laid out by flipflop (no Graphviz): %[1]s graph -o svg PATH > estate.svg

Exit codes: 0, or 2 on a usage error, when some input could not be read, or when
the inputs hold no Kargo Stage and no Argo CD Application (unless --allow-empty).`

func newGraphCommand(stdio IO) *cobra.Command {
	var inputs inputFlags
	var format string
	cmd := &cobra.Command{
		Use:   "graph [flags] [PATH... | --cluster]",
		Short: "Draw Stages, Applications and branches (-o mermaid|dot|svg), contradictions in red",
		Long:  fmt.Sprintf(graphLong, programName()),
		Example: examples(
			"flipflop graph gitops/ > estate.mmd",
			"flipflop graph -o svg --cluster > estate.svg",
		),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runGraph(cmd.Context(), &inputs, format, paths, stdio)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&format, "output", "o", "mermaid", "output format: "+joinOr(graph.Formats()))
	setFlagGroup(fs, groupOutput, "output")
	setFlagChoices(fs, "output", graph.Formats()...)
	inputs.registerAll(fs)
	return cmd
}

func runGraph(ctx context.Context, inputs *inputFlags, format string, paths []string, stdio IO) error {
	if !slices.Contains(graph.Formats(), format) {
		return usagef("unknown output format %q (want %s)", format, joinOr(graph.Formats()))
	}
	in, err := inputs.prepare(ctx, paths, stdio)
	if err != nil {
		return err
	}
	if in.empty && !inputs.allowEmpty {
		return loadErrors(in.errs, stdio.Err) // nothing to draw
	}
	model, report, err := in.modelAndReport(ctx)
	if err != nil {
		return err
	}
	if err := graph.Write(stdio.Out, format, graph.Build(model, report)); err != nil {
		return err
	}
	return loadErrors(in.errs, stdio.Err)
}
