package render

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// workerEnv, set to "1" in the environment, makes a flipflop process a render
// worker: it reads one request on standard input, renders, writes the response
// on standard output and exits. The parent starts it with nothing else in the
// environment (no PATH: nothing can be found to execute), a deadline, and the
// worker limits its own memory, so that a chart or kustomization that expands
// a small input into gigabytes, or loops, is an input error, not a hang or an
// out-of-memory kill of flipflop.
const workerEnv = "FLIPFLOP_RENDER_WORKER"

// memoryExceeded is what a worker writes on standard error before it exits
// for using more memory than its limit.
const memoryExceeded = "flipflop-render: memory limit exceeded"

func init() {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain(os.Stdin, os.Stdout))
	}
}

// request is what the parent asks a worker to render.
type request struct {
	Mode string `json:"mode"`
	// Dir is the absolute directory to render.
	Dir   string `json:"dir"`
	Roots []Root `json:"roots"`
	// MaxFile bounds each file read; MaxOutput the rendered output; Budget the
	// bytes read in all; Memory the worker's heap.
	MaxFile   int64       `json:"maxFile"`
	MaxOutput int64       `json:"maxOutput"`
	Budget    int64       `json:"budget"`
	Memory    int64       `json:"memory"`
	Helm      HelmOptions `json:"helm"`
}

// document is one rendered object document and where it came from.
type document struct {
	File string `json:"file"`
	// Line is the line of the document in File; 0 when it cannot be known.
	Line int    `json:"line,omitempty"`
	Text string `json:"text"`
	// Rendered is set for the output of a Helm template (a YAML error in it is
	// an error in the rendered output, not at a line of the template).
	Rendered bool `json:"rendered,omitempty"`
}

// response is what a worker rendered.
type response struct {
	Documents []document            `json:"documents"`
	Errors    []evaluator.LoadError `json:"errors"`
	Read      []string              `json:"read"`
	Chart     string                `json:"chart,omitempty"`
	Values    []string              `json:"values,omitempty"`

	size, maxOutput int64
}

// fail records an error; a message over several lines (Helm's) is put on one.
func (r *response) fail(file string, line int, msg string) {
	r.Errors = append(r.Errors, evaluator.LoadError{Path: file, Line: line, Message: strings.Join(strings.Fields(msg), " ")})
}

// grow counts rendered bytes against the output limit.
func (r *response) grow(n int) error {
	r.size += int64(n)
	if r.size > r.maxOutput {
		return fmt.Errorf("the rendered output is larger than %d bytes (the limit, --max-file-size)", r.maxOutput)
	}
	return nil
}

// workerMain serves one request and returns the exit code.
func workerMain(in io.Reader, out io.Writer) int {
	var req request
	if err := json.NewDecoder(io.LimitReader(in, 1<<30)).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "flipflop-render: bad request:", err)
		return 2
	}
	limitMemory(req.Memory)
	resp := serve(req)
	if err := json.NewEncoder(out).Encode(resp); err != nil {
		fmt.Fprintln(os.Stderr, "flipflop-render:", err)
		return 2
	}
	return 0
}

// serve renders one request; a panic in a renderer is an error of the request.
func serve(req request) (resp *response) {
	resp = &response{maxOutput: req.MaxOutput}
	c := &Confined{Roots: req.Roots, MaxFile: req.MaxFile, Budget: req.Budget}
	defer func() {
		if r := recover(); r != nil {
			resp.Documents = nil
			resp.fail(c.Show(req.Dir), 0, fmt.Sprintf("rendering failed: %v", r))
		}
		resp.Read = c.Read()
	}()
	switch req.Mode {
	case evaluator.ModeHelm:
		renderHelm(context.Background(), c, req.Dir, req.Helm, resp)
	case evaluator.ModeKustomize:
		renderKustomize(c, req.Dir, resp)
	default:
		resp.fail(c.Show(req.Dir), 0, "unknown render mode "+req.Mode)
	}
	if len(resp.Errors) > 0 {
		resp.Documents = nil
	}
	return resp
}

// limitMemory caps the worker's memory: a soft limit that makes the garbage
// collector work harder, and a watchdog that ends the process as soon as the
// live heap passes the limit (an allocation is counted when it is made, before
// its pages are touched, so even one huge allocation is caught early). An
// address-space limit is not used: the Go runtime (and the race detector)
// reserve address space they never use, and fail in ways that read like bugs.
func limitMemory(limit int64) {
	if limit <= 0 {
		return
	}
	debug.SetMemoryLimit(limit / 2)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			if v := sample[0].Value; v.Kind() == metrics.KindUint64 && int64(v.Uint64()) > limit {
				fmt.Fprintln(os.Stderr, memoryExceeded)
				os.Exit(3)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
}

// Sanitize makes a value read from input (a file name, a message quoting a
// template) safe to print: control characters, and the Unicode controls that
// reorder or hide text, are escaped.
func Sanitize(s string) string { return sanitize(s) }

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteRune(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfeff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
