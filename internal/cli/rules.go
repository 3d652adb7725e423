package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/docs"
)

func newRulesCommand(stdio IO) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:                   "rules [-o text|json]",
		Short:                 "List the rules",
		DisableFlagsInUseLine: true,
		Long: fmt.Sprintf(`Lists the rules: id, severity and title (-o json: every field of their METADATA).
'%s explain RULE' prints a rule's documentation.`, programName()),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("rules takes no arguments (to read a rule's documentation: %s explain RULE)", programName())
			}
			return nil
		},
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRules(cmd.Context(), format, stdio)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text or json")
	setFlagChoices(cmd.Flags(), "output", "text", "json")
	return cmd
}

func runRules(ctx context.Context, format string, stdio IO) error {
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		return err
	}
	switch format {
	case "json":
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(ev.Rules())
	case "text":
		tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSEVERITY\tTITLE")
		for _, r := range ev.Rules() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, docs.SeverityText(r), r.Title)
		}
		return tw.Flush()
	}
	return usagef("unknown output format %q (want text or json)", format)
}
