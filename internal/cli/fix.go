package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/fix"
	"github.com/flipflop-dev/flipflop/internal/output"
	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/version"
)

var fixFormats = []string{"diff", "yaml"}

func fixWays() []string {
	var out []string
	for _, w := range fix.Ways() {
		out = append(out, string(w))
	}
	return out
}

const fixLong = `Previews the ways out of the findings of
  ` + fixableRules + `
as changes to the files that were read. Without --way it lists, per finding, the ways
that apply, each with its trade-off and the command that previews it. With --way it
prints the change for every finding that way applies to: a unified diff whose paths are
relative to the top of the Git work tree (outside a work tree, to the current directory),
or with -o yaml the patched documents. Notes and warnings go to standard error.

To apply the change, either let fix write the files (only files under the PATHs given;
it prints the diff, then checks the PATHs again and prints the result):

  %[1]s fix --way WAY --apply PATH...

or apply the diff with git at the top of the work tree (git apply run in a subdirectory
skips the files outside it; fix says so when that would happen):

  %[1]s fix --way WAY PATH... | git -C "$(git rev-parse --show-toplevel)" apply

Exit codes:
  0  a preview was printed (with --apply: written, and the check after it has no finding
     at or above --fail-on); or there is nothing to fix (fix says so) and no finding at or
     above --fail-on
  1  fix changes nothing (nothing to fix, no way out applies, or the chosen way applies to
     none of the findings) and findings at or above --fail-on remain; with --apply, findings
     at or above --fail-on remain after the change
  2  a usage error, an input that could not be read, no Kargo Stage and no Argo CD
     Application among the inputs, or a file that could not be written`

// fixFlags are the flags of flipflop fix.
type fixFlags struct {
	way, format, failOn string
	apply               bool
	in                  inputFlags
}

func newFixCommand(stdio IO) *cobra.Command {
	f := &fixFlags{}
	cmd := &cobra.Command{
		Use:   "fix [flags] PATH...",
		Short: "Preview the ways out of the findings as a patch (--way W --apply writes it)",
		Long:  fmt.Sprintf(fixLong, programName()),
		Example: examples(
			"flipflop fix gitops/ # the ways out of each finding, with their trade-offs",
			"flipflop fix --way stage-branches gitops/ # the change, as a diff",
			"flipflop fix --way stage-branches --apply gitops/ # write it, then check again",
		),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, paths []string) error {
			return runFix(cmd.Context(), cmd.Flags(), f, paths, stdio)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.way, "way", "", "the way out to preview: "+joinOr(fixWays())+" (default: list the ways that apply)")
	fs.BoolVar(&f.apply, "apply", false, "with --way: write the change to the files (only files under the PATHs given), print the diff, then check the PATHs again and print the result")
	fs.StringVarP(&f.format, "output", "o", "diff", "with --way: "+joinOr(fixFormats)+" (a unified diff for git apply, or the patched documents)")
	fs.StringVar(&f.failOn, "fail-on", "error", "exit 1 when findings at or above this severity remain: after --apply, or when there is nothing fix can change: "+joinOr(failLevels))
	setFlagGroup(fs, groupFix, "way", "apply")
	setFlagGroup(fs, groupOutput, "output", "fail-on")
	setFlagChoices(fs, "way", fixWays()...)
	setFlagChoices(fs, "output", fixFormats...)
	setFlagChoices(fs, "fail-on", failLevels...)
	f.in.register(fs)
	return cmd
}

