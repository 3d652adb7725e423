package cli

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
)

// inputFlags select what a command reads: files, directories and stdin, a live
// cluster, or both; and the settings of the model. check, explain and graph
// share them.
type inputFlags struct {
	defaultBranch    string
	argocdNamespaces []string
	maxFileSize      int64
	repoRoots        []string
	waiversFile      string
	noWaivers        bool
	followSymlinks   bool
	cluster          clusterFlags
}

// DefaultWaiversFile is read, when present in the working directory, unless
// --waivers names another file.
const DefaultWaiversFile = ".flipflop.yaml"

func (in *inputFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&in.defaultBranch, "default-branch", "", "the branch HEAD stands for (default: main or master, whichever the estate uses)")
	fs.StringArrayVar(&in.argocdNamespaces, "argocd-namespace", nil, "Argo CD's namespace: where Applications live when argocd-update or the Application omits it (default argocd); with --cluster, repeat it to read Applications from more namespaces (apps in any namespace)")
	fs.StringArrayVar(&in.repoRoots, "repo-root", nil, "a local checkout of a repository that ApplicationSet git generators read: expands them exactly (repeatable)")
	fs.StringVar(&in.waiversFile, "waivers", "", "waivers file: waivers: [{rule, resources: [Kind/namespace/name globs], reason, expires}] (default "+DefaultWaiversFile+" when present)")
	fs.BoolVar(&in.noWaivers, "no-waivers", false, "honour no waiver the inputs bring (flipflop.dev/ignore annotations, "+DefaultWaiversFile+"), only --waivers FILE: for CI that must not let a pull request waive its own findings")
	fs.BoolVar(&in.followSymlinks, "follow-symlinks", false, "read files that symbolic links in a directory point to outside it (default: report them and skip)")
	fs.Int64Var(&in.maxFileSize, "max-file-size", evaluator.DefaultMaxFileSize, "largest input file read, in bytes; larger files are reported as errors")
	in.cluster.register(fs)
}

func (in *inputFlags) validate(paths []string) error {
	if in.maxFileSize <= 0 {
		return usagef("--max-file-size must be positive")
	}
	if len(paths) == 0 && !in.cluster.enabled() {
		return usagef("give at least one PATH (a file, a directory, or - for stdin), or --cluster")
	}
	return in.cluster.validate()
}

func (in *inputFlags) settings() (evaluator.Settings, error) {
	s := evaluator.Settings{DefaultBranch: in.defaultBranch}
	if len(in.argocdNamespaces) > 0 {
		s.ArgoCDNamespace = in.argocdNamespaces[0]
	}
	s.IgnoreAnnotationWaivers = in.noWaivers
	file := in.waiversFile
	if file == "" && !in.noWaivers {
		if _, err := os.Lstat(DefaultWaiversFile); err == nil {
			file = DefaultWaiversFile
		}
	}
	if file != "" {
		ws, err := (&evaluator.Loader{MaxFileSize: in.maxFileSize}).ReadWaivers(file)
		if err != nil {
			return s, usagef("--waivers: %v", err)
		}
		s.Waivers = ws
	}
	return s, nil
}

func (in *inputFlags) roots() ([]evaluator.RepoRoot, error) {
	var roots []evaluator.RepoRoot
	for _, dir := range in.repoRoots {
		r, err := evaluator.NewRepoRoot(dir)
		if err != nil {
			return nil, usagef("--repo-root: %v", err)
		}
		r.MaxFileSize = in.maxFileSize
		roots = append(roots, r)
	}
	return roots, nil
}

// loaded is what a command works on: the evaluator with the settings of the
// flags, the objects read, and what could not be read.
type loaded struct {
	ev       *evaluator.Evaluator
	settings evaluator.Settings
	objs     []evaluator.Object
	errs     []evaluator.LoadError
	skipped  int // objects of kinds no rule reads, dropped unconverted
}

// prepare validates the input flags, builds the evaluator and reads the inputs:
// the common start of check, explain, graph and diagnose.
func (in *inputFlags) prepare(ctx context.Context, paths []string, stdio IO) (*loaded, error) {
	if err := in.validate(paths); err != nil {
		return nil, err
	}
	settings, err := in.settings()
	if err != nil {
		return nil, err
	}
	ev, err := evaluator.New(ctx, settings)
	if err != nil {
		return nil, err
	}
	objs, errs, skipped, err := in.load(ctx, paths, stdio)
	if err != nil {
		return nil, err
	}
	return &loaded{ev: ev, settings: settings, objs: objs, errs: errs, skipped: skipped}, nil
}

// modelAndReport evaluates the loaded objects twice: the model as plain data
// (for drawing and explaining) and the findings.
func (l *loaded) modelAndReport(ctx context.Context) (*evaluator.Model, *evaluator.Report, error) {
	model, err := l.ev.Model(ctx, l.objs)
	if err != nil {
		return nil, nil, err
	}
	report, err := l.ev.Evaluate(ctx, l.objs)
	if err != nil {
		return nil, nil, err
	}
	report.Summary.Skipped = l.skipped
	return model, report, nil
}

// load reads the objects of paths and, with --cluster, of the cluster; every
// input that could not be read becomes a LoadError, and the rest is returned.
// Objects of kinds no rule reads are dropped, and counted in skipped.
func (in *inputFlags) load(ctx context.Context, paths []string, stdio IO) (objs []evaluator.Object, errs []evaluator.LoadError, skipped int, err error) {
	roots, err := in.roots()
	if err != nil {
		return nil, nil, 0, err
	}
	if len(paths) > 0 {
		loader := &evaluator.Loader{MaxFileSize: in.maxFileSize, Stdin: stdio.In, FollowSymlinks: in.followSymlinks}
		r := loader.Read(paths)
		objs, errs, skipped = r.Objects, r.Errors, r.Skipped
	}
	if in.cluster.enabled() {
		cobjs, cerrs, err := in.cluster.load(ctx, stdio)
		if err != nil {
			return nil, nil, 0, err
		}
		objs = append(objs, cobjs...)
		errs = append(errs, cerrs...)
		// The file's copy of an object wins over the cluster's: it is the change being checked.
		ns := ""
		if len(in.argocdNamespaces) > 0 {
			ns = in.argocdNamespaces[0]
		}
		objs = cluster.Merge(objs, ns)
		read := objs[:0]
		for _, o := range objs {
			if evaluator.ReadKind(o.APIVersion, o.Kind) {
				read = append(read, o)
			} else {
				skipped++
			}
		}
		objs = read
	}
	objs, genErrs := evaluator.ExpandGitGenerators(objs, roots)
	return objs, append(errs, genErrs...), skipped, nil
}

// joinOr lists choices for messages: "a, b or c".
func joinOr(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}
