package cli

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flipflop-dev/flipflop/internal/race"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// fakeTerminal makes standard error a terminal (or not) for the rest of the
// test, outside CI, with every progress line written (no rate limit).
func fakeTerminal(t *testing.T, tty bool) {
	t.Helper()
	isTerm, interval := isTerminal, progressInterval
	isTerminal = func(io.Writer) bool { return tty }
	progressInterval = 0
	t.Cleanup(func() { isTerminal, progressInterval = isTerm, interval })
	t.Setenv("CI", "")
	t.Setenv("TERM", "xterm-256color")
}

// A run whose standard error is not a terminal says nothing there: no
// progress in CI logs and pipes, unless asked. Nor in CI, nor with --progress
// never, on a terminal.
func TestProgressSilentUnlessATerminal(t *testing.T) {
	race.Sequential(t)
	for _, tc := range []struct {
		name string
		tty  bool
		ci   string
		args []string
	}{
		{"not a terminal", false, "", nil},
		{"not a terminal, auto", false, "", []string{"--progress", "auto"}},
		{"CI=true on a terminal", true, "true", nil},
		{"never on a terminal", true, "", []string{"--progress", "never"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeTerminal(t, tc.tty)
			t.Setenv("CI", tc.ci)
			args := append(append([]string{"check"}, tc.args...), "../../examples/contradiction")
			_, stderr, code := run(t, "", args...)
			if code != ExitFindings {
				t.Fatalf("exit %d, want %d\n%s", code, ExitFindings, stderr)
			}
			if stderr != "" {
				t.Errorf("standard error is %q, want nothing", stderr)
			}
		})
	}
}

// On a terminal, a run says what it reads, renders and evaluates, on one line
// rewritten with \r, cleared before the result is printed; the paths it names
// are escaped as every path flipflop prints.
func TestProgressOnATerminal(t *testing.T) {
	race.Sequential(t)
	fakeTerminal(t, true)
	dir := t.TempDir()
	// A directory name with an escape sequence and a right-to-left override.
	app := "apps/prod\x1b]0;pwned\a\u202e"
	writeFiles(t, dir, map[string]string{
		app + "/kustomization.yaml": "resources:\n- argocd.yaml\n",
		app + "/argocd.yaml":        readExample(t, "argocd.yaml"),
		"kargo/kargo.yaml":          readExample(t, "kargo.yaml"),
	})
	chdir(t, dir)

	stdout, stderr, code := run(t, "", "check", ".")
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "shared-branch-contradiction") {
		t.Errorf("the contradiction is not reported:\n%s", stdout)
	}
	for _, want := range []string{
		"\rreading .…",
		"\rrendering 1/1: kustomize " + safetext.Text(app),
		"\revaluating 5 objects…",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("standard error lacks %q:\n%q", want, stderr)
		}
	}
	if strings.ContainsAny(stderr, "\x1b\a\u202e\n") {
		t.Errorf("standard error holds a raw control or format character, or a line break:\n%q", stderr)
	}
	// Cleared at the end: the last write blanks the line and returns to its start.
	if i := strings.LastIndex(stderr, "\r"); i < 1 || strings.Trim(stderr[strings.LastIndex(stderr[:i], "\r"):], "\r ") != "" {
		t.Errorf("the progress line is not cleared at the end:\n%q", stderr)
	}
}

// --progress always where standard error is not a terminal (a CI log that
// wants it) writes one line per step, without \r.
func TestProgressAlwaysWritesLines(t *testing.T) {
	race.Sequential(t)
	fakeTerminal(t, false)
	t.Setenv("CI", "true")
	_, stderr, code := run(t, "", "check", "--progress", "always", "../../examples/contradiction")
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want := "reading ../../examples/contradiction…\nevaluating 5 objects…\n"
	if stderr != want {
		t.Errorf("standard error:\n%q\nwant\n%q", stderr, want)
	}
	_, stderr, code = run(t, "", "check", "--progress", "sometimes", "../../examples/contradiction")
	if code != ExitIncomplete || !strings.Contains(stderr, "unknown --progress mode") {
		t.Errorf("--progress sometimes: exit %d\n%s", code, stderr)
	}
}

// Every command that reads inputs takes --progress, and fix does not repeat
// it in the commands it prints.
func TestProgressFlagEverywhere(t *testing.T) {
	race.Sequential(t)
	fakeTerminal(t, false)
	for _, cmd := range []string{"check", "explain", "graph", "fix", "report", "diagnose"} {
		_, stderr, code := run(t, "", cmd, "--progress", "never", "../../examples/contradiction")
		if strings.Contains(stderr, "unknown flag") || code == ExitIncomplete && !strings.HasPrefix(cmd, "diagnose") {
			t.Errorf("%s --progress never: exit %d\n%s", cmd, code, stderr)
		}
	}
	stdout, _, _ := run(t, "", "fix", "--progress", "always", "../../examples/contradiction")
	if !strings.Contains(stdout, "flipflop fix --way") || strings.Contains(stdout, "--progress") {
		t.Errorf("fix's preview commands repeat --progress, or there are none:\n%s", stdout)
	}
}

// Updates closer together than progressInterval are not all written: the last
// one is, when the interval is over; a clear drops what is pending.
func TestProgressRateLimited(t *testing.T) {
	var b syncBuffer
	interval := progressInterval
	progressInterval = 50 * time.Millisecond
	t.Cleanup(func() { progressInterval = interval })
	p := &progress{w: &b, inPlace: true, width: 79}
	for i := range 1000 {
		p.sayf("rendering %d/1000: helm %s", i+1, safetext.Text(filepath.Join("charts", "c")))
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(b.String(), "1000/1000") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := b.String()
	if n := strings.Count(got, "\r"); n != 2 || !strings.HasPrefix(got, "\rrendering 1/1000: helm charts/c") || !strings.Contains(got, "\rrendering 1000/1000: helm charts/c") {
		t.Errorf("1000 updates within the interval wrote %d lines, want the first and the last:\n%q", n, got)
	}
	p.say("evaluating 3 objects…")
	p.done()
	time.Sleep(2 * progressInterval)
	got = b.String()
	if strings.Contains(got, "evaluating") || !strings.HasSuffix(got, "\r"+strings.Repeat(" ", len("rendering 1000/1000: helm charts/c"))+"\r") {
		t.Errorf("a clear should blank the line and drop what is pending:\n%q", got)
	}
	// A nil progress (the run says nothing) is safe to use.
	var none *progress
	none.say("x")
	none.evaluating(3)
	none.done()
}

func TestProgressText(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
	if got := fit("rendering 1/1: kustomize apps/prod", 20); got != "rendering 1/1: kust…" {
		t.Errorf("fit = %q", got)
	}
	var b bytes.Buffer
	p := &progress{w: &b, inPlace: true, width: 79}
	p.evaluating(10000)
	if got := b.String(); got != "\revaluating 10,000 objects…" {
		t.Errorf("evaluating(10000) wrote %q", got)
	}
}

// syncBuffer is a bytes.Buffer that the progress timer's goroutine and the
// test can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
