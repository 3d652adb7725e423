package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/fix"
)

// Flag groups. pflag has none: each flag carries the id of its group in the
// annotation flagGroupKey, set where it is registered, and the help prints the
// groups in the order of flagGroups, the flags without one last.
const flagGroupKey = "flipflop_group"

const (
	groupFix       = "fix"
	groupInput     = "input"
	groupRules     = "rules"
	groupEstate    = "estate"
	groupRendering = "rendering"
	groupCluster   = "cluster"
	groupOutput    = "output"
)

// flagGroups are the groups in the order the help prints them, with their
// titles.
var flagGroups = []struct{ id, title string }{
	{groupFix, "Fix flags"},
	{groupInput, "Input flags"},
	{groupRules, "Rule flags (which rules run, at which severity)"},
	{groupEstate, "Estate flags (what the estate runs on)"},
	{groupRendering, "Rendering flags (Helm charts and kustomizations)"},
	{groupCluster, "Cluster flags"},
	{groupOutput, "Output flags"},
}

// setFlagGroup puts the flags named in a group. A name that is not a flag of
// fs is a mistake in flipflop: it panics (every command is built by the tests).
func setFlagGroup(fs *pflag.FlagSet, group string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, flagGroupKey, []string{group}); err != nil {
			panic(fmt.Sprintf("flag group %s: %v", group, err))
		}
	}
}

// flagGroup is the group id of a flag, "" for none.
func flagGroup(f *pflag.Flag) string {
	if g := f.Annotations[flagGroupKey]; len(g) > 0 {
		return g[0]
	}
	return ""
}

// fixableRules stands in a long description for the rules whose findings fix
// handles, until ExpandHelp fills them in: reading the rules' METADATA takes a
// quarter of a second, which every run would pay if the tree were built with it.
const fixableRules = "{{fixable rules}}"

// ExpandHelp fills in, in the long descriptions of c and its subcommands, what
// is left to the time the help is printed (fixableRules). The help does it;
// whatever else reads Long (the command reference) must call it first.
func ExpandHelp(c *cobra.Command) {
	if strings.Contains(c.Long, fixableRules) {
		rules, err := evaluator.BundleRules()
		list := joinOr(fix.Rules(rules))
		if err != nil {
			list = "the rules marked fixable (" + err.Error() + ")"
		}
		c.Long = strings.ReplaceAll(c.Long, fixableRules, list)
	}
	for _, s := range c.Commands() {
		ExpandHelp(s)
	}
}

// help prints the help of c on its standard output: the usage line, the long
// description, the examples, the subcommands and the flags by group.
func help(c *cobra.Command, _ []string) {
	// The error of a write to standard output has nowhere to go.
	_ = writeHelp(c.OutOrStdout(), c, true)
}

// usage prints the usage of c (help without the long description) on its
// standard error: what cobra prints for UsageString.
func usage(c *cobra.Command) error {
	return writeHelp(c.OutOrStderr(), c, false)
}

// writeHelp writes the help of c to w; long adds the long description.
func writeHelp(w io.Writer, c *cobra.Command, long bool) error {
	c.InitDefaultHelpFlag()
	ExpandHelp(c)
	var b strings.Builder
	text := strings.TrimRight(c.Long, "\n")
	if text == "" {
		text = c.Short
	}
	if c.HasParent() {
		fmt.Fprintf(&b, "Usage: %s\n", c.UseLine())
		if long {
			fmt.Fprintf(&b, "\n%s\n", text)
		}
	} else {
		if long {
			fmt.Fprintf(&b, "%s\n\n", text)
		}
		fmt.Fprintf(&b, "Usage:\n  %s COMMAND [flags]\n", c.CommandPath())
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "\nExamples:\n%s\n", strings.TrimRight(c.Example, "\n"))
	}
	if subs := helpCommands(c); len(subs) > 0 {
		b.WriteString("\nCommands:\n")
		pad := 0
		for _, s := range subs {
			pad = max(pad, len(s.Name()))
		}
		for _, s := range subs {
			fmt.Fprintf(&b, "  %-*s  %s\n", pad, s.Name(), s.Short)
		}
	}
	writeFlagGroups(&b, c.NonInheritedFlags(), helpWidth(w))
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\nRun '%s COMMAND --help' (or '%s help COMMAND') for a command's help.\n", c.CommandPath(), c.Root().CommandPath())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// helpCommands are the subcommands the help of c lists: those not hidden,
// and help.
func helpCommands(c *cobra.Command) []*cobra.Command {
	var subs []*cobra.Command
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() || s.Name() == "help" && !s.Hidden {
			subs = append(subs, s)
		}
	}
	return subs
}

// writeFlagGroups writes the flags of fs by group (FlagSections), each
// wrapped to width columns.
func writeFlagGroups(b *strings.Builder, fs *pflag.FlagSet, width int) {
	for _, s := range flagSections(fs) {
		fmt.Fprintf(b, "\n%s:\n%s", s.Title, s.Flags.FlagUsagesWrapped(width))
	}
}

// FlagSection is a group of a command's flags, as its help prints it.
type FlagSection struct {
	Title string // "Input flags"
	Flags *pflag.FlagSet
}

// FlagSections returns the flags of c (its own, not hidden) by group, as its
// help prints them: the groups in the order of flagGroups, then the flags of
// none ("Flags" when no flag has a group, else "Other flags").
func FlagSections(c *cobra.Command) []FlagSection {
	c.InitDefaultHelpFlag()
	return flagSections(c.NonInheritedFlags())
}

func flagSections(fs *pflag.FlagSet) []FlagSection {
	sets := map[string]*pflag.FlagSet{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g := flagGroup(f)
		if sets[g] == nil {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
		}
		sets[g].AddFlag(f)
	})
	var out []FlagSection
	for _, g := range flagGroups {
		if s := sets[g.id]; s != nil {
			out = append(out, FlagSection{g.title, s})
		}
	}
	if s := sets[""]; s != nil {
		title := "Other flags"
		if len(sets) == 1 {
			title = "Flags"
		}
		out = append(out, FlagSection{title, s})
	}
	return out
}

// helpWidth is the width help is wrapped to: the terminal's, within 60 and
// 120 columns, or 100 when w is not a terminal.
func helpWidth(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok && isTerminal(w) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return min(max(cols, 60), 120)
		}
	}
	return 100
}

// examples formats the example command lines of a help, each "CMD # comment"
// or "CMD": flipflop named as the user invoked it (programName), the comments
// aligned.
func examples(lines ...string) string {
	name := programName()
	cmds := make([]string, len(lines))
	comments := make([]string, len(lines))
	width := 0
	for i, l := range lines {
		cmd, comment, _ := strings.Cut(l, " # ")
		cmds[i] = strings.ReplaceAll(strings.TrimSpace(cmd), "flipflop ", name+" ")
		comments[i] = comment
		if comment != "" {
			width = max(width, len(cmds[i]))
		}
	}
	var b strings.Builder
	for i, cmd := range cmds {
		if comments[i] == "" {
			fmt.Fprintf(&b, "  %s\n", cmd)
			continue
		}
		fmt.Fprintf(&b, "  %-*s  # %s\n", width, cmd, comments[i])
	}
	return strings.TrimSuffix(b.String(), "\n")
}
