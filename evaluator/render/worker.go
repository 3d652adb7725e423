package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/safetext"
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
	Dir   string    `json:"dir"`
	Roots []rootDir `json:"roots"`
	// MaxFile bounds each file read; MaxOutput the rendered output; Budget the
	// bytes read in all; Memory the worker's heap.
	MaxFile   int64       `json:"maxFile"`
	MaxOutput int64       `json:"maxOutput"`
	Budget    int64       `json:"budget"`
	Memory    int64       `json:"memory"`
	Helm      HelmOptions `json:"helm"`
	// CPUSeconds is the CPU time the kernel lets the worker use (RLIMIT_CPU):
	// what is left of the run's render budget, so that a worker that outlives
	// its parent still ends.
	CPUSeconds int64 `json:"cpuSeconds,omitempty"`
	// Excluded are the paths the run excludes: the worker never reads them.
	Excluded []exclusion `json:"excluded,omitempty"`
	// MaxKept bounds the bytes of the documents the worker sends back (after
	// the kind filter): what is left of the run's budget for rendered objects.
	MaxKept int64 `json:"maxKept,omitempty"`
	// AllKinds keeps rendered documents of every kind; by default a document
	// of a kind no rule reads is dropped in the worker (and counted), so the
	// parent never converts it.
	AllKinds bool `json:"allKinds,omitempty"`
}

// modeProbeNetwork is a request that renders nothing: the worker dials the
// TCP address in Dir and reports what happened as an error. Tests use it to
// check that a worker can reach no address.
const modeProbeNetwork = "probe-network"

// modeProbeMemory is a request that renders nothing: the worker allocates the
// number of bytes in Dir in one allocation, as a template's repeat does,
// writes to every page of it, and reports "allocated" as an error. Tests use
// it to check that the kernel refuses the allocation itself, before a page is
// touched.
const modeProbeMemory = "probe-memory"

// Bounds on what a worker reports: a render error is one line of at most
// maxMessage bytes (a template can make an error message as large as its
// output), and at most maxErrors of them are kept.
const (
	maxMessage = 2048
	maxErrors  = 100
)

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
	// Bases are the kustomization directories (real paths) the build read as
	// kustomizations: bases, components, and generator or transformer
	// directories. A kustomization only read as a file (generator data) is
	// not among them.
	Bases []string `json:"bases,omitempty"`
	// Skipped counts the rendered objects of kinds no rule reads, dropped.
	Skipped int `json:"skipped,omitempty"`
	// NetNS names the worker's network namespace.
	NetNS string `json:"netns,omitempty"`

	size, maxOutput int64
	kept, maxKept   int64
	allKinds        bool
	cut             int // errors left out past maxErrors
	// decode decodes what the worker reads of the documents (to drop the
	// kinds no rule reads, to find a resource's line) within one alias
	// budget for the request.
	decode loader.DecodeFunc
}

// fail records an error; a message over several lines (Helm's) is put on one,
// and bounded.
func (r *response) fail(file string, line int, msg string) {
	if len(r.Errors) >= maxErrors {
		r.cut++
		return
	}
	r.Errors = append(r.Errors, evaluator.LoadError{Path: bound(file), Line: line, Message: bound(strings.Join(strings.Fields(msg), " "))})
}

// bound cuts s to about maxMessage bytes, keeping its start and its end (a
// nested error names its cause last), on character boundaries, and saying how
// much was left out.
func bound(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	head, tail := maxMessage/2, len(s)-maxMessage/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s ... (%d bytes not shown) ... %s", s[:head], tail-head, s[tail:])
}

// grow counts rendered bytes against the output limit.
func (r *response) grow(n int) error {
	r.size += int64(n)
	if r.size > r.maxOutput {
		return fmt.Errorf("the rendered output is larger than %d bytes (the limit, --max-file-size)", r.maxOutput)
	}
	return nil
}

