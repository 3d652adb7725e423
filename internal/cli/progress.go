package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/evaluator/render"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// Progress modes: when a long run says what it does on standard error.
const (
	progressAuto   = "auto"
	progressAlways = "always"
	progressNever  = "never"
)

var progressModes = []string{progressAuto, progressAlways, progressNever}

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressInterval is the least time between two lines written: a progress
// line costs nothing to a run however many directories it renders. Tests
// set it to 0 to see every line.
var progressInterval = 100 * time.Millisecond

// progress tells a person at a terminal what a long run is doing (reading,
// rendering chart 3 of 12, evaluating 10,000 objects), on standard error: one
// line, rewritten in place with a carriage return and cleared when the run
// moves on to printing its result. Asked for (--progress always) where
// standard error is not a terminal, it writes one line per step instead. It
// is off in CI logs and pipes unless asked. A nil *progress says nothing.
type progress struct {
	w       io.Writer
	inPlace bool // a terminal: one line, rewritten and cleared
	width   int  // the longest line written, in columns

	mu      sync.Mutex
	shown   int       // columns of the line on the terminal now (inPlace)
	last    time.Time // when a line was last written; zero after a clear
	pending string    // the newest line, not yet written (too soon after the last)
	timer   *time.Timer
}

// newProgress returns the progress writer for mode on w, or nil when the run
// says nothing: --progress never, or auto where w is not a terminal, in CI
// (CI set, as every CI service sets it) or on a dumb terminal.
func newProgress(mode string, w io.Writer) *progress {
	tty := w != nil && isTerminal(w)
	switch mode {
	case progressNever:
		return nil
	case progressAuto:
		if !tty || inCI() || os.Getenv("TERM") == "dumb" {
			return nil
		}
	}
	if w == nil {
		return nil
	}
	p := &progress{w: w, inPlace: tty, width: 200}
	if tty {
		p.width = 80
		if f, ok := w.(interface{ Fd() uintptr }); ok {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 1 {
				p.width = cols
			}
		}
		p.width-- // a line as wide as the terminal would wrap, and \r not reach its start
	}
	return p
}

// inCI reports whether the run is a CI job: CI set to anything but false.
func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

// say shows line as what the run does now. Values from the input in it must
// be escaped already (safetext.Text); the line is escaped once more as a
// whole, which leaves escaped text as it is.
func (p *progress) say(line string) {
	if p == nil {
		return
	}
	line = fit(safetext.Text(line), p.width)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = line
	if !p.last.IsZero() {
		if wait := progressInterval - time.Since(p.last); wait > 0 {
			if p.timer == nil {
				p.timer = time.AfterFunc(wait, p.flush)
			}
			return
		}
	}
	p.write()
}

// sayf is say with a format; the arguments that come from the input must be
// escaped by the caller.
func (p *progress) sayf(format string, args ...any) {
	if p == nil {
		return
	}
	p.say(fmt.Sprintf(format, args...))
}

func (p *progress) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	if p.pending != "" {
		p.write()
	}
}

// write writes the pending line; p.mu is held.
func (p *progress) write() {
	line := p.pending
	p.pending = ""
	p.last = time.Now()
	if !p.inPlace {
		fmt.Fprintln(p.w, line)
		return
	}
	n := utf8.RuneCountInString(line)
	fmt.Fprint(p.w, "\r"+line+strings.Repeat(" ", max(0, p.shown-n)))
	p.shown = n
}

// done clears the line: the run goes on to print its result, or an error.
func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.pending = ""
	p.last = time.Time{}
	if p.inPlace && p.shown > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.shown)+"\r")
		p.shown = 0
	}
}

// fit cuts line to width columns (runes), ending it with "…" when cut.
func fit(line string, width int) string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return line
	}
	r := []rune(line)
	return string(r[:max(0, width-1)]) + "…"
}

// evaluating says that n objects are being evaluated.
func (p *progress) evaluating(n int) {
	noun := "objects"
	if n == 1 {
		noun = "object"
	}
	p.sayf("evaluating %s %s…", groupDigits(n), noun)
}

// reading says which paths are being read.
func (p *progress) reading(paths []string) {
	if p == nil || len(paths) == 0 {
		return
	}
	what := safetext.Text(paths[0])
	if paths[0] == "-" {
		what = "standard input"
	}
	if len(paths) > 1 {
		what += fmt.Sprintf(" and %d more", len(paths)-1)
	}
	p.sayf("reading %s…", what)
}

// progressRenderer is the run's renderer, saying which directory it renders
// and how many there are: "rendering 3/12: kustomize apps/overlays/prod".
type progressRenderer struct {
	*render.Renderer
	p *progress

	mu      sync.Mutex
	claimed int // directories claimed: the walk's render tasks
	started int // renders started
}

var (
	_ loader.ExcludingRenderer = (*progressRenderer)(nil)
	_ loader.DecodingRenderer  = (*progressRenderer)(nil)
)

// Claim counts the directories the walk will render: every claim is a render
// task, and the walk is over before the first render.
func (r *progressRenderer) Claim(dir string) string {
	mode := r.Renderer.Claim(dir)
	if mode != "" {
		r.mu.Lock()
		r.claimed++
		r.mu.Unlock()
	}
	return mode
}

// Render says what it renders, then renders it. Workers run one at a time
// (the renderer waits for its turn), so the line names the one running, or
// the next one while the last one's output is decoded.
func (r *progressRenderer) Render(dir, shown, mode string) loader.Rendered {
	r.starting(shown, mode)
	return r.Renderer.Render(dir, shown, mode)
}

// RenderDecoding is Render for the loader's run-wide alias budget: the
// embedded renderer's own would be promoted and say nothing.
func (r *progressRenderer) RenderDecoding(dir, shown, mode string, decode loader.DecodeFunc) loader.Rendered {
	r.starting(shown, mode)
	return r.Renderer.RenderDecoding(dir, shown, mode, decode)
}

// starting says which render starts.
func (r *progressRenderer) starting(shown, mode string) {
	r.mu.Lock()
	r.started++
	r.p.sayf("rendering %d/%d: %s %s", r.started, max(r.claimed, r.started), mode, safetext.Text(shown))
	r.mu.Unlock()
}

// groupDigits writes n with a comma between groups of three digits: 10,000.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
