package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/evaluator/render"
	"github.com/flipflop-dev/flipflop/internal/cluster"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// inputFlags select what a command reads: files, directories and stdin, a live
// cluster, or both; and the settings of the model. check, explain and graph
// share them.
type inputFlags struct {
	defaultBranch    string
	kargoVersion     string
	argocdNamespaces []string
	maxFileSize      int64
	repoRoots        []string
	waiversFile      string
	noWaivers        bool
	followSymlinks   bool
	allowEmpty       bool
	exclude          []string
	noIgnoreFile     bool
	read             string
	helm             render.HelmOptions
	valuesFiles      []string
	renderTimeout    time.Duration
	progressMode     string
	cluster          clusterFlags
	selection        selectionFlags

	fs         *pflag.FlagSet // the command's flags, set by registerFiles (the configuration file sets their defaults)
	configured bool           // configure has run
	config     *loader.Config // the configuration file read, set by configure (nil: none)

	progress *progress // what the run says it does on standard error, set by prepare (nil: nothing)

	configErrors []evaluator.LoadError // the problems of the configuration file, set by configure
	kargoSource  string                // where the Kargo version came from, set by settings
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
  a directory with Chart.yaml  rendered with Helm: values.yaml, then --values, --set, --set-string;
      a chart or kustomization elsewhere in it than templates/, charts/ and crds/ is rendered on its
      own, and other manifests there are listed as not read (name their directory to read them)
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

// register registers the flags that select and read files (fix reads nothing else).
func (in *inputFlags) register(fs *pflag.FlagSet) {
	in.registerFiles(fs, "Argo CD's namespace: where Applications live when argocd-update or the Application omits it (default argocd)")
}

func (in *inputFlags) registerFiles(fs *pflag.FlagSet, argocdNamespaceUsage string) {
	in.fs = fs
	in.selection.register(fs)
	fs.StringVar(&in.defaultBranch, "default-branch", "", "the branch HEAD stands for (default: main or master, whichever the estate uses)")
	fs.StringArrayVar(&in.argocdNamespaces, "argocd-namespace", nil, argocdNamespaceUsage)
	fs.StringVar(&in.kargoVersion, "kargo-version", "", "the Kargo release the estate runs on (v1.9, 1.10.3): step fields and annotations are read as it reads them (default: kargoVersion in "+DefaultWaiversFile+", else, reading a cluster, its Kargo controller's, else the newest release flipflop models)")
	fs.StringArrayVar(&in.repoRoots, "repo-root", nil, "a local checkout of a repository that ApplicationSet git generators read: expands them exactly (repeatable)")
	fs.StringVar(&in.waiversFile, "waivers", "", "waivers file: waivers: [{rule, resources: [Kind/namespace/name globs], reason, expires}] (default "+DefaultWaiversFile+" when present)")
	fs.BoolVar(&in.noWaivers, "no-waivers", false, "trust nothing the inputs bring: no flipflop.dev/ignore annotations, no "+DefaultWaiversFile+" (its waivers and excludes), no "+loader.DefaultIgnoreFile+" files; only --waivers FILE and --exclude: for CI that must not let a pull request waive or hide its own findings")
	fs.BoolVar(&in.followSymlinks, "follow-symlinks", false, "read files that symbolic links in a directory point to outside it (default: report them and skip)")
	fs.Int64Var(&in.maxFileSize, "max-file-size", loader.DefaultMaxFileSize, "largest input file read, in bytes; larger files are reported as errors (and the largest output of one rendered chart or kustomization)")
	fs.StringVar(&in.read, "read", readAuto, "how directories are read: auto (a directory with kustomization.yaml is built with Kustomize, one with Chart.yaml is rendered with Helm, the rest is plain YAML) or plain (every .yaml, .yml and .json file as it stands)")
	fs.StringArrayVar(&in.valuesFiles, "values", nil, "a Helm values file for every chart rendered, over the chart's values.yaml (repeatable; later files win)")
	fs.StringArrayVar(&in.helm.Set, "set", nil, "a Helm value for every chart rendered: key=value as helm --set (repeatable)")
	fs.StringArrayVar(&in.helm.SetString, "set-string", nil, "a Helm string value for every chart rendered: key=value as helm --set-string (repeatable)")
	fs.StringVar(&in.helm.ReleaseName, "release-name", "", "the Helm release name (.Release.Name) charts are rendered with (default: the chart's name)")
	fs.StringVar(&in.helm.Namespace, "release-namespace", "", "the Helm release namespace (.Release.Namespace) charts are rendered with (default: default)")
	fs.DurationVar(&in.renderTimeout, "render-timeout", render.DefaultTimeout, "time limit for all rendering in the run, every chart and kustomization together (each worker also gets what is left as a CPU-time limit)")
	fs.BoolVar(&in.allowEmpty, "allow-empty", false, "succeed when the inputs hold no Kargo Stage and no Argo CD Application or ApplicationSet (default: that is an input error, exit 2)")
	fs.StringArrayVar(&in.exclude, "exclude", nil, "a path not to read, as a .gitignore pattern relative to the working directory: a name at any depth (templates/), an anchored path (charts/**), * ? [..] ** (repeatable; also exclude: in "+DefaultWaiversFile+")")
	fs.BoolVar(&in.noIgnoreFile, "no-ignore-file", false, "do not read "+loader.DefaultIgnoreFile+" files (default: each one excludes the paths its patterns match under its directory)")
	fs.StringVar(&in.progressMode, "progress", progressAuto, "say on standard error what a long run does (reading, rendering 3/12: kustomize apps/prod, evaluating 10,000 objects): "+joinOr(progressModes)+" (auto: when standard error is a terminal, CI is unset and TERM is not dumb)")
	setFlagGroup(fs, groupInput, "repo-root", "waivers", "no-waivers", "follow-symlinks", "max-file-size", "allow-empty", "exclude", "no-ignore-file")
	setFlagGroup(fs, groupRules, "rule", "skip-rule", "severity")
	setFlagGroup(fs, groupEstate, "default-branch", "argocd-namespace", "kargo-version")
	setFlagGroup(fs, groupRendering, "read", "values", "set", "set-string", "release-name", "release-namespace", "render-timeout")
	setFlagGroup(fs, groupOutput, "progress")
	setFlagChoices(fs, "read", readModes...)
	setFlagChoices(fs, "progress", progressModes...)
	setFlagFiles(fs, []string{"yaml", "yml"}, "values", "waivers")
	setFlagFiles(fs, nil, "exclude")
	setFlagDirs(fs, "repo-root")
}

// registerAll registers the input flags and the flags of --cluster.
func (in *inputFlags) registerAll(fs *pflag.FlagSet) {
	in.registerFiles(fs, "Argo CD's namespace: where Applications live when argocd-update or the Application omits it (default argocd); with --cluster, repeat it to read Applications from more namespaces (apps in any namespace)")
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
	if !slices.Contains(progressModes, in.progressMode) {
		return usagef("unknown --progress mode %q (want %s)", in.progressMode, joinOr(progressModes))
	}
	return in.cluster.validate()
}

func (in *inputFlags) settings() (evaluator.Settings, error) {
	s := evaluator.Settings{DefaultBranch: in.defaultBranch}
	if len(in.argocdNamespaces) > 0 {
		s.ArgoCDNamespace = in.argocdNamespaces[0]
	}
	s.Namespace = in.cluster.manifestNamespace()
	s.IgnoreAnnotationWaivers = in.noWaivers
	if err := in.configure(); err != nil {
		return s, err
	}
	if c := in.config; c != nil {
		s.Waivers = c.Waivers
		if c.KargoVersion != "" {
			s.KargoVersion, in.kargoSource = c.KargoVersion, c.KargoVersionSource
		}
	}
	if err := in.selection.apply(&s); err != nil {
		return s, err
	}
	if in.kargoVersion != "" {
		s.KargoVersion, in.kargoSource = in.kargoVersion, "--kargo-version"
	}
	return s, nil
}

// loader is the file loader the flags describe.
func (in *inputFlags) loader(stdin io.Reader) *loader.Loader {
	l := &loader.Loader{MaxFileSize: in.maxFileSize, Stdin: stdin, FollowSymlinks: in.followSymlinks, IgnoreFile: loader.DefaultIgnoreFile}
	if in.noIgnoreFile || in.noWaivers {
		// --no-waivers trusts nothing the inputs bring: the ignore files
		// could hide a pull request's own files from the check.
		l.IgnoreFile = ""
	}
	if in.config != nil {
		l.Exclude = append(l.Exclude, in.config.Exclude...)
	}
	for _, p := range in.exclude {
		l.Exclude = append(l.Exclude, loader.Exclude{Pattern: p, Source: "--exclude"})
	}
	return l
}

// renderer returns the renderer of charts and kustomizations (nil with --read
// plain): confined to the paths given and the --repo-root checkouts.
func (in *inputFlags) renderer(paths []string, roots []loader.RepoRoot) (*render.Renderer, error) {
	if in.read == readPlain {
		return nil, nil
	}
	dirs := slices.Clone(paths)
	for _, root := range roots {
		dirs = append(dirs, root.Dir)
	}
	r := render.New(dirs...)
	r.MaxFileSize = in.maxFileSize
	r.Timeout = in.renderTimeout
	r.Helm = in.helm
	for _, f := range in.valuesFiles {
		data, err := readValuesFile(f, in.maxFileSize)
		if err != nil {
			return nil, usagef("--values: %v", err)
		}
		r.Helm.ValuesFiles = append(r.Helm.ValuesFiles, render.ValuesFile{Name: filepath.ToSlash(f), Data: data})
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

func (in *inputFlags) roots() ([]loader.RepoRoot, error) {
	var roots []loader.RepoRoot
	for _, dir := range in.repoRoots {
		r, err := loader.NewRepoRoot(dir)
		if err != nil {
			return nil, usagef("--repo-root: %v", err)
		}
		r.MaxFileSize = in.maxFileSize
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
	excluded []evaluator.Exclusion
	rendered []evaluator.RenderedRoot
	// empty: the inputs hold nothing to check (errs says so unless --allow-empty).
	empty   bool
	skipped int // objects of kinds no rule reads, dropped unconverted
	// kargoSource says where the Kargo version came from (report.Kargo.Source).
	kargoSource string
	progress    *progress
}

// evaluate evaluates the loaded objects (Evaluator.Evaluate), saying so.
func (l *loaded) evaluate(ctx context.Context) (*evaluator.Report, error) {
	l.progress.evaluating(len(l.objs))
	defer l.progress.done()
	return l.ev.Evaluate(ctx, l.objs)
}

// analyze evaluates the loaded objects for the findings and the model
// (Evaluator.Analyze), saying so.
func (l *loaded) analyze(ctx context.Context, opts ...evaluator.ModelOption) (*evaluator.Report, *evaluator.Model, error) {
	l.progress.evaluating(len(l.objs))
	defer l.progress.done()
	return l.ev.Analyze(ctx, l.objs, opts...)
}

// complete adds to a report of the loaded objects what reading them found:
// the inputs that could not be read, those excluded or rendered, the objects
// skipped, and where the Kargo version came from.
func (l *loaded) complete(report *evaluator.Report) {
	report.Errors = append(report.Errors, l.errs...)
	report.Excluded = l.excluded
	report.Rendered = l.rendered
	report.Summary.Skipped = l.skipped
	if report.Kargo != nil {
		report.Kargo.Source = l.kargoSource
	}
}

// prepare validates the input flags, builds the evaluator and reads the inputs:
// the common start of check, explain, graph and diagnose.
func (in *inputFlags) prepare(ctx context.Context, paths []string, stdio IO) (*loaded, error) {
	if err := in.configure(); err != nil {
		return nil, err
	}
	if err := in.validate(paths); err != nil {
		return nil, err
	}
	in.progress = newProgress(in.progressMode, stdio.Err)
	// Whatever the command prints next (its result, an error) starts on a
	// clean line.
	defer in.progress.done()
	settings, err := in.settings()
	if err != nil {
		return nil, err
	}
	ev, err := evaluator.New(ctx, settings)
	if err != nil {
		var se *evaluator.SettingError
		if errors.As(err, &se) {
			return nil, usagef("%s: %v", in.kargoSource, err)
		}
		return nil, err
	}
	r, err := in.load(ctx, paths, stdio)
	if err != nil {
		return nil, err
	}
	if settings.KargoVersion == "" && in.cluster.enabled() {
		// No version named: the cluster's controller says which it runs.
		v, source := in.cluster.kargoVersion(ctx)
		if v != "" {
			settings.KargoVersion = v
			if ev, err = evaluator.New(ctx, settings); err != nil {
				return nil, err
			}
		}
		in.kargoSource = source
	}
	errs := append(slices.Clip(in.configErrors), r.Errors...)
	l := &loaded{ev: ev, settings: settings, objs: r.Objects, errs: errs, excluded: r.Excluded, rendered: r.Rendered, skipped: r.Skipped, kargoSource: in.kargoSource, progress: in.progress}
	if err := l.checkEmpty(ctx, in, paths); err != nil {
		return nil, err
	}
	return l, nil
}

// checkEmpty sets l.empty when the objects read hold no Stage, Application or
// ApplicationSet, and then, unless --allow-empty, adds an input error that
// says so: an empty or mistaken input must not pass as a clean run.
func (l *loaded) checkEmpty(ctx context.Context, in *inputFlags, paths []string) error {
	kinds, err := l.ev.Kinds(ctx, l.objs)
	if err != nil {
		return err
	}
	if kinds["Stage"]+kinds["Application"]+kinds["ApplicationSet"] > 0 {
		return nil
	}
	l.empty = true
	if in.allowEmpty {
		return nil
	}
	where := strings.Join(paths, ", ")
	if in.cluster.enabled() {
		where = strings.TrimPrefix(where+", cluster", ", ")
	}
	l.errs = append(l.errs, evaluator.LoadError{Path: where, Message: fmt.Sprintf(
		"no Kargo Stage and no Argo CD Application or ApplicationSet among the inputs (%s read%s): nothing was checked; "+
			"check the paths, or pass --allow-empty when an empty input is expected", nounCount(len(l.objs), "object"), excludedNote(l.excluded))})
	return nil
}

// excludedNote is "; 2 paths excluded", or "".
func excludedNote(ex []evaluator.Exclusion) string {
	if len(ex) == 0 {
		return ""
	}
	return "; " + nounCount(len(ex), "path") + " excluded"
}

// nounCount is "1 object", "2 objects".
func nounCount(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// modelAndReport evaluates the loaded objects twice: the model as plain data
// (for drawing and explaining) and the findings.
func (l *loaded) modelAndReport(ctx context.Context) (*evaluator.Model, *evaluator.Report, error) {
	report, model, err := l.analyze(ctx)
	if err != nil {
		return nil, nil, err
	}
	report.Summary.Skipped = l.skipped
	if report.Kargo != nil {
		report.Kargo.Source = l.kargoSource
	}
	return model, report, nil
}

// load reads the objects of paths and, with --cluster, of the cluster; every
// input that could not be read becomes a LoadError, and the rest is returned.
// Objects of kinds no rule reads are dropped, and counted in Skipped.
func (in *inputFlags) load(ctx context.Context, paths []string, stdio IO) (loader.Loaded, error) {
	var r loader.Loaded
	roots, err := in.roots()
	if err != nil {
		return r, err
	}
	defer in.progress.done()
	// One alias budget for every file the run reads: the inputs, standard
	// input, what renders hand back and the files git generators read.
	aliases := loader.NewAliasBudget()
	if len(paths) > 0 {
		l := in.loader(stdio.In)
		l.Aliases = aliases
		rr, err := in.renderer(paths, roots)
		if err != nil {
			return r, err
		}
		if rr != nil {
			l.Renderer = rr
			if in.progress != nil {
				l.Renderer = &progressRenderer{Renderer: rr, p: in.progress}
			}
		}
		in.progress.reading(paths)
		r = l.LoadAll(paths)
		for i := range r.Rendered {
			for j, f := range r.Rendered[i].NotListed {
				r.Rendered[i].NotListed[j] = safetext.Controls(f) // file names are input too
			}
		}
	}
	if in.cluster.enabled() {
		in.progress.say("reading the cluster…")
		cobjs, cerrs, err := in.cluster.load(ctx, stdio)
		if err != nil {
			return r, err
		}
		r.Objects = append(r.Objects, cobjs...)
		r.Errors = append(r.Errors, cerrs...)
		// The file's copy of an object wins over the cluster's: it is the change being checked.
		ns := ""
		if len(in.argocdNamespaces) > 0 {
			ns = in.argocdNamespaces[0]
		}
		objs := cluster.Merge(r.Objects, ns)
		read := objs[:0]
		for _, o := range objs {
			if evaluator.ReadKind(o.APIVersion, o.Kind) {
				read = append(read, o)
			} else {
				r.Skipped++
			}
		}
		r.Objects = read
	}
	if len(roots) > 0 {
		in.progress.sayf("expanding ApplicationSet git generators over %s…", nounCount(len(roots), "checkout"))
	}
	objs, genErrs := loader.ExpandGitGeneratorsWithin(r.Objects, roots, aliases)
	r.Objects, r.Errors = objs, append(r.Errors, genErrs...)
	return r, nil
}

// joinOr lists choices for messages: "a, b or c".
func joinOr(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}
