package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
	"github.com/flipflop-dev/flipflop/internal/render"
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
	followSymlinks   bool
	read             string
	helm             render.HelmOptions
	valuesFiles      []string
	renderTimeout    time.Duration
	cluster          clusterFlags
}

// Read modes: how directories are read.
const (
	readAuto  = "auto"
	readPlain = "plain"
)

var readModes = []string{readAuto, readPlain}

// readHelp says how paths are read, for the commands' --help.
const readHelp = `How a path is read (--read auto, the default):
  a directory with kustomization.yaml (.yml, Kustomization)  built with Kustomize: only what it
      lists counts, with its patches; a kustomization another one reads is counted there
  a directory with Chart.yaml  rendered with Helm: values.yaml, then --values, --set, --set-string
  any other directory  walked for .yaml, .yml and .json files, each read as it stands
  a file  read as it stands (a kustomization.yaml or Chart.yaml stands for its directory)
--read plain reads every file as it stands, charts and kustomizations included. Rendering is
offline (remote bases and unvendored chart dependencies are input errors), reads only inside
the paths given and --repo-root, and is limited in time (--render-timeout), memory and output
(--max-file-size); the output lists the directories rendered and how.
`

// DefaultWaiversFile is read, when present in the working directory, unless
// --waivers names another file.
const DefaultWaiversFile = ".flipflop.yaml"

func (in *inputFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&in.defaultBranch, "default-branch", "", "the branch HEAD stands for (default: main or master, whichever the estate uses)")
	fs.StringArrayVar(&in.argocdNamespaces, "argocd-namespace", nil, "Argo CD's namespace: where Applications live when argocd-update or the Application omits it (default argocd); with --cluster, repeat it to read Applications from more namespaces (apps in any namespace)")
	fs.StringArrayVar(&in.repoRoots, "repo-root", nil, "a local checkout of a repository that ApplicationSet git generators read: expands them exactly (repeatable)")
	fs.StringVar(&in.waiversFile, "waivers", "", "waivers file: waivers: [{rule, resources: [Kind/namespace/name globs], reason, expires}] (default "+DefaultWaiversFile+" when present)")
	fs.BoolVar(&in.followSymlinks, "follow-symlinks", false, "read files that symbolic links in a directory point to outside it (default: report them and skip)")
	fs.Int64Var(&in.maxFileSize, "max-file-size", evaluator.DefaultMaxFileSize, "largest input file read, in bytes; larger files are reported as errors (and the largest output of one rendered chart or kustomization)")
	fs.StringVar(&in.read, "read", readAuto, "how directories are read: auto (a directory with kustomization.yaml is built with Kustomize, one with Chart.yaml is rendered with Helm, the rest is plain YAML) or plain (every .yaml, .yml and .json file as it stands)")
	fs.StringArrayVar(&in.valuesFiles, "values", nil, "a Helm values file for every chart rendered, over the chart's values.yaml (repeatable; later files win)")
	fs.StringArrayVar(&in.helm.Set, "set", nil, "a Helm value for every chart rendered: key=value as helm --set (repeatable)")
	fs.StringArrayVar(&in.helm.SetString, "set-string", nil, "a Helm string value for every chart rendered: key=value as helm --set-string (repeatable)")
	fs.StringVar(&in.helm.ReleaseName, "release-name", "", "the Helm release name (.Release.Name) charts are rendered with (default: the chart's name)")
	fs.StringVar(&in.helm.Namespace, "release-namespace", "", "the Helm release namespace (.Release.Namespace) charts are rendered with (default: default)")
	fs.DurationVar(&in.renderTimeout, "render-timeout", render.DefaultTimeout, "time limit for rendering one chart or kustomization")
	in.cluster.register(fs)
}

func (in *inputFlags) validate(paths []string) error {
	if in.maxFileSize <= 0 {
		return usagef("--max-file-size must be positive")
	}
	if len(paths) == 0 && !in.cluster.enabled() {
		return usagef("give at least one PATH (a file, a directory, or - for stdin), or --cluster")
	}
	if !slices.Contains(readModes, in.read) {
		return usagef("unknown --read mode %q (want %s)", in.read, joinOr(readModes))
	}
	if in.read == readPlain && (len(in.valuesFiles) > 0 || len(in.helm.Set) > 0 || len(in.helm.SetString) > 0) {
		return usagef("--values, --set and --set-string render charts: they cannot be used with --read plain")
	}
	if in.renderTimeout <= 0 {
		return usagef("--render-timeout must be positive")
	}
	return in.cluster.validate()
}