func runFix(ctx context.Context, fs *pflag.FlagSet, f *fixFlags, paths []string, stdio IO) error {
	way, format, apply, in := f.way, f.format, f.apply, &f.in
	if way != "" && !slices.Contains(fixWays(), way) {
		return usagef("unknown --way %q (want %s)", way, joinOr(fixWays()))
	}
	if !slices.Contains(fixFormats, format) {
		return usagef("unknown output format %q for fix (want %s)", format, joinOr(fixFormats))
	}
	if !slices.Contains(failLevels, f.failOn) {
		return usagef("unknown --fail-on level %q (want %s)", f.failOn, joinOr(failLevels))
	}
	if slices.Contains(paths, "-") {
		return usagef("fix patches files: standard input (-) cannot be used with fix")
	}
	if apply && way == "" {
		return usagef("--apply needs --way: run '%s fix PATH...' to see the ways that apply", programName())
	}
	if apply && format != "diff" {
		return usagef("--apply prints the change as a diff: -o %s cannot be used with it", format)
	}
	l, err := in.prepare(ctx, paths, stdio)
	if err != nil {
		return err
	}
	if len(l.errs) > 0 {
		// A patch computed from part of the estate could be wrong: print none.
		return loadErrors(l.errs, stdio.Err)
	}
	objs := l.objs
	report, model, err := l.analyze(ctx, evaluator.Detailed())
	if err != nil {
		return err
	}
	plan, err := fix.New(objs, report, model, fix.Options{Rules: l.ev.Rules()})
	if err != nil {
		return err
	}
	if len(plan.Proposals) == 0 {
		// Nothing to fix is the result, not an error: said where the
		// listing or the diff would be.
		msg := fmt.Sprintf("nothing to fix: no finding of %s%s\n", joinOr(fix.Rules(l.ev.Rules())), remaining(report, f.failOn))
		w := stdio.Out
		if way != "" {
			w, msg = stdio.Err, "flipflop: "+msg // standard output stays a diff (empty)
		}
		if _, err := io.WriteString(w, msg); err != nil {
			return err
		}
		return verdict(report, f.failOn)
	}
	if way == "" {
		var listing strings.Builder
		offered := listWays(&listing, plan, previewCommand(fs, paths, nil))
		if _, werr := io.WriteString(stdio.Out, safetext.Lines(listing.String())); werr != nil {
			return werr
		}
		if offered == 0 {
			fmt.Fprintf(stdio.Err, "flipflop: no way out can be previewed for these findings%s\n", remaining(report, f.failOn))
			return verdict(report, f.failOn)
		}
		return nil
	}
	patch, err := plan.Patch(fix.Way(way))
	if err != nil {
		return err
	}
	for _, s := range patch.Skipped {
		fmt.Fprintf(stdio.Err, "flipflop: %s does not apply to %s\n", way, safetext.Text(s))
	}
	if patch.Empty() {
		fmt.Fprintf(stdio.Err, "flipflop: nothing to fix with --way %s%s\n", way, remaining(report, f.failOn))
		return verdict(report, f.failOn)
	}
	for _, n := range patch.Notes {
		fmt.Fprint(stdio.Err, safetext.Lines("note: "+strings.ReplaceAll(n, "\n", "\n      ")+"\n"))
	}
	if format == "yaml" {
		_, err = io.WriteString(stdio.Out, patch.YAML())
		return err
	}
	if _, err := io.WriteString(stdio.Out, patch.Diff()); err != nil {
		return err
	}
	if !apply {
		applyNote(stdio.Err, patch)
		return nil
	}
	written, err := patch.Write(paths)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Err, "%s: wrote %s: %s\n", programName(), nounCount(len(written), "file"), safetext.Text(strings.Join(written, ", ")))
	return recheck(ctx, in, l.ev, paths, f.failOn, stdio)
}

// remaining says, after what fix could not change, how many findings at or
// above failOn remain ("" when none: the exit code is then 0).
func remaining(report *evaluator.Report, failOn string) string {
	if failOn == "never" {
		return ""
	}
	n := report.Count(failOn)
	if n == 0 {
		return ""
	}
	verb := "remain"
	if n == 1 {
		verb = "remains"
	}
	return fmt.Sprintf("; %s at or above %s %s ('%s check' lists them)", nounCount(n, "finding"), failOn, verb, programName())
}

// applyNote tells the user, when the diff's paths start above the working
// directory and some file lies outside it, that git apply must run at the top
// of the work tree: run in a subdirectory, it skips those files ("Skipped
// patch") and exits 0.
func applyNote(w io.Writer, patch *fix.Patch) {
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	top := fix.WorkTreeRoot(wd)
	if top == wd {
		return
	}
	for _, f := range patch.Files {
		abs, err := filepath.Abs(filepath.FromSlash(f.Path))
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(wd, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			fmt.Fprintf(w, "note: the diff's paths start at the top of the Git work tree (%s) and %s lies outside this directory: "+
				"git apply run here would skip it. Apply with: ... | git -C \"$(git rev-parse --show-toplevel)\" apply, or run fix with --apply.\n",
				safetext.Text(filepath.ToSlash(top)), safetext.Text(f.Path))
			return
		}
	}
}

