package output

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// fakeTerminal makes every writer a terminal of width columns (0: none)
// for the rest of the test.
func fakeTerminal(t *testing.T, width int) {
	t.Helper()
	old := terminalWidth
	terminalWidth = func(io.Writer) (int, bool) { return width, width > 0 }
	t.Cleanup(func() { terminalWidth = old })
}

// longestWrapped is the longest line of the text format's prose (the why
// lines and the notes on rendered directories: the lines textwrap writes,
// indented by four spaces, in a report without remediations).
func longestWrapped(out string) int {
	longest := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "    ") {
			longest = max(longest, len(line))
		}
	}
	return longest
}

// wideReport is the fixture with a long why and a long note on a rendered
// directory, and no remediation (written as it is, not wrapped).
func wideReport() *evaluator.Report {
	r := fixtureReport()
	for i := range r.Findings {
		r.Findings[i].Remediation = ""
	}
	r.Findings[0].Message = strings.Repeat("Stages acme/dev and acme/qa pin one branch head. ", 8)
	r.Rendered = []evaluator.RenderedRoot{{Path: "charts/app", Mode: evaluator.ModeHelm, Objects: 3,
		NotListed: []string{"charts/app/extra-one.yaml", "charts/app/extra-two.yaml", "charts/app/extra-three.yaml"}}}
	return r
}

// Text wraps its prose to the terminal's width when standard output is one,
// and at 100 columns otherwise (a CI log, a file, a pipe).
func TestTextWrapsToTheTerminal(t *testing.T) {
	opts := fixtureOptions()
	for _, width := range []int{60, 140} {
		fakeTerminal(t, width)
		out := string(render(t, "text", wideReport(), opts))
		if n := longestWrapped(out); n > width || n < width-25 {
			t.Errorf("terminal of %d columns: longest wrapped line %d:\n%s", width, n, out)
		}
	}
	fakeTerminal(t, 0)
	out := string(render(t, "text", wideReport(), opts))
	if n := longestWrapped(out); n > textWidth || n < textWidth-25 {
		t.Errorf("no terminal: longest wrapped line %d, want at most %d:\n%s", n, textWidth, out)
	}
	// A terminal too narrow to read is taken as minTextWidth columns.
	fakeTerminal(t, 5)
	if got := wrapWidth(io.Discard); got != minTextWidth {
		t.Errorf("a 5-column terminal: width %d, want %d", got, minTextWidth)
	}
}

// The real probe: a pipe or a file is no terminal, so the width is 100.
func TestTextWidthOfAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := wrapWidth(w); got != textWidth {
		t.Errorf("a pipe: width %d, want %d", got, textWidth)
	}
	if got := wrapWidth(new(strings.Builder)); got != textWidth {
		t.Errorf("a buffer: width %d, want %d", got, textWidth)
	}
}
