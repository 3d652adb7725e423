// Package cli implements the flipflop command line: one file per subcommand.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/internal/version"
)

// IO is where a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

const usage = `flipflop finds configuration contradictions between Kargo and Argo CD.

Usage:
  flipflop check [flags] PATH...   check manifests (files, directories, - for stdin; --cluster: a live cluster)
  flipflop diagnose --cluster      explain Stages that are Unhealthy with "does not match the desired revision"
  flipflop explain RULE            print a rule's documentation (why it breaks, fixes, waivers)
  flipflop explain [flags] PATH... replay each shared-branch contradiction as a promotion timeline
  flipflop graph [flags] PATH...   draw Stages, Applications and branches (-o mermaid|dot|svg); contradictions in red
  flipflop fix [flags] PATH...     preview the ways out of the findings as a patch (--way W --apply writes it)
  flipflop report [flags] PATH...  the findings as one self-contained HTML page (pictures, timelines, fix previews)
  flipflop rules                   list the rules
  flipflop export TARGET DIR|-     write the policies for conftest, Gatekeeper or as an OPA bundle
  flipflop version                 print the version, commit and build (also: flipflop --version)
  flipflop help                    show this help

Exit codes:
  0  no finding at or above --fail-on, every input read
  1  findings at or above --fail-on
  2  usage error; some input could not be read (findings from the rest are still printed);
     or the inputs hold no Kargo Stage and no Argo CD Application (--allow-empty accepts that)

Run 'flipflop check --help' and 'flipflop diagnose --help' for their flags.
`

// Run executes the command line args and returns an error that ExitCode maps to
// an exit code.
func Run(ctx context.Context, args []string, stdio IO) error {
	if len(args) == 0 {
		fmt.Fprint(stdio.Err, usageText())
		return usagef("no command given")
	}
	switch args[0] {
	case "check":
		return runCheck(ctx, args[1:], stdio)
	case "diagnose":
		return runDiagnose(ctx, args[1:], stdio)
	case "explain":
		return runExplain(ctx, args[1:], stdio)
	case "graph":
		return runGraph(ctx, args[1:], stdio)
	case "fix":
		return runFix(ctx, args[1:], stdio)
	case "report":
		return runReport(ctx, args[1:], stdio)
	case "rules":
		return runRules(ctx, args[1:], stdio)
	case "export":
		return runExport(ctx, args[1:], stdio)
	case "version":
		return runVersion(args[1:], stdio)
	case "--version":
		fmt.Fprintf(stdio.Out, "flipflop %s\n", version.Get().Short())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdio.Out, usageText())
		return nil
	}
	return usagef("unknown command %q", args[0])
}

// parseFlags parses args with fs; help reports that --help printed the usage
// (the command then ends cleanly).
func parseFlags(fs *pflag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return true, nil
		}
		return false, usagef("%s", err)
	}
	return false, nil
}
