// Package render renders the Helm charts and kustomizations a loader.Loader
// finds, so that a program embedding the evaluator checks what Argo CD would
// deploy from them, as the flipflop command does:
//
//	paths := []string{"./gitops"}
//	r := render.New(paths...) // renders read only inside these paths
//	r.Helm.Set = []string{"image.tag=v1.2.3"}
//	l := &loader.Loader{Renderer: r}
//	loaded := l.LoadAll(paths)
//	report, err := ev.Evaluate(ctx, loaded.Objects) // ev is an *evaluator.Evaluator
//
// A Loader without a Renderer reads every directory as plain YAML. With one, a
// directory holding a kustomization file (kustomization.yaml, .yml,
// Kustomization) is built with Kustomize's own API, and one holding Chart.yaml
// is rendered with Helm's own engine (a kustomization wins, as in Argo CD).
// Only what a kustomization lists counts; loader.Loaded.Rendered says which
// directories were rendered, how, and which manifest files there no render
// read. Each rendered object keeps the file it came from, and its line when
// that can be known; findings on it name the chart or kustomization
// (evaluator.Resource.RenderedBy). A render that fails is an evaluator.LoadError
// naming the file (and line), beside the objects of everything else.
//
// # Confinement
//
// Every byte of a chart or kustomization is treated as hostile (it may come
// from a pull request), and rendering is confined:
//
//   - In a worker process. Each directory is rendered in a child process: this
//     program itself, started again with FLIPFLOP_RENDER_WORKER=1 and nothing
//     else in its environment (no PATH: nothing to execute). Importing this
//     package is what makes a program able to serve as a worker: the package's
//     init function serves the request and exits, so the worker never runs
//     main, nor the init functions of the packages that import this one. A
//     worker dies with its parent.
//   - Reads only inside the roots. A worker reads regular files only (never a
//     FIFO or a device), inside the directories given to New (symbolic links
//     leaving them are refused), never a path the Loader excludes
//     (Loader.Exclude, Loader.IgnoreFile: a render that needs one fails,
//     naming it), and writes nothing.
//   - Offline. On Linux each worker starts in a network namespace of its own
//     with no usable interface (where the system allows one), and everywhere
//     its HTTP client and resolver refuse every request. A remote kustomize
//     base or file and a chart dependency not vendored under charts/ are input
//     errors naming them; kustomize plugins, exec functions and helmCharts are
//     refused, Helm runs no post-renderer, fetches no schema, and its lookup
//     function finds nothing (there is no cluster).
//   - Limited. Renderer.Timeout is a wall-clock budget for every render of
//     the Renderer together, and each worker gets what is left as a CPU-time
//     limit the kernel enforces. Renderer.Memory bounds each worker (one runs
//     at a time), through the kernel's RLIMIT_AS and RLIMIT_DATA on Linux and
//     a watchdog everywhere. Renderer.MaxFileSize bounds each file read (8
//     times it all the reads of one directory), the rendered output of a
//     directory, and the rendered objects handed back, all renders together.
//     Objects of kinds no rule reads are dropped inside the worker, and error
//     messages are bounded. Going over a limit is an input error of the
//     directory, never a hang or an out-of-memory kill of the program.
//
// File names and messages a render reports have their control characters
// escaped. docs/security.md in the repository holds the measurements behind
// these limits.
package render
