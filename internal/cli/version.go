package cli

import (
	"fmt"
	"runtime"
	"text/tabwriter"

	opaversion "github.com/open-policy-agent/opa/v1/version"
	"github.com/spf13/cobra"

	"github.com/flipflop-dev/flipflop/internal/version"
)

func newVersionCommand(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:                   "version",
		Short:                 "Print the version, commit and build (also: --version)",
		DisableFlagsInUseLine: true,
		Long: fmt.Sprintf(`Prints flipflop's version, the commit it was built from and when, the Go
release it was built with and the OPA release that evaluates its policies.
A release binary carries its tag; 'go install ...@vX.Y.Z' the module version;
a build from a Git checkout a pseudo-version with the commit.
'%s --version' prints the same on one line.`, programName()),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("version takes no arguments")
			}
			return nil
		},
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              func(*cobra.Command, []string) error { return runVersion(stdio) },
	}
}

// runVersion prints the version, commit, date and the Go and OPA releases.
func runVersion(stdio IO) error {
	info := version.Get()
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "flipflop\t%s\n", info.Version)
	if info.Commit != "" {
		fmt.Fprintf(tw, "commit\t%s\n", info.Commit)
	}
	if info.Date != "" {
		fmt.Fprintf(tw, "date\t%s\n", info.Date)
	}
	if info.Modified {
		fmt.Fprintf(tw, "modified\tyes (built from a tree with uncommitted changes)\n")
	}
	fmt.Fprintf(tw, "go\t%s %s/%s\n", info.Go, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(tw, "opa\t%s\n", opaversion.Version)
	return tw.Flush()
}
