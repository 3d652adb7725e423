package cli

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/fix"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// errNothingToFix: no finding fix handles, or none the chosen way applies to
// (exit 1; the reason has been printed).
var errNothingToFix = fmt.Errorf("nothing to fix: %w", ErrFindings)

var fixFormats = []string{"diff", "yaml"}

func fixWays() []string {
	var out []string
	for _, w := range fix.Ways() {
		out = append(out, string(w))
	}
	return out
}

const fixHelp = `Usage: flipflop fix [flags] PATH...

Previews the ways out of the findings of
  %s
as changes to the files that were read (nothing is written). Without --way it lists, per
finding, the ways that apply, each with its trade-off and the command that previews it.
With --way it prints the change for every finding that way applies to: a unified diff
whose paths are relative to the root of the Git work tree (as git apply reads them; outside
a work tree, to the current directory), so that

  flipflop fix --way WAY PATH... | git apply

applies it, or with -o yaml the patched documents. Notes and warnings go to standard error.

Exit codes: 0 a preview was printed, 1 nothing to fix, 2 a usage error or an input that
could not be read.

Flags:
%s`

func runFix(ctx context.Context, args []string, stdio IO) error {
	fs := pflag.NewFlagSet("fix", pflag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	var way, format string
	var in inputFlags
	fs.StringVar(&way, "way", "", "the way out to preview: "+joinOr(fixWays())+" (default: list the ways that apply)")
	fs.StringVarP(&format, "output", "o", "diff", "with --way: "+joinOr(fixFormats)+" (a unified diff for git apply, or the patched documents)")
	in.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stdio.Err, fixHelp, joinOr(fix.Rules()), fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	paths := fs.Args()
	if way != "" && !slices.Contains(fixWays(), way) {
		return usagef("unknown --way %q (want %s)", way, joinOr(fixWays()))
	}
	if !slices.Contains(fixFormats, format) {
		return usagef("unknown output format %q for fix (want %s)", format, joinOr(fixFormats))
	}
	if in.cluster.enabled() {
		return usagef("fix patches files: --cluster cannot be used with fix")
	}
	if slices.Contains(paths, "-") {
		return usagef("fix patches files: standard input (-) cannot be used with fix")
	}
	if err := in.validate(paths); err != nil {
		return err
	}
	settings, err := in.settings()
	if err != nil {
		return err
	}
	ev, err := evaluator.New(ctx, settings)
	if err != nil {
		return err
	}
	objs, loadErrs, _, err := in.load(ctx, paths, stdio)
	if err != nil {
		return err
	}
	if len(loadErrs) > 0 {
		// A patch computed from part of the estate could be wrong: print none.
		for _, e := range loadErrs {
			fmt.Fprintf(stdio.Err, "flipflop: %s\n", safetext.Text(e.Error()))
		}
		return &IncompleteError{Count: len(loadErrs)}
	}
	report, err := ev.Evaluate(ctx, objs)
	if err != nil {
		return err
	}
	model, err := ev.Model(ctx, objs)
	if err != nil {
		return err
	}
	plan, err := fix.New(objs, report, model, fix.Options{})
	if err != nil {
		return err
	}
	if len(plan.Proposals) == 0 {
		fmt.Fprintf(stdio.Err, "flipflop: nothing to fix: no finding of %s\n", joinOr(fix.Rules()))
		return errNothingToFix
	}
	if way == "" {
		var listing strings.Builder
		err := listWays(&listing, stdio.Err, plan, previewCommand(fs, paths))
		if _, werr := io.WriteString(stdio.Out, safetext.Lines(listing.String())); werr != nil {
			return werr
		}
		return err
	}
	patch, err := plan.Patch(fix.Way(way))
	if err != nil {
		return err
	}
	for _, s := range patch.Skipped {
		fmt.Fprintf(stdio.Err, "flipflop: %s does not apply to %s\n", way, safetext.Text(s))
	}
	if patch.Empty() {
		fmt.Fprintf(stdio.Err, "flipflop: nothing to fix with --way %s\n", way)
		return errNothingToFix
	}
	for _, n := range patch.Notes {
		fmt.Fprint(stdio.Err, safetext.Lines("note: "+strings.ReplaceAll(n, "\n", "\n      ")+"\n"))
	}
	if format == "yaml" {
		_, err = io.WriteString(stdio.Out, patch.YAML())
	} else {
		_, err = io.WriteString(stdio.Out, patch.Diff())
	}
	return err
}

// listWays prints, per finding, the ways that apply with their trade-off and
// the command that previews each.
func listWays(out, errw io.Writer, plan *fix.Plan, command func(fix.Way) string) error {
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
	if offered == 0 {
		fmt.Fprintln(errw, "flipflop: no way out can be previewed for these findings")
		return errNothingToFix
	}
	return nil
}

// previewCommand returns the command line that previews a way: flipflop fix
// with the flags given here (but --way and -o) and the paths.
func previewCommand(fs *pflag.FlagSet, paths []string) func(fix.Way) string {
	var flags []string
	fs.Visit(func(f *pflag.Flag) {
		if f.Name == "way" || f.Name == "output" {
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
		return strings.Join(append(parts, quoted...), " ")
	}
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