// keep counts the bytes of a document sent back against what is left of the
// run's budget for rendered objects (the objects flipflop converts and
// evaluates: a small template must not hand it gigabytes of Stages).
func (r *response) keep(n int) error {
	r.kept += int64(n)
	if r.maxKept > 0 && r.kept > r.maxKept {
		return fmt.Errorf("the rendered objects flipflop reads are larger than what is left of the run's budget for them (%d bytes; the budget is --max-file-size for all renders together)", r.maxKept)
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
	// The limits come first, before anything of the input is read.
	if err := limitSelf(req.Memory, req.CPUSeconds); err != nil {
		fmt.Fprintln(os.Stderr, "flipflop-render: cannot set the limits:", err)
		return 2
	}
	offline()
	watchParent()
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
	resp = &response{maxOutput: req.MaxOutput, maxKept: req.MaxKept, allKinds: req.AllKinds, NetNS: netnsID(), decode: loader.NewAliasBudget().Decoder()}
	c := &confined{Roots: req.Roots, Excluded: req.Excluded, MaxFile: req.MaxFile, Budget: req.Budget}
	defer func() {
		if r := recover(); r != nil {
			resp.Documents = nil
			resp.fail(c.Show(req.Dir), 0, fmt.Sprintf("rendering failed: %v", r))
		}
		resp.Read = c.Read()
		if resp.cut > 0 {
			resp.Errors = append(resp.Errors, evaluator.LoadError{Path: bound(c.Show(req.Dir)), Message: fmt.Sprintf("%d more errors not shown", resp.cut)})
		}
	}()
	switch req.Mode {
	case evaluator.ModeHelm:
		renderHelm(context.Background(), c, req.Dir, req.Helm, resp)
	case evaluator.ModeKustomize:
		renderKustomize(c, req.Dir, resp)
	case modeProbeNetwork:
		probeNetwork(req.Dir, resp)
	case modeProbeMemory:
		probeMemory(req.Dir, resp)
	default:
		resp.fail(c.Show(req.Dir), 0, "unknown render mode "+req.Mode)
	}
	if len(resp.Errors) > 0 {
		resp.Documents = nil
	}
	return resp
}

// errOffline is what every network access of a worker gets.
var errOffline = errors.New("flipflop renders offline: no network access is made")

// refuseTransport is the worker's HTTP transport: it refuses every request.
type refuseTransport struct{}

func (refuseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return nil, errOffline
}

// offline takes the network away from the worker's own code: kustomize
// fetches a URL through an http.Client using http.DefaultTransport, and Helm
// resolves names through net.DefaultResolver; both now refuse. It is the
// inner wall: on Linux the worker also starts in a network namespace with no
// usable interface (sandbox), which stops any other way out.
func offline() {
	http.DefaultTransport = refuseTransport{}
	http.DefaultClient = &http.Client{Transport: refuseTransport{}}
	net.DefaultResolver = &net.Resolver{
		PreferGo: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errOffline
		},
	}
}

// probeNetwork dials addr (modeProbeNetwork) and reports the outcome.
func probeNetwork(addr string, resp *response) {
	conn, err := (&net.Dialer{Timeout: 5 * time.Second}).Dial("tcp", addr)
	if err != nil {
		resp.fail(addr, 0, "dial: "+err.Error())
		return
	}
	_ = conn.Close()
	resp.fail(addr, 0, "dial: connected")
}

// probeMemory allocates and touches the bytes in size (modeProbeMemory).
func probeMemory(size string, resp *response) {
	n, err := strconv.Atoi(size)
	if err != nil || n < 0 {
		resp.fail(size, 0, "not a size")
		return
	}
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	resp.fail(size, 0, "allocated")
}

// watchParent ends the worker as soon as its parent is gone (the kernel
// also kills it on Linux, see sandbox; this covers other systems and a
// parent thread that ended): a render must never outlive the run.
func watchParent() {
	parent := os.Getppid()
	go func() {
		for {
			time.Sleep(100 * time.Millisecond)
			if os.Getppid() != parent {
				os.Exit(5)
			}
		}
	}()
}

// limitMemory caps the worker's memory: a soft limit that makes the garbage
// collector work harder, and a watchdog that ends the process as soon as the
// live heap passes the limit (an allocation is counted when it is made, before
// its pages are touched, so even one huge allocation is caught early). It is
// the inner wall: on Linux the kernel's limits (limitSelf) refuse the
// allocation itself; in a race build, and on other systems, this is all.
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

// sanitize makes a value read from input (a file name, a message quoting a
// template) safe to report (safetext.Controls).
func sanitize(s string) string { return safetext.Controls(s) }