func (in *inputFlags) settings() (evaluator.Settings, error) {
	s := evaluator.Settings{DefaultBranch: in.defaultBranch}
	if len(in.argocdNamespaces) > 0 {
		s.ArgoCDNamespace = in.argocdNamespaces[0]
	}
	file := in.waiversFile
	if file == "" {
		if _, err := os.Stat(DefaultWaiversFile); err == nil {
			file = DefaultWaiversFile
		}
	}
	if file != "" {
		ws, err := evaluator.LoadWaivers(file)
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
		roots = append(roots, r)
	}
	return roots, nil
}

// loaded is what a command works on: the evaluator with the settings of the
// flags, the objects read, what could not be read, and the directories
// rendered.
type loaded struct {
	ev       *evaluator.Evaluator
	settings evaluator.Settings
	objs     []evaluator.Object
	errs     []evaluator.LoadError
	rendered []evaluator.RenderedRoot
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
	objs, errs, rendered, err := in.loadRendered(ctx, paths, stdio)
	if err != nil {
		return nil, err
	}
	return &loaded{ev: ev, settings: settings, objs: objs, errs: errs, rendered: rendered}, nil
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
	return model, report, nil
}

// load reads the objects of paths and, with --cluster, of the cluster; every
// input that could not be read becomes a LoadError, and the rest is returned.
func (in *inputFlags) load(ctx context.Context, paths []string, stdio IO) ([]evaluator.Object, []evaluator.LoadError, error) {
	objs, errs, _, err := in.loadRendered(ctx, paths, stdio)
	return objs, errs, err
}

// renderer returns the renderer of charts and kustomizations (nil with --read
// plain): confined to the paths given and the --repo-root checkouts.
func (in *inputFlags) renderer(paths []string, roots []evaluator.RepoRoot) (*render.Renderer, error) {
	if in.read == readPlain {
		return nil, nil
	}
	r := &render.Renderer{
		Roots:       render.RootsOf(paths),
		MaxFileSize: in.maxFileSize,
		Timeout:     in.renderTimeout,
		Helm:        in.helm,
	}
	for _, root := range roots {
		if rr, err := render.NewRoot(root.Dir); err == nil {
			r.Roots = append(r.Roots, rr)
		}
	}
	for _, f := range in.valuesFiles {
		data, err := readValuesFile(f, in.maxFileSize)
		if err != nil {
			return nil, usagef("--values: %v", err)
		}
		r.Helm.ValuesFiles = append(r.Helm.ValuesFiles, render.NamedData{Name: filepath.ToSlash(f), Data: data})
	}
	return r, nil
}

// readValuesFile reads a --values file: a regular file of at most limit bytes.
func readValuesFile(name string, limit int64) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is larger than --max-file-size", name)
	}
	return os.ReadFile(name)
}

// loadRendered is load that also says which directories were rendered.
func (in *inputFlags) loadRendered(ctx context.Context, paths []string, stdio IO) ([]evaluator.Object, []evaluator.LoadError, []evaluator.RenderedRoot, error) {
	roots, err := in.roots()
	if err != nil {
		return nil, nil, nil, err
	}
	var objs []evaluator.Object
	var errs []evaluator.LoadError
	var rendered []evaluator.RenderedRoot
	if len(paths) > 0 {
		loader := &evaluator.Loader{MaxFileSize: in.maxFileSize, Stdin: stdio.In, FollowSymlinks: in.followSymlinks}
		r, err := in.renderer(paths, roots)
		if err != nil {
			return nil, nil, nil, err
		}
		if r != nil {
			loader.Renderer = r
		}
		objs, errs, rendered = loader.LoadRendered(paths)
		for i := range rendered {
			for j, f := range rendered[i].NotListed {
				rendered[i].NotListed[j] = render.Sanitize(f) // file names are input too
			}
		}
	}
	if in.cluster.enabled() {
		cobjs, cerrs, err := in.cluster.load(ctx, stdio)
		if err != nil {
			return nil, nil, nil, err
		}
		objs = append(objs, cobjs...)
		errs = append(errs, cerrs...)
		// The file's copy of an object wins over the cluster's: it is the change being checked.
		ns := ""
		if len(in.argocdNamespaces) > 0 {
			ns = in.argocdNamespaces[0]
		}
		objs = cluster.Merge(objs, ns)
	}
	objs, genErrs := evaluator.ExpandGitGenerators(objs, roots)
	return objs, append(errs, genErrs...), rendered, nil
}

// joinOr lists choices for messages: "a, b or c".
func joinOr(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}
