package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/docs"
)

func runRules(ctx context.Context, args []string, stdio IO) error {
	fs := pflag.NewFlagSet("rules", pflag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	format := fs.StringP("output", "o", "text", "output format: text or json")
	fs.Usage = func() {
		fmt.Fprintf(stdio.Err, "Usage: %s rules [-o text|json]\n\nLists the rules: id, severity and title (-o json: every field of their METADATA).\n'%[1]s explain RULE' prints a rule's documentation.\n\nFlags:\n%s", programName(), fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("rules takes no arguments (to read a rule's documentation: %s explain RULE)", programName())
	}
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		return err
	}
	switch *format {
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
	return usagef("unknown output format %q (want text or json)", *format)
}
