package ignore

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, text string) *Pattern {
	t.Helper()
	p, err := Parse(text, "test")
	if err != nil || p == nil {
		t.Fatalf("Parse(%q) = %v, %v", text, p, err)
	}
	return p
}

func TestPatternMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		path    string
		dir     bool
		want    bool
	}{
		{"charts", "charts", true, true},
		{"charts", "a/b/charts", true, true},
		{"charts", "a/charts/x.yaml", false, false}, // the directory matches, not its files (Excluded handles them)
		{"charts/", "charts", true, true},
		{"charts/", "charts", false, false},
		{"/charts", "charts", true, true},
		{"/charts", "a/charts", true, false},
		{"a/charts", "a/charts", true, true},
		{"a/charts", "b/a/charts", true, false},
		{"*.tpl.yaml", "x/y/deploy.tpl.yaml", false, true},
		{"*.yaml", "x.yml", false, false},
		{"templates/", "chart/templates", true, true},
		{"**/templates", "chart/templates", true, true},
		{"**/templates", "templates", true, true},
		{"charts/**", "charts", true, false},
		{"charts/**", "charts/a", false, true},
		{"charts/**", "charts/a/b/c.yaml", false, true},
		{"a/**/b", "a/b", true, true},
		{"a/**/b", "a/x/y/b", true, true},
		{"a/**/b", "a/x/y/c", true, false},
		{"a/*/b", "a/x/b", true, true},
		{"a/*/b", "a/x/y/b", true, false},
		{"?.yaml", "a.yaml", false, true},
		{"?.yaml", "ab.yaml", false, false},
		{"[ab].yaml", "b.yaml", false, true},
		{"[!ab].yaml", "b.yaml", false, false},
		{`\#x`, "#x", false, true},
		{`\!x`, "!x", false, true},
		{"x\\ ", "x ", false, true},
		{"x   ", "x", false, true},
		{"a**b", "aXYb", false, true}, // ** inside a segment is *
		{"**/**/x", "x", false, true},
	} {
		p := mustParse(t, tc.pattern)
		if got := p.Match(tc.path, tc.dir); got != tc.want {
			t.Errorf("%q matches %q (dir %v) = %v, want %v", tc.pattern, tc.path, tc.dir, got, tc.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, text := range []string{"[abc", `x\`, "/", "!"} {
		if p, err := Parse(text, "src"); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", text, p)
		}
	}
	for _, text := range []string{"", "   ", "# comment"} {
		if p, err := Parse(text, "src"); p != nil || err != nil {
			t.Errorf("Parse(%q) = %+v, %v; want nothing", text, p, err)
		}
	}
	if _, err := ParseLines(strings.Repeat("x\n", MaxPatterns+1), ".flipflopignore"); err == nil {
		t.Error("more than MaxPatterns patterns were accepted")
	}
	_, err := ParseLines("ok\n[bad\n", ".flipflopignore")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.HasPrefix(err.Error(), ".flipflopignore:2: ") {
		t.Errorf("error %v does not name the file and line", err)
	}
}

func TestSetPrecedenceAndParents(t *testing.T) {
	root := filepath.FromSlash("/repo")
	var s Set
	top, _ := ParseLines("*.json\ncharts/\n!keep.json\n", "/repo/.flipflopignore")
	s.AddDir(root, top...)
	sub, _ := ParseLines("*.yaml\n!app.yaml\n", "/repo/apps/.flipflopignore")
	s.AddDir(filepath.Join(root, "apps"), sub...)
	cli := []*Pattern{mustParse(t, "apps/app.yaml")}
	s.Add(root, cli...)
	abs := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	for _, tc := range []struct {
		path string
		dir  bool
		want bool
		by   string
	}{
		{"x.json", false, true, "*.json"},
		{"keep.json", false, false, "!keep.json"}, // the last match wins
		{"charts", true, true, "charts/"},
		{"charts/a/b.yaml", false, true, "charts/"}, // inside an excluded directory
		{"apps/web.yaml", false, true, "*.yaml"},
		{"apps/app.yaml", false, true, "apps/app.yaml"}, // the command line wins over the deeper file's !app.yaml
		{"web.yaml", false, false, ""},                  // apps/.flipflopignore applies under apps/ only
		{"other/apps/web.yaml", false, false, ""},
	} {
		p, ex := s.Excluded(abs(tc.path), tc.dir)
		by := ""
		if p != nil {
			by = p.Text
		}
		if ex != tc.want || by != tc.by {
			t.Errorf("%s: excluded %v by %q, want %v by %q", tc.path, ex, by, tc.want, tc.by)
		}
	}
	if _, ex := s.Decide(abs("charts/a/b.yaml"), false); ex {
		t.Error("Decide looked at parent directories")
	}
}

// Hostile patterns and deep trees cost polynomial time: a backtracking matcher
// takes exponential time on this pattern and path.
func TestNoBlowUp(t *testing.T) {
	p := mustParse(t, strings.Repeat("**/a/", 30)+"b")
	path := strings.Repeat("a/", 200) + "c"
	start := time.Now()
	if p.Match(path, false) {
		t.Fatal("matched")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("one match took %v", d)
	}
}

// git is the reference for the syntax: every pattern must exclude exactly the
// paths `git check-ignore` reports for the same .gitignore.
func TestAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	patterns := []string{
		"charts", "charts/", "/charts", "a/charts", "*.tpl.yaml", "templates/", "**/templates",
		"charts/**", "a/**/b", "a/*/b", "?.yaml", "[ab].yaml", "[!ab].yaml", "x/", "**/x/*.yaml",
		"*", "*/", "b", "a/b/", "**/b/**", "/a/**/c.yaml", "a/**", "*.y*ml", "c.yaml ",
	}
	paths := []string{
		"charts/x.yaml", "a/charts/x.yaml", "a/b/charts/y.yaml", "deploy.tpl.yaml", "x/deploy.tpl.yaml",
		"chart/templates/d.yaml", "templates/d.yaml", "a/b/c.yaml", "a/x/b/c.yaml", "a/x/y/b/c.yaml",
		"b", "a.yaml", "ab.yaml", "c.yaml", "x/c.yaml", "x/y/c.yaml", "y/x/c.yaml",
		"q/b/r/s.yaml", "a/c.yaml", "a/q/c.yaml",
	}
	for _, pat := range patterns {
		dir := t.TempDir()
		gitCmd(t, dir, "init", "-q")
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(pat+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			f := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := gitCmd(t, dir, append([]string{"check-ignore", "--no-index", "--"}, paths...)...)
		want := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l != "" {
				want[l] = true
			}
		}
		var s Set
		ps, err := ParseLines(pat+"\n", ".gitignore")
		if err != nil {
			t.Fatal(err)
		}
		s.AddDir(dir, ps...)
		for _, p := range paths {
			_, got := s.Excluded(filepath.Join(dir, filepath.FromSlash(p)), false)
			if got != want[p] {
				t.Errorf("pattern %q, path %s: excluded %v, git says %v", pat, p, got, want[p])
			}
		}
	}
}

func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		// check-ignore exits 1 when nothing is ignored
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("git %v: %v: %s", args, err, errb.String())
		}
	}
	return out.String()
}