// recheck checks paths again after fix --apply and prints the text report:
// the exit code is check's (0 clean, 1 findings at or above failOn, 2 input
// errors).
func recheck(ctx context.Context, in *inputFlags, ev *evaluator.Evaluator, paths []string, failOn string, stdio IO) error {
	r, err := in.load(ctx, paths, stdio)
	if err != nil {
		return err
	}
	in.progress.evaluating(len(r.Objects))
	report, err := ev.Evaluate(ctx, r.Objects)
	in.progress.done()
	if err != nil {
		return err
	}
	report.Errors = append(report.Errors, r.Errors...)
	report.Excluded = r.Excluded
	report.Summary.Skipped = r.Skipped
	fmt.Fprintf(stdio.Out, "\n%s check after the change:\n\n", programName())
	if err := output.Write(stdio.Out, "text", report, output.Options{Rules: ev.Rules(), Color: output.ColorAuto, Version: version.String(), FailOn: failOn}); err != nil {
		return err
	}
	return verdict(report, failOn)
}

// listWays prints, per finding, the ways that apply with their trade-off and
// the command that previews each, and returns how many ways it offered.
func listWays(out io.Writer, plan *fix.Plan, command func(fix.Way) string) int {
	offered := 0
	for i, p := range plan.Proposals {
		f := p.Finding
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s  %s  %s\n", strings.ToUpper(f.Severity), f.Rule, f.Title)
		var involved []string
		for _, r := range f.Resources {
			name := safetext.Name(r.Name)
			if r.Namespace != "" {
				name = safetext.Name(r.Namespace) + "/" + name
			}
			involved = append(involved, r.Kind+" "+name)
		}
		fmt.Fprintf(out, "  about     %s\n", f.Key)
		fmt.Fprintf(out, "  involves  %s\n", strings.Join(involved, ", "))
		var notOffered []fix.Option
		for _, o := range p.Options {
			if !o.Applicable {
				notOffered = append(notOffered, o)
				continue
			}
			offered++
			partial := ""
			if o.Partial {
				partial = " (partly: the preview says what is left to do by hand)"
			}
			fmt.Fprintf(out, "  %-23s %s%s\n", o.Way, o.Way.TradeOff(), partial)
			fmt.Fprintf(out, "  %-23s $ %s\n", "", command(o.Way))
		}
		for _, o := range notOffered {
			fmt.Fprintf(out, "  not offered: %s: %s\n", o.Way, o.Reason)
		}
	}
	if offered > 0 {
		fmt.Fprintf(out, "\nEach command prints the change as a diff; add --apply to write it to the files and check again.\n")
	}
	return offered
}

// previewCommand returns the command line that previews a way: flipflop fix
// with the flags given in fs (but --way and -o; only those keep accepts, when
// not nil), then --, then the paths: a path that reads as a flag
// ("--apply=true", a directory a pull request can add) stays a path.
func previewCommand(fs *pflag.FlagSet, paths []string, keep func(name string) bool) func(fix.Way) string {
	var flags []string
	fs.Visit(func(f *pflag.Flag) {
		if f.Name == "way" || f.Name == "output" || f.Name == "progress" || keep != nil && !keep(f.Name) {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				flags = append(flags, "--"+f.Name+"="+shellQuote(v))
			}
			return
		}
		flags = append(flags, "--"+f.Name+"="+shellQuote(f.Value.String()))
	})
	var quoted []string
	for _, p := range paths {
		quoted = append(quoted, shellQuote(p))
	}
	return func(w fix.Way) string {
		parts := append([]string{"flipflop", "fix", "--way", string(w)}, flags...)
		parts = append(parts, "--")
		return strings.Join(append(parts, quoted...), " ")
	}
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// shellQuote quotes s for a command line flipflop prints, which is escaped
// for the terminal afterwards (safetext): as is when nothing in it needs
// quoting, else in single quotes, and in bash's $'...' when it holds what the
// escaping would change (bytes that are not UTF-8, control and format
// characters, CI log commands). There the escapes are safetext's own (\xff,
// \u202e, \x3a), which bash reads back into the exact bytes: in single quotes
// they would name another file (a\xff with a backslash, not the byte 0xff).
func shellQuote(s string) string {
	if safetext.Text(s) != s {
		q := safetext.Quote(s)
		return "$'" + strings.ReplaceAll(q[1:len(q)-1], "'", `\'`) + "'"
	}
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
