// Package render reads the directories that are not plain YAML: Helm charts
// (rendered with Helm's own engine) and kustomizations (built with
// Kustomize's own API). It implements evaluator.Renderer.
//
// Every byte is treated as hostile: each directory is rendered in a child
// flipflop process (a "worker") with a deadline, a memory limit and a limit on
// the rendered output, and with no environment (nothing to execute); the
// worker reads only regular files inside the roots the user gave (symbolic
// links leaving them are refused), never writes, never goes to the network
// (remote kustomize bases and unvendored chart dependencies are input errors
// naming them), runs no kustomize plugins or exec functions, no Helm
// post-renderer, and Helm's `lookup` finds nothing (no cluster).
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
	"strings"
	"time"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// DefaultTimeout bounds the rendering of one directory.
const DefaultTimeout = 30 * time.Second

// Renderer renders charts and kustomizations in worker processes.
type Renderer struct {
	// Roots are the directories rendering may read: the paths the user gave
	// (and --repo-root checkouts).
	Roots []Root
	// MaxFileSize bounds each file read and the rendered output of one
	// directory; 0 means evaluator.DefaultMaxFileSize.
	MaxFileSize int64
	// Timeout bounds one directory's rendering; 0 means DefaultTimeout.
	Timeout time.Duration
	// Helm holds the values and release charts are rendered with.
	Helm HelmOptions
	// Memory bounds one worker's heap, in bytes; 0 means 1 GiB or 16 times
	// MaxFileSize, whichever is larger.
	Memory int64
	// Executable is the flipflop binary run as the worker; empty means this
	// process's own executable.
	Executable string
}

var _ evaluator.Renderer = (*Renderer)(nil)

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
func (r *Renderer) Claim(dir string) string { return evaluator.ClaimDirectory(dir) }

func (r *Renderer) maxFile() int64 {
	if r.MaxFileSize > 0 {
		return r.MaxFileSize
	}
	return evaluator.DefaultMaxFileSize
}

// Render renders one directory in a worker process.
func (r *Renderer) Render(dir, shown, mode string) evaluator.Rendered {
	out := evaluator.Rendered{Root: evaluator.RenderedRoot{Path: sanitize(shown), Mode: mode}}
	fail := func(file string, msg string) evaluator.Rendered {
		out.Root.Failed = true
		out.Errors = append(out.Errors, evaluator.LoadError{Path: sanitize(file), Message: sanitize(msg)})
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
	}
	if req.Memory <= 0 {
		req.Memory = max(1<<30, 16*maxFile)
	}
	if len(req.Roots) == 0 {
		if root, err := NewRoot(dir); err == nil {
			req.Roots = []Root{root}
		}
	}
	resp, err := r.run(req)
	if err != nil {
		return fail(shown, err.Error())
	}
	out.Root.Chart = sanitize(resp.Chart)
	for _, v := range resp.Values {
		out.Root.Values = append(out.Root.Values, sanitize(v))
	}
	out.Read = resp.Read
	for _, e := range resp.Errors {
		out.Root.Failed = true
		out.Errors = append(out.Errors, evaluator.LoadError{Path: sanitize(e.Path), Line: e.Line, Message: sanitize(e.Message)})
	}
	by := "kustomize " + out.Root.Path
	if mode == evaluator.ModeHelm {
		by = "helm chart " + out.Root.Path
	}
	for _, d := range resp.Documents {
		file := sanitize(d.File)
		objs, errs := evaluator.LoadBytes(file, []byte(d.Text))
		for _, o := range objs {
			o.Line = d.Line
			o.Rendered = mode
			o.RenderedBy = by
			out.Objects = append(out.Objects, o)
		}
		for _, e := range errs {
			e.Message = sanitize(e.Message)
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

// run starts a worker, hands it the request and reads its response.
func (r *Renderer) run(req request) (*response, error) {
	exe := r.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cannot start the renderer: %v", err)
		}
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{workerEnv + "=1"}
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 64 << 10}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the renderer: %v", err)
	}
	// The response holds the rendered output (at most MaxOutput bytes) and its
	// JSON escaping; anything longer is cut off and fails to decode.
	data, readErr := io.ReadAll(io.LimitReader(stdout, 4*req.MaxOutput+(1<<20)))
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("rendering took longer than %s (the limit, --render-timeout)", timeout)
	case strings.Contains(stderr.String(), memoryExceeded):
		return nil, fmt.Errorf("rendering used more than %d MiB of memory (the limit)", req.Memory>>20)
	case strings.Contains(stderr.String(), "out of memory"):
		return nil, fmt.Errorf("rendering ran out of memory (the limit is %d MiB)", req.Memory>>20)
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
	return &resp, nil
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
