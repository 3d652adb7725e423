package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// flagChoicesKey annotates a flag that takes one of a few values with them:
// the shell completes them (registerCompletions).
const flagChoicesKey = "flipflop_choices"

// setFlagChoices records the values a flag takes, for completion.
func setFlagChoices(fs *pflag.FlagSet, name string, choices ...string) {
	if err := fs.SetAnnotation(name, flagChoicesKey, choices); err != nil {
		panic("flag choices: " + err.Error()) // a misspelt name: every command is built by the tests
	}
}

// setFlagFiles marks flags whose value is a file: the shell completes file
// names (with one of exts, when given).
func setFlagFiles(fs *pflag.FlagSet, exts []string, names ...string) {
	for _, n := range names {
		if err := cobra.MarkFlagFilename(fs, n, exts...); err != nil {
			panic("flag files: " + err.Error())
		}
	}
}

// setFlagDirs marks flags whose value is a directory.
func setFlagDirs(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		if err := cobra.MarkFlagDirname(fs, n); err != nil {
			panic("flag dirs: " + err.Error())
		}
	}
}

// isCompletionRequest reports whether args ask for shell completions (the
// hidden command the completion scripts run).
func isCompletionRequest(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// registerCompletions registers how the value of each flag of the tree
// completes: the choices of setFlagChoices; file and directory names for the
// flags setFlagFiles and setFlagDirs marked; rule ids for the flags that name
// a rule; kubeconfig contexts for --context; nothing for the other flags that
// take a value. Run calls it only for a completion request: cobra keeps the
// functions in a map of its own for the life of the process, which a run that
// builds the tree anew each time (tests, embedders) would fill.
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if _, done := c.GetFlagCompletionFunc(f.Name); done || f.Value.Type() == "bool" {
				return
			}
			var fn cobra.CompletionFunc
			switch {
			case len(f.Annotations[flagChoicesKey]) > 0:
				fn = cobra.FixedCompletions(f.Annotations[flagChoicesKey], cobra.ShellCompDirectiveNoFileComp)
			case f.Annotations[cobra.BashCompFilenameExt] != nil, f.Annotations[cobra.BashCompSubdirsInDir] != nil:
				return // cobra completes file or directory names
			case f.Name == "rule", f.Name == "skip-rule":
				fn = completeRuleList
			case f.Name == "severity":
				fn = completeSeverity
			case f.Name == "context":
				fn = completeContexts
			default:
				fn = cobra.NoFileCompletions
			}
			_ = c.RegisterFlagCompletionFunc(f.Name, fn) // the flag exists: no error
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// completeRuleIDs completes a rule id: the ids that start with what is typed,
// each with its title. When none does, the shell completes file names (explain
// takes a rule or paths).
func completeRuleIDs(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	rules, err := evaluator.BundleRules()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, r := range rules {
		if strings.HasPrefix(r.ID, toComplete) {
			out = append(out, cobra.CompletionWithDesc(r.ID, r.Title))
		}
	}
	return out, cobra.ShellCompDirectiveDefault
}

// completeRuleList completes --rule and --skip-rule, which take a rule id or
// a comma-separated list of them: the last id of the list.
func completeRuleList(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	head, last := splitList(toComplete)
	ids, directive := completeRuleIDs(cmd, args, last)
	if directive == cobra.ShellCompDirectiveError {
		return nil, directive
	}
	for i, c := range ids {
		ids[i] = head + c
	}
	return ids, cobra.ShellCompDirectiveNoFileComp
}

// completeSeverity completes --severity RULE=LEVEL (a comma-separated list of
// them): a rule id followed by "=", then the levels.
func completeSeverity(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	head, last := splitList(toComplete)
	if id, level, ok := strings.Cut(last, "="); ok {
		var out []cobra.Completion
		for _, l := range severityLevels {
			if strings.HasPrefix(l, level) {
				out = append(out, head+id+"="+l)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	ids, directive := completeRuleIDs(cmd, args, last)
	if directive == cobra.ShellCompDirectiveError {
		return nil, directive
	}
	for i, c := range ids {
		id, desc, _ := strings.Cut(c, "\t")
		ids[i] = cobra.CompletionWithDesc(head+id+"=", desc)
	}
	return ids, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// splitList splits a comma-separated value being typed into what precedes
// its last element (with the comma) and that element.
func splitList(s string) (head, last string) {
	i := strings.LastIndexByte(s, ',')
	return s[:i+1], s[i+1:]
}

// completeContexts completes --context with the contexts of the kubeconfig
// (--kubeconfig, else $KUBECONFIG or ~/.kube/config), as kubectl does.
func completeContexts(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f := cmd.Flags().Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
		rules.ExplicitPath = f.Value.String()
	}
	cfg, err := rules.Load()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for name := range cfg.Contexts {
		if strings.HasPrefix(name, toComplete) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeCommandNames completes the subcommands of the command args name
// (help COMMAND).
func completeCommandNames(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	target, rest, err := c.Root().Find(args)
	if err != nil || len(rest) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, s := range helpCommands(target) {
		if strings.HasPrefix(s.Name(), toComplete) {
			out = append(out, cobra.CompletionWithDesc(s.Name(), s.Short))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
