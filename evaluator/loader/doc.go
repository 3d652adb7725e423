// Package loader reads the Kubernetes objects flipflop checks from files,
// directories and standard input, as evaluator.Objects that keep the file and
// line each one was written at, and reports every input it cannot read as an
// evaluator.LoadError without stopping:
//
//	objs, loadErrs := (&loader.Loader{}).Load([]string{"./gitops"})
//	report, err := ev.Evaluate(ctx, objs) // ev is an *evaluator.Evaluator
//
// Every byte read may come from a hostile pull request: a Loader reads only
// regular files under the paths it is given (symbolic links out of a directory
// are not followed unless asked), bounds file sizes, YAML nesting
// (MaxYAMLDepth) and alias expansion (one AliasBudget for every file a run
// reads), and keeps its cost linear in its input. Objects of kinds no rule reads (evaluator.ReadKind) are dropped
// before they are converted.
//
// Beyond plain YAML and JSON, the package holds what reading an estate takes:
// paths left out by patterns (Exclude, DefaultIgnoreFile), Helm charts and
// kustomizations rendered by a Renderer, ApplicationSet git generators
// expanded against local checkouts (ExpandGitGenerators), and the
// configuration file of waivers and exclude patterns (Loader.ReadConfig).
//
// A Loader without a Renderer reads charts and kustomizations as plain YAML.
// Package github.com/flipflop-dev/flipflop/evaluator/render holds flipflop's
// own Renderer, which renders each directory in a confined worker process,
// offline and reading only inside the paths it is given (its Example checks
// a chart and a kustomization end to end):
//
//	paths := []string{"./gitops"}
//	l := &loader.Loader{Renderer: render.New(paths...)}
//	loaded := l.LoadAll(paths) // loaded.Rendered: what was rendered, and how
package loader
