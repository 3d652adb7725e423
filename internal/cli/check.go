package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/output"
)

var failLevels = []string{"error", "warning", "info", "never"}

// checkFlags are the flags of `flipflop check`.
type checkFlags struct {
	output          string
	failOn          string
	defaultBranch   string
	argocdNamespace string
	maxFileSize     int64
	repoRoots       []string
}

func newCheckFlags(name string) (*pflag.FlagSet, *checkFlags) {
	f := &checkFlags{}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.StringVarP(&f.output, "output", "o", "text", "output format: "+joinFormats())
	fs.StringVar(&f.failOn, "fail-on", "error", "exit 1 on findings at or above this severity: error, warning, info, never")
	fs.StringVar(&f.defaultBranch, "default-branch", "", "the branch HEAD stands for (default: main or master, whichever the estate uses)")
	fs.StringVar(&f.argocdNamespace, "argocd-namespace", "", "namespace of Applications when argocd-update or the Application omits it (default argocd)")
	fs.StringArrayVar(&f.repoRoots, "repo-root", nil, "a local checkout of a repository that ApplicationSet git generators read: expands them exactly (repeatable)")
	fs.Int64Var(&f.maxFileSize, "max-file-size", evaluator.DefaultMaxFileSize, "largest input file read, in bytes; larger files are reported as errors")
	return fs, f
}

func joinFormats() string {
	s := ""
	for i, f := range output.Formats() {
		if i > 0 {
			s += ", "
		}
		s += f
	}
	return s
}

func (f *checkFlags) validate() error {
	if !slices.Contains(output.Formats(), f.output) {
		return usagef("unknown output format %q (want one of %s)", f.output, joinFormats())
	}
	if !slices.Contains(failLevels, f.failOn) {
		return usagef("unknown --fail-on level %q (want error, warning, info or never)", f.failOn)
	}
	if f.maxFileSize <= 0 {
		return usagef("--max-file-size must be positive")
	}
	return nil
}

func (f *checkFlags) roots() ([]evaluator.RepoRoot, error) {
	var roots []evaluator.RepoRoot
	for _, dir := range f.repoRoots {
		r, err := evaluator.NewRepoRoot(dir)
		if err != nil {
			return nil, usagef("--repo-root: %v", err)
		}
		roots = append(roots, r)
	}
	return roots, nil
}

func (f *checkFlags) settings() evaluator.Settings {
	return evaluator.Settings{DefaultBranch: f.defaultBranch, ArgoCDNamespace: f.argocdNamespace}
}

func runCheck(ctx context.Context, args []string, stdio IO) error {
	fs, f := newCheckFlags("check")
	fs.SetOutput(stdio.Err)
	fs.Usage = func() {
		fmt.Fprintf(stdio.Err, "Usage: flipflop check [flags] PATH...\n\nChecks Kargo and Argo CD manifests in files, directories (recursively: .yaml, .yml, .json)\nand standard input (-).\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return usagef("%s", err)
	}
	if err := f.validate(); err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return usagef("check needs at least one PATH (a file, a directory, or - for stdin)")
	}
	ev, err := evaluator.New(ctx, f.settings())
	if err != nil {
		return err
	}
	roots, err := f.roots()
	if err != nil {
		return err
	}
	loader := &evaluator.Loader{MaxFileSize: f.maxFileSize, Stdin: stdio.In}
	objs, loadErrs := loader.Load(paths)
	objs, genErrs := evaluator.ExpandGitGenerators(objs, roots)
	loadErrs = append(loadErrs, genErrs...)
	report, err := ev.Evaluate(ctx, objs)
	if err != nil {
		return err
	}
	report.Errors = append(report.Errors, loadErrs...)
	if err := output.Write(stdio.Out, f.output, report, output.Options{Rules: ev.Rules()}); err != nil {
		return err
	}
	return verdict(report, f.failOn)
}

// verdict maps a printed report to the error ExitCode turns into the exit code:
// load errors win over findings.
func verdict(report *evaluator.Report, failOn string) error {
	if len(report.Errors) > 0 {
		return &IncompleteError{Count: len(report.Errors)}
	}
	if failOn != "never" && report.Count(failOn) > 0 {
		return ErrFindings
	}
	return nil
}
