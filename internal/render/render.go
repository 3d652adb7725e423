// Package render reads the directories that are not plain YAML: Helm charts
// (rendered with Helm's own engine) and kustomizations (built with
// Kustomize's own API). It implements loader.Renderer.
//
// Every byte is treated as hostile: each directory is rendered in a child
// flipflop process (a "worker") with no environment (nothing to execute).
// One budget bounds all rendering of a run: the time (a wall-clock deadline
// for all renders together, and the same as a CPU-time limit the kernel
// enforces on each worker), and the memory (one worker at a time, limited by
// the kernel's RLIMIT_AS and RLIMIT_DATA, and by a watchdog). A worker dies with its parent.
// The worker reads only regular files inside the roots the user gave
// (symbolic links leaving them are refused) and never a path the run
// excludes, never writes, and cannot reach any network: on Linux it starts in
// a network namespace of its own with no usable interface, and everywhere its
// HTTP client and resolver refuse every request (remote kustomize bases and
// unvendored chart dependencies are input errors naming them). It runs no
// kustomize plugins or exec functions, no Helm post-renderer, and Helm's
// `lookup` finds nothing (no cluster). Documents of kinds no rule reads are
// dropped in the worker, and messages are bounded.
package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

// DefaultTimeout bounds all the rendering of one run, every chart and
// kustomization together.
const DefaultTimeout = 60 * time.Second

// Renderer renders charts and kustomizations in worker processes.
type Renderer struct {
	// Roots are the directories rendering may read: the paths the user gave
	// (and --repo-root checkouts).
	Roots []Root
	// MaxFileSize bounds each file read and the rendered output of one
	// directory; 0 means loader.DefaultMaxFileSize.
	MaxFileSize int64
	// Timeout bounds all rendering done through this Renderer, every
	// directory together (the clock starts with the first render); 0 means
	// DefaultTimeout. A directory whose turn comes after the budget is spent
	// fails without being rendered.
	Timeout time.Duration
	// Helm holds the values and release charts are rendered with.
	Helm HelmOptions
	// Memory bounds the rendering's memory, in bytes: workers run one at a
	// time, each limited to it; 0 means 1 GiB or 16 times MaxFileSize,
	// whichever is larger.
	Memory int64
	// Executable is the flipflop binary run as the worker; empty means this
	// process's own executable.
	Executable string
	// AllKinds keeps rendered objects of every kind (loader.Loader.AllKinds);
	// by default the worker drops those no rule reads.
	AllKinds bool
	// NoNetworkNamespace starts workers in flipflop's own network namespace
	// (their HTTP client and resolver still refuse every request). By default,
	// on Linux, each worker gets a namespace of its own, and when the system
	// refuses one, workers start without it.
	NoNetworkNamespace bool

	// Excluded are the paths the run excludes (SetExcluded).
	excluded []Excluded

	turn     sync.Mutex // one worker at a time: the memory budget is the run's
	once     sync.Once
	deadline time.Time
	noNetns  atomic.Bool // the system refused a network namespace
	netns    atomic.Int32
	kept     atomic.Int64 // bytes of rendered documents handed to the loader
	started  atomic.Int32 // workers started
	peak     atomic.Int64 // the largest resident set of a worker, in bytes
	onStart  func(pid int)
}

// Workers reports how many worker processes were started and the largest
// resident set one of them reached, in bytes (0 where the system does not say).
func (r *Renderer) Workers() (started int, peakBytes int64) {
	return int(r.started.Load()), r.peak.Load()
}

// SetExcluded implements loader.ExcludingRenderer: no worker reads these paths.
func (r *Renderer) SetExcluded(paths []loader.ExcludedPath) {
	r.excluded = r.excluded[:0]
	for _, p := range paths {
		r.excluded = append(r.excluded, Excluded{Real: p.Real, Dir: p.Dir, Pattern: p.Pattern, Source: p.Source})
	}
}

// Isolated reports how many workers ran in a network namespace of their own.
func (r *Renderer) Isolated() int { return int(r.netns.Load()) }

var _ loader.ExcludingRenderer = (*Renderer)(nil)

// NewRoot returns the Root of a directory as the user named it.
func NewRoot(dir string) (Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Root{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Root{}, err
	}
	return Root{Shown: filepath.ToSlash(filepath.Clean(dir)), Real: real}, nil
}

