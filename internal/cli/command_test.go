package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// shellWords splits a command line as bash reads it: words apart by spaces,
// '...' taken literally, $'...' with its backslash escapes (\xHH, \uHHHH,
// \\, \', \", \n, \t, \r), a backslash outside quotes escaping what follows.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
			continue
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				t.Fatalf("unterminated quote in %q", line)
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '$' && i+1 < len(line) && line[i+1] == '\'':
			i += 2
			for ; i < len(line) && line[i] != '\''; i++ {
				if line[i] != '\\' {
					w.WriteByte(line[i])
					continue
				}
				i++
				switch e := line[i]; e {
				case 'x':
					b, err := strconv.ParseUint(line[i+1:i+3], 16, 8)
					if err != nil {
						t.Fatalf("bad \\x in %q", line)
					}
					w.WriteByte(byte(b))
					i += 2
				case 'u', 'U':
					n := 4
					if e == 'U' {
						n = 8
					}
					r, err := strconv.ParseUint(line[i+1:i+1+n], 16, 32)
					if err != nil {
						t.Fatalf("bad \\%c in %q", e, line)
					}
					w.WriteRune(rune(r))
					i += n
				case 'n':
					w.WriteByte('\n')
				case 't':
					w.WriteByte('\t')
				case 'r':
					w.WriteByte('\r')
				default:
					w.WriteByte(e)
				}
			}
			if i >= len(line) {
				t.Fatalf("unterminated $' in %q", line)
			}
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
		default:
			w.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// previewCommands returns the flipflop fix commands an output prints.
func previewCommands(out string) []string {
	return regexp.MustCompile(`(?m)flipflop fix --way [^\n]*$`).FindAllString(out, -1)
}

// A path that reads as a flag ("--apply=true") stays a path in every command
// flipflop prints: the commands put -- before the paths, so running the
// "Preview it" command previews, and writes nothing.
func TestPrintedCommandsKeepPathsPaths(t *testing.T) {
	race.Sequential(t)
	kargo, argocd := readExample(t, "kargo.yaml"), readExample(t, "argocd.yaml")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"--apply=true/argocd.yaml": argocd, "gitops/kargo.yaml": kargo})
	chdir(t, dir)

	listing, stderr, code := run(t, "", "fix", "--", "--apply=true", "gitops")
	if code != ExitOK {
		t.Fatalf("fix -- PATH...: exit %d\n%s", code, stderr)
	}
	markdown, stderr, code := run(t, "", "check", "-o", "markdown", "--", "--apply=true", "gitops")
	if code != ExitFindings {
		t.Fatalf("check -o markdown -- PATH...: exit %d\n%s", code, stderr)
	}
	report, stderr, code := run(t, "", "report", "--", "--apply=true", "gitops")
	if code != ExitFindings {
		t.Fatalf("report -- PATH...: exit %d\n%s", code, stderr)
	}
	cmds := append(previewCommands(listing), previewCommands(markdown)...)
	if len(cmds) < 4 || !strings.Contains(report, "-- --apply=true gitops") {
		t.Fatalf("commands %q; the report's:\n%s", cmds, report)
	}
	for _, cmd := range cmds {
		args := shellWords(t, cmd)
		if i := slices.Index(args, "--"); i < 0 || !slices.Equal(args[i+1:], []string{"--apply=true", "gitops"}) {
			t.Errorf("%q does not put -- before its paths", cmd)
		}
		stdout, stderr, code := run(t, "", args[1:]...)
		if code != ExitOK || !strings.HasPrefix(stdout, "diff --git") {
			t.Errorf("%s: exit %d\n%s%s", cmd, code, stdout, stderr)
		}
		if strings.Contains(stderr, "wrote") {
			t.Errorf("%s wrote files:\n%s", cmd, stderr)
		}
	}
	for name, want := range map[string]string{"--apply=true/argocd.yaml": argocd, "gitops/kargo.yaml": kargo} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s was written by a preview command", name)
		}
	}

	// Every command that takes paths reads the ones after --.
	for _, args := range [][]string{
		{"check", "--", "--apply=true", "gitops"},
		{"explain", "--", "--apply=true", "gitops"},
		{"graph", "--", "--apply=true", "gitops"},
	} {
		if _, stderr, code := run(t, "", args...); code == ExitIncomplete {
			t.Errorf("%q: exit %d\n%s", args, code, stderr)
		}
	}
}
