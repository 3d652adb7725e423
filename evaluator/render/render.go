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

// DefaultTimeout is the time all the rendering of one Renderer may take when
// Renderer.Timeout is 0: every chart and kustomization together.
const DefaultTimeout = 60 * time.Second

// A Renderer renders the Helm charts and kustomizations a loader.Loader finds,
// each in a worker process confined to the Renderer's roots (see the package
// documentation). It implements loader.Renderer, loader.ExcludingRenderer and
// loader.DecodingRenderer: set it as Loader.Renderer.
//
// Make one with New, set the fields before the first render, and use it for
// one run: its time and output budgets are for everything it renders, and
// are never reset. A Renderer is safe for concurrent use (its workers run one
// at a time). The zero Renderer renders with the defaults, reading only inside
// each directory it renders.
type Renderer struct {
	// MaxFileSize bounds, in bytes, each file a render reads (8 times it all
	// the reads of one directory), the rendered output of one directory, and
	// the rendered objects handed back to the Loader, every directory
	// together; 0 means loader.DefaultMaxFileSize. Give the Loader's
	// MaxFileSize.
	MaxFileSize int64
	// Timeout bounds all rendering done through this Renderer, every
	// directory together (the clock starts with the first render); 0 means
	// DefaultTimeout. A directory whose turn comes after the budget is spent
	// fails without being rendered.
	Timeout time.Duration
	// Memory bounds the rendering's memory, in bytes: workers run one at a
	// time, each limited to it; 0 means 1 GiB or 16 times MaxFileSize,
	// whichever is larger.
	Memory int64
	// Helm holds the values and release charts are rendered with.
	Helm HelmOptions
	// AllKinds keeps rendered objects of every kind: set it with
	// loader.Loader.AllKinds. By default the worker drops the objects of
	// kinds no rule reads.
	AllKinds bool

	// roots are the directories rendering may read (New); none means the
	// directory being rendered.
	roots []rootDir
	// noNetworkNamespace starts workers in this process's own network namespace
	// (their HTTP client and resolver still refuse every request). By default,
	// on Linux, each worker gets a namespace of its own, and when the system
	// refuses one, workers start without it.
	noNetworkNamespace bool
	// excluded are the paths the run excludes (SetExcluded).
	excluded []exclusion

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

var (
	_ loader.ExcludingRenderer = (*Renderer)(nil)
	_ loader.DecodingRenderer  = (*Renderer)(nil)
)

// New returns a Renderer whose renders read only inside roots: give the paths
// given to the Loader (a file stands for its directory; "-" and paths that do
// not exist are left to the Loader to report), and any other directory a
// render may need, such as the checkout a kustomization's base is in. Paths
// in messages are shown as they are written here.
func New(roots ...string) *Renderer {
	return &Renderer{roots: rootsOf(roots)}
}

// workers reports how many worker processes were started and the largest
// resident set one of them reached, in bytes (0 where the system does not say).
func (r *Renderer) workers() (started int, peakBytes int64) {
	return int(r.started.Load()), r.peak.Load()
}

// SetExcluded implements loader.ExcludingRenderer: the Loader gives the paths
// its run excludes, and no worker reads them (a render that needs one fails,
// naming it).
func (r *Renderer) SetExcluded(paths []loader.ExcludedPath) {
	r.excluded = r.excluded[:0]
	for _, p := range paths {
		r.excluded = append(r.excluded, exclusion{Real: p.Real, Dir: p.Dir, Pattern: p.Pattern, Source: p.Source})
	}
}

// isolated reports how many workers ran in a network namespace of their own.
func (r *Renderer) isolated() int { return int(r.netns.Load()) }

// newRoot returns the rootDir of a directory as the user named it.
func newRoot(dir string) (rootDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return rootDir{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return rootDir{}, err
	}
	return rootDir{Shown: filepath.ToSlash(filepath.Clean(dir)), Real: real}, nil
}

// rootsOf returns the roots of paths: each directory, and the directory of
// each file (a kustomization.yaml or Chart.yaml given alone stands for its
// directory). "-" (standard input) and paths that do not exist are skipped:
// the loader reports those.
func rootsOf(paths []string) []rootDir {
	var roots []rootDir
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
		if r, err := newRoot(dir); err == nil {
			roots = append(roots, r)
		}
	}
	return roots
}

// Claim implements loader.Renderer: a directory with a kustomization file is
// built with Kustomize (evaluator.ModeKustomize), one with a Chart.yaml
// rendered with Helm (evaluator.ModeHelm; a kustomization wins, as in Argo
// CD), and any other is plain YAML ("").
func (r *Renderer) Claim(dir string) string { return loader.ClaimDirectory(dir) }

func (r *Renderer) maxFile() int64 {
	if r.MaxFileSize > 0 {
		return r.MaxFileSize
	}
	return loader.DefaultMaxFileSize
}

// Render implements loader.Renderer: it renders one directory, in the mode
// Claim gave it, in a worker process, within what is left of the Renderer's
// budgets; the aliases of what it renders expand within a budget of their own
// (RenderDecoding: the run's). What cannot be rendered is in Errors, never a
// panic.
func (r *Renderer) Render(dir, shown, mode string) loader.Rendered {
	return r.RenderDecoding(dir, shown, mode, loader.NewAliasBudget().Decoder())
}

// RenderDecoding implements loader.DecodingRenderer: it is Render, decoding the
// documents rendered with decode (the run's alias budget, which the Loader
// gives).
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
		Roots:     r.roots,
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
		if root, err := newRoot(dir); err == nil {
			req.Roots = []rootDir{root}
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
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot start the renderer: %v", err)
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
	netns := !r.noNetworkNamespace && !r.noNetns.Load()
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