// RootsOf returns the roots for the paths given on the command line: each
// directory, and the directory of each file (a kustomization.yaml or
// Chart.yaml given alone stands for its directory). Paths that do not exist
// are left to the loader to report.
func RootsOf(paths []string) []Root {
	var roots []Root
	for _, p := range paths {
		if p == "-" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		dir := p
		if !fi.IsDir() {
			dir = filepath.Dir(p)
		}
		if r, err := NewRoot(dir); err == nil {
			roots = append(roots, r)
		}
	}
	return roots
}

// Claim reads a directory with a kustomization file through Kustomize and one
// with a Chart.yaml through Helm (a kustomization wins, as in Argo CD).
func (r *Renderer) Claim(dir string) string { return loader.ClaimDirectory(dir) }

func (r *Renderer) maxFile() int64 {
	if r.MaxFileSize > 0 {
		return r.MaxFileSize
	}
	return loader.DefaultMaxFileSize
}

// Render renders one directory in a worker process, within what is left of
// the run's budget; the aliases of what it renders expand within a budget of
// their own (RenderDecoding: the run's).
func (r *Renderer) Render(dir, shown, mode string) loader.Rendered {
	return r.RenderDecoding(dir, shown, mode, loader.NewAliasBudget().Decoder())
}

// RenderDecoding is Render, decoding the documents rendered with decode (the
// run's alias budget, loader.DecodingRenderer).
func (r *Renderer) RenderDecoding(dir, shown, mode string, decode loader.DecodeFunc) loader.Rendered {
	out := loader.Rendered{Root: evaluator.RenderedRoot{Path: sanitize(shown), Mode: mode}}
	fail := func(file string, msg string) loader.Rendered {
		out.Root.Failed = true
		out.Errors = append(out.Errors, evaluator.LoadError{Path: sanitize(bound(file)), Message: sanitize(bound(msg))})
		return out
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fail(shown, err.Error())
	}
	maxFile := r.maxFile()
	req := request{
		Mode:      mode,
		Dir:       abs,
		Roots:     r.Roots,
		MaxFile:   maxFile,
		MaxOutput: maxFile,
		Budget:    8 * maxFile,
		Memory:    r.Memory,
		Helm:      r.Helm,
		Excluded:  r.excluded,
		AllKinds:  r.AllKinds,
	}
	if req.Memory <= 0 {
		req.Memory = max(1<<30, 16*maxFile)
	}
	if len(req.Roots) == 0 {
		if root, err := NewRoot(dir); err == nil {
			req.Roots = []Root{root}
		}
	}
	// Rendered objects of the kinds the rules read share one budget for the
	// run: --max-file-size in all, what one plain file may hold (run takes
	// what is left).
	req.MaxKept = maxFile
	resp, err := r.run(req)
	if err != nil {
		return fail(shown, err.Error())
	}
	out.Root.Chart = sanitize(bound(resp.Chart))
	for _, v := range resp.Values {
		out.Root.Values = append(out.Root.Values, sanitize(bound(v)))
	}
	out.Read = resp.Read
	out.Bases = resp.Bases
	out.Skipped = resp.Skipped
	for _, e := range resp.Errors {
		out.Root.Failed = true
		out.Errors = append(out.Errors, evaluator.LoadError{Path: sanitize(bound(e.Path)), Line: e.Line, Message: sanitize(bound(e.Message))})
	}
	by := "kustomize " + out.Root.Path
	if mode == evaluator.ModeHelm {
		by = "helm chart " + out.Root.Path
	}
	for _, d := range resp.Documents {
		file := sanitize(bound(d.File))
		objs, errs, skipped := decode(file, []byte(d.Text), !r.AllKinds)
		out.Skipped += skipped
		for _, o := range objs {
			o.Line = d.Line
			o.Rendered = mode
			o.RenderedBy = by
			out.Objects = append(out.Objects, o)
		}
		for _, e := range errs {
			e.Message = sanitize(bound(e.Message))
			what := "the kustomize output"
			if d.Rendered {
				what = "the rendered output of this template"
			}
			e.Message = fmt.Sprintf("in %s (line %d of the document): %s", what, e.Line, e.Message)
			e.Line = d.Line
			out.Errors = append(out.Errors, e)
		}
	}
	out.Root.Objects = len(out.Objects)
	out.Root.Failed = len(out.Errors) > 0
	return out
}

// remaining is what is left of the run's render budget; the clock starts
// with the first call.
func (r *Renderer) remaining() (time.Duration, time.Duration) {
	total := r.Timeout
	if total <= 0 {
		total = DefaultTimeout
	}
	r.once.Do(func() { r.deadline = time.Now().Add(total) })
	return time.Until(r.deadline), total
}

