// Package cli implements the flipflop command line: one file per subcommand.
package cli

import (
	"context"
	"fmt"
	"io"
)

// IO is where a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// Version is set at build time with -ldflags "-X github.com/flipflop-dev/flipflop/internal/cli.Version=...".
var Version = "dev"

const usage = `flipflop finds configuration contradictions between Kargo and Argo CD.

Usage:
  flipflop check [flags] PATH...   check manifests (files, directories, - for stdin)
  flipflop rules                   list the rules
  flipflop export TARGET DIR|-     write the policies for conftest, Gatekeeper or as an OPA bundle
  flipflop version                 print the version
  flipflop help                    show this help

Exit codes:
  0  no finding at or above --fail-on, every input read
  1  findings at or above --fail-on
  2  usage error, or some input could not be read (findings from the rest are still printed)

Run 'flipflop check --help' for the flags of check.
`

// Run executes the command line args and returns an error that ExitCode maps to
// an exit code.
func Run(ctx context.Context, args []string, stdio IO) error {
	if len(args) == 0 {
		fmt.Fprint(stdio.Err, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "check":
		return runCheck(ctx, args[1:], stdio)
	case "rules":
		return runRules(ctx, args[1:], stdio)
	case "export":
		return runExport(ctx, args[1:], stdio)
	case "version", "--version":
		fmt.Fprintf(stdio.Out, "flipflop %s\n", Version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdio.Out, usage)
		return nil
	}
	return usagef("unknown command %q", args[0])
}
