package cli

import (
	"fmt"
	"runtime"
	"text/tabwriter"

	opaversion "github.com/open-policy-agent/opa/v1/version"
	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/internal/version"
)

const versionUsage = `Usage: %s version

Prints flipflop's version, the commit it was built from and when, the Go
release it was built with and the OPA release that evaluates its policies.
A release binary carries its tag; 'go install ...@vX.Y.Z' the module version;
a build from a Git checkout a pseudo-version with the commit.
'%[1]s --version' prints the same on one line.
`

func runVersion(args []string, stdio IO) error {
	fs := pflag.NewFlagSet("version", pflag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() { fmt.Fprintf(stdio.Err, versionUsage, programName()) }
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments")
	}
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