// run starts a worker, hands it the request and reads its response. Workers
// run one at a time, within what is left of the run's time budget.
func (r *Renderer) run(req request) (*response, error) {
	exe := r.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cannot start the renderer: %v", err)
		}
	}
	r.turn.Lock()
	defer r.turn.Unlock()
	if req.MaxKept > 0 {
		budget := req.MaxKept
		if req.MaxKept -= r.kept.Load(); req.MaxKept <= 0 {
			return nil, fmt.Errorf("not rendered: the charts and kustomizations rendered before it already produced the run's budget of objects (%d bytes of Stages, Applications and the like; --max-file-size for all renders together)", budget)
		}
	}
	left, total := r.remaining()
	if left <= 0 {
		return nil, fmt.Errorf("not rendered: the run's render budget (%s, --render-timeout, for all charts and kustomizations together) was spent before its turn", total)
	}
	// The kernel ends a worker that used its share of CPU time even if this
	// process is gone; a second more than the wall-clock limit, so that the
	// deadline below, with its clear message, comes first.
	req.CPUSeconds = int64(left/time.Second) + 2
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), left)
	defer cancel()

	// Pdeathsig is sent when the thread that started the worker ends: keep
	// this goroutine on its thread until the worker is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := func(netns bool) (*exec.Cmd, io.ReadCloser, *bytes.Buffer, error) {
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = []string{workerEnv + "=1"}
		cmd.Stdin = bytes.NewReader(body)
		stderr := &bytes.Buffer{}
		cmd.Stderr = &limitedWriter{w: stderr, n: 64 << 10}
		sandbox(cmd, netns)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, nil, err
		}
		return cmd, stdout, stderr, cmd.Start()
	}
	netns := !r.NoNetworkNamespace && !r.noNetns.Load()
	cmd, stdout, stderr, err := start(netns)
	if err != nil && netns && namespaceRefused(err) {
		// The system does not let this user make a network namespace: the
		// worker's own refusal of every request is what is left.
		r.noNetns.Store(true)
		netns = false
		cmd, stdout, stderr, err = start(false)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot start the renderer: %v", err)
	}
	r.started.Add(1)
	if r.onStart != nil {
		r.onStart(cmd.Process.Pid)
	}
	// The response holds the rendered output (at most MaxOutput bytes) and its
	// JSON escaping; anything longer is cut off and fails to decode.
	data, readErr := io.ReadAll(io.LimitReader(stdout, 4*req.MaxOutput+(1<<20)))
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	if rss := peakRSS(cmd.ProcessState); rss > 0 {
		for {
			old := r.peak.Load()
			if rss <= old || r.peak.CompareAndSwap(old, rss) {
				break
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("rendering did not finish within what was left of the run's render budget (%s of %s, --render-timeout, for all charts and kustomizations together)", left.Round(time.Millisecond), total)
	case strings.Contains(stderr.String(), memoryExceeded):
		return nil, fmt.Errorf("rendering used more than %d MiB of memory (the limit)", req.Memory>>20)
	case outOfMemory(stderr.String()):
		return nil, fmt.Errorf("rendering ran out of memory (the limit is %d MiB)", req.Memory>>20)
	case cpuKilled(waitErr):
		return nil, fmt.Errorf("rendering was killed by the system: it used more CPU time than was left of the run's render budget (%s, --render-timeout), or the system ran out of memory", total)
	case waitErr != nil:
		var exit *exec.ExitError
		msg := firstLine(stderr.String())
		if errors.As(waitErr, &exit) && msg == "" {
			msg = exit.String()
		}
		return nil, fmt.Errorf("rendering failed: %s", msg)
	case readErr != nil:
		return nil, readErr
	}
	var resp response
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("rendering produced an unreadable response: %v", err)
	}
	if netns {
		r.netns.Add(1)
	}
	for _, d := range resp.Documents {
		r.kept.Add(int64(len(d.Text)))
	}
	return &resp, nil
}

// outOfMemory reports whether a worker's standard error says the kernel
// refused it memory (RLIMIT_AS or RLIMIT_DATA): the Go runtime's own "out of memory", or a
// thread it could not create for want of memory for its stack.
func outOfMemory(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "failed to create new OS thread", "pthread_create failed"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(int64(len(p)), l.n)
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.n -= k
	}
	return len(p), nil
}
