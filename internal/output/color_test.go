package output

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// withTerminal makes every writer look like a terminal (or not) for the test.
func withTerminal(t *testing.T, tty bool) {
	t.Helper()
	old := isTerminal
	isTerminal = func(io.Writer) bool { return tty }
	t.Cleanup(func() { isTerminal = old })
}

// clearColorEnv unsets NO_COLOR and TERM for the test.
func clearColorEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"NO_COLOR", "TERM"} {
		t.Setenv(k, "") // restores the old value afterwards
		os.Unsetenv(k)
	}
}

func TestColor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  string
		tty   bool
		env   map[string]string
		color bool
	}{
		{"never", ColorNever, true, nil, false},
		{"always", ColorAlways, false, nil, true},
		{"auto, not a terminal", ColorAuto, false, nil, false},
		{"empty means auto, not a terminal", "", false, nil, false},
		{"auto, terminal", ColorAuto, true, nil, true},
		{"empty means auto, terminal", "", true, nil, true},
		{"auto, terminal, NO_COLOR", ColorAuto, true, map[string]string{"NO_COLOR": "1"}, false},
		{"auto, terminal, empty NO_COLOR", ColorAuto, true, map[string]string{"NO_COLOR": ""}, true},
		{"auto, terminal, TERM=dumb", ColorAuto, true, map[string]string{"TERM": "dumb"}, false},
		{"always beats NO_COLOR", ColorAlways, false, map[string]string{"NO_COLOR": "1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearColorEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			withTerminal(t, tc.tty)
			out := render(t, "text", fixtureReport(), Options{Color: tc.mode})
			if got := ansi.Match(out); got != tc.color {
				t.Errorf("coloured = %v, want %v:\n%s", got, tc.color, out)
			}
		})
	}
}

// TestColorAutoRealWriter checks the real terminal test on writers that are
// not terminals: a buffer and a file.
func TestColorAutoRealWriter(t *testing.T) {
	clearColorEnv(t)
	if out := render(t, "text", fixtureReport(), Options{}); ansi.Match(out) {
		t.Error("coloured a bytes.Buffer")
	}
	f, err := os.Create(t.TempDir() + "/out.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Write(f, "text", fixtureReport(), Options{Color: ColorAuto}); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, io.SeekStart)
	out, _ := io.ReadAll(f)
	if ansi.Match(out) {
		t.Error("coloured a regular file")
	}
}

// TestColorKeepsLayout checks that colour only adds escapes: without them
// the coloured text is the plain text, and what is painted is what should be.
func TestColorKeepsLayout(t *testing.T) {
	plain := render(t, "text", fixtureReport(), Options{Color: ColorNever})
	colored := render(t, "text", fixtureReport(), Options{Color: ColorAlways})
	if stripped := ansi.ReplaceAll(colored, nil); !bytes.Equal(stripped, plain) {
		t.Errorf("coloured text differs from plain text beyond escapes:\n%s\n---\n%s", stripped, plain)
	}
	s := string(colored)
	for _, want := range []string{
		"\x1b[1;31mERROR\x1b[0m  \x1b[1mshared-branch-contradiction\x1b[0m  Several Stages pin one floating pointer\n",
		"\x1b[1;33mWARNING\x1b[0m  \x1b[1mshared-write-branch\x1b[0m",
		"\x1b[1;36mINFO\x1b[0m  \x1b[1mlegacy-mechanism\x1b[0m",
		"\x1b[2mgitops/kargo.yaml:18\x1b[0m\n",
		"\x1b[2mcharts/broken.yaml:4:\x1b[0m yaml: line 4",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("coloured text lacks %q", want)
		}
	}
	// A resource without a location paints nothing.
	if strings.Contains(s, "\x1b[2m\x1b[0m") {
		t.Error("painted an empty string")
	}
}
