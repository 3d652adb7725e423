// Package cli implements the flipflop command line: one file per subcommand,
// on spf13/cobra (flags by spf13/pflag).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipflop-dev/flipflop/internal/suggest"
	"github.com/flipflop-dev/flipflop/internal/version"
)

// IO is where a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

func init() {
	// The help lists the commands in the order they are added (check
	// first), not alphabetically.
	cobra.EnableCommandSorting = false
}

const rootLong = `flipflop finds configuration contradictions between Kargo and Argo CD: Stages that
expect different heads of one branch, Applications that no promotion can make Healthy,
writers of branches another Stage pins. It reads manifests (files, directories, Helm
charts, kustomizations, standard input) and live clusters.

Exit codes:
  0  no finding at or above --fail-on, every input read
  1  findings at or above --fail-on
  2  usage error; some input could not be read (findings from the rest are still printed);
     or the inputs hold no Kargo Stage and no Argo CD Application (--allow-empty accepts that)`

// rootExample is the examples of the top-level help.
func rootExample(name string) string {
	lines := []string{
		"flipflop check gitops/ # a repository's manifests",
		"flipflop check --cluster # a live cluster",
		"flipflop explain shared-branch-contradiction # a rule: why it breaks, the ways out",
		"flipflop fix gitops/ # the ways out of the findings, as patches",
		"flipflop diagnose --cluster # why a Stage is Unhealthy",
	}
	if name == "flipflop" {
		lines = append(lines, "source <(flipflop completion bash) # tab completion (also zsh, fish, powershell)")
	}
	return examples(lines...)
}

// Command returns flipflop's command tree, reading and writing stdio: the
// root command, the subcommands, help and completion. Run executes it;
// hack/gencli generates the command reference from it.
func Command(stdio IO) *cobra.Command {
	name := programName()
	root := &cobra.Command{
		Use:     "flipflop",
		Short:   "Find the configuration contradictions between Kargo and Argo CD",
		Long:    rootLong,
		Example: rootExample(name),
		Args:    rootArgs,
		// ExitCode prints every error, once, escaped.
		SilenceErrors: true,
		SilenceUsage:  true,
		// A bare flipflop prints the help on standard output and exits 0,
		// as kubectl does.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				_, err := fmt.Fprintf(stdio.Out, "flipflop %s\n", version.Get().Short())
				return err
			}
			return cmd.Help()
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	if name != "flipflop" {
		// The kubectl plugin: "kubectl flipflop check" in every usage line.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: name}
	}
	root.Flags().Bool("version", false, "print the version on one line ('"+name+" version' prints it in full)")
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	root.SetHelpFunc(help)
	root.SetUsageFunc(usage)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usagef("%s", err) })
	root.AddCommand(
		newCheckCommand(stdio),
		newDiagnoseCommand(stdio),
		newExplainCommand(stdio),
		newGraphCommand(stdio),
		newFixCommand(stdio),
		newReportCommand(stdio),
		newRulesCommand(stdio),
		newExportCommand(stdio),
		newVersionCommand(stdio),
	)
	root.SetHelpCommand(newHelpCommand())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			refuseUnknownShells(c)
		}
	}
	usageArgs(root)
	return root
}

// Run executes the command line args and returns an error that ExitCode maps to
// an exit code.
func Run(ctx context.Context, args []string, stdio IO) error {
	root := Command(stdio)
	if isCompletionRequest(args) {
		registerCompletions(root)
	}
	// Never nil: cobra reads os.Args for nil.
	root.SetArgs(append([]string{}, args...))
	cmd, err := root.ExecuteContextC(ctx)
	var ue *UsageError
	if errors.As(err, &ue) && ue.Help == "" && cmd != nil {
		ue.Help = cmd.CommandPath() + " --help"
	}
	return err
}

// rootArgs refuses arguments to the root command: an unknown command, with the
// nearest commands.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range helpCommands(cmd) {
		names = append(names, c.Name())
	}
	return usagef("unknown command %q%s", args[0], suggest.DidYouMean(args[0], names))
}

// usageArgs makes every argument error of the tree a UsageError (exit 2):
// those of the commands cobra adds (completion) are plain errors.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			var ue *UsageError
			if err != nil && !errors.As(err, &ue) {
				return usagef("%s", err)
			}
			return err
		}
	}
	for _, s := range c.Commands() {
		usageArgs(s)
	}
}

// refuseUnknownShells makes "completion SHELL" with a shell cobra does not
// know a usage error that lists the shells (cobra prints the help and exits
// 0); a bare "completion" prints the help.
func refuseUnknownShells(completion *cobra.Command) {
	completion.Args = cobra.ArbitraryArgs
	completion.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		return usagef("unknown shell %q (want %s)", args[0], joinOr(shells))
	}
}

// newHelpCommand is help [COMMAND]: the help of flipflop or of a command, on
// standard output. An unknown command is a usage error, with the nearest.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:               "help [COMMAND]",
		Short:             "Print the help of flipflop or of a command (as COMMAND --help)",
		Long:              "Prints the help of flipflop, or of a command: its usage, what it does, its exit codes, examples and flags.",
		ValidArgsFunction: completeCommandNames,
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				var names []string
				if target != nil {
					for _, s := range helpCommands(target) {
						names = append(names, s.Name())
					}
				}
				typed := strings.Join(args, " ")
				if len(rest) > 0 {
					typed = rest[0]
				}
				msg := fmt.Sprintf("unknown help topic %q%s", strings.Join(args, " "), suggest.DidYouMean(typed, names))
				return &UsageError{Msg: msg, Help: c.Root().CommandPath() + " --help"}
			}
			return target.Help()
		},
	}
}
