package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// hostileEstate is examples/contradiction beside testdata/hostile/names.yaml
// (a Stage and Applications whose names carry terminal escapes, the log
// commands of GitHub Actions, Azure Pipelines, TeamCity, GitLab CI and
// Buildkite, and bidi controls, joining the contradiction), plus a file whose
// name carries them too and does not parse.
func hostileEstate(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad\n::error file=x::forged\x1b]52;c;aGk=\x07\u202e ##vso[task.setvariable variable=x]y ##teamcity[message text='x'] section_start:1:x\n--- x.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: [\n"), 0o644); err != nil {
		t.Skipf("this file system refuses hostile file names: %v", err)
	}
	return []string{"../../examples/contradiction", "../../testdata/hostile/names.yaml", dir}
}

// assertSafe fails when out, with its own line breaks taken out, still holds
// a character safetext escapes (a control or format character, a log command
// marker of a CI system).
func assertSafe(t *testing.T, what, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if off, bad, ok := safetext.Unsafe(line); ok {
			t.Errorf("%s line %d holds %s at %d: %q", what, i+1, bad, off, line)
		}
	}
}

// Every human-facing output of check, explain, graph and fix prints the hostile
// names escaped, and the real finding of the estate is still reported.
func TestHostileNamesEscapedEverywhere(t *testing.T) {
	race.Sequential(t)
	paths := hostileEstate(t)

	// The real finding is still there (JSON is data: the names as they are).
	stdout, _, code := run(t, "", append([]string{"check", "-o", "json"}, paths...)...)
	if code != ExitIncomplete {
		t.Errorf("check -o json: exit %d, want %d (the file that does not parse)", code, ExitIncomplete)
	}
	var report struct {
		Findings []struct {
			Rule      string
			Resources []struct{ Kind, Namespace, Name string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	// The hostile Stage's Application does not authorize it (no annotation can:
	// its name holds a comma), so its promotions fail and its pins join no
	// contradiction; the failure names it.
	found, named := false, false
	for _, f := range report.Findings {
		var names []string
		for _, r := range f.Resources {
			names = append(names, r.Namespace+"/"+r.Name)
		}
		if f.Rule == "shared-branch-contradiction" && slices.Contains(names, "acme/dev") && slices.Contains(names, "acme/qa") {
			found = true
		}
		if f.Rule == "missing-authorized-stage" && slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "acme/evil\n::error") }) {
			named = true
		}
	}
	if !found || !named {
		t.Fatalf("the contradiction of acme/dev and acme/qa (%v), or the hostile Stage's failure (%v), is not reported:\n%s", found, named, stdout)
	}

	for _, format := range []string{"text", "github", "junit", "sarif"} {
		stdout, stderr, _ := run(t, "", append([]string{"check", "-o", format, "--color", "never"}, paths...)...)
		assertSafe(t, "stderr of check -o "+format, stderr)
		switch format {
		case "text":
			assertSafe(t, "check -o text", stdout)
			if !strings.Contains(stdout, `Stage       acme/"evil\n\x3a:error file=README.md`) {
				t.Errorf("the hostile Stage is not shown quoted and escaped:\n%s", stdout)
			}
			for _, want := range []string{
				`##vso\x5btask.setvariable variable=x]y ##teamcity\x5bmessage text='x'] section_start\x3a1:x\n\x2d-- x\n\x2b++ y\n\x5e^^ \x2b++\n\x7e~~ z`,
				`ghost ##vso\x5btask.complete result=Failed] ##teamcity\x5bbuildStatus text='ok']`,
			} {
				if !strings.Contains(stdout, want) {
					t.Errorf("check -o text does not show %s:\n%s", want, stdout)
				}
			}
		case "github":
			// Each line is one workflow command of ours, or the summary.
			command := regexp.MustCompile(`^::(error|warning|notice)( [^:]*)?::(.*)$`)
			for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
				m := command.FindStringSubmatch(line)
				if m == nil {
					if !strings.HasPrefix(line, "flipflop: ") {
						t.Errorf("-o github line is neither a command nor the summary: %q", line)
					}
					continue
				}
				assertSafe(t, "-o github properties", m[2])
				assertSafe(t, "-o github message", m[3])
			}
		case "junit":
			if err := xml.Unmarshal([]byte(stdout), new(any)); err != nil {
				t.Errorf("junit does not parse: %v", err)
			}
			assertSafe(t, "check -o junit", stdout)
		case "sarif":
			var doc any
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			// The rules' descriptions (tool.driver.rules) are the bundle's
			// own text, with YAML examples ("---" lines); everything else may
			// quote input. An artifact URI is percent-encoded (no control
			// character, white space, '#' or '[' stays raw), so the only
			// marker it can hold is GitLab's "section_start:", which does
			// nothing without the CR and ESC[0K that became %0D%1B.
			runs, _ := doc.(map[string]any)["runs"].([]any)
			for _, run := range runs {
				for k, v := range run.(map[string]any) {
					if k == "tool" {
						continue
					}
					walkStrings(v, func(key, s string) {
						if key == "uri" {
							s = strings.NewReplacer("section_start:", "", "section_end:", "").Replace(s)
						}
						assertSafe(t, "SARIF "+key, s)
					})
				}
			}
		}
	}

	stdout, stderr, _ := run(t, "", append([]string{"explain"}, paths...)...)
	assertSafe(t, "explain", stdout)
	assertSafe(t, "stderr of explain", stderr)
	if !strings.Contains(stdout, "github.com/acme/deploy @ main") {
		t.Errorf("explain lost the timeline:\n%s", stdout)
	}
	for _, format := range []string{"mermaid", "dot", "svg"} {
		stdout, stderr, _ = run(t, "", append([]string{"graph", "-o", format}, paths...)...)
		assertSafe(t, "graph -o "+format, stdout)
		assertSafe(t, "stderr of graph", stderr)
	}
	// Markdown may be printed to a CI log too; its pictures' labels and its
	// values are escaped for Markdown and Mermaid on top of that.
	stdout, stderr, _ = run(t, "", append([]string{"check", "-o", "markdown"}, paths...)...)
	assertSafe(t, "check -o markdown", stdout)
	assertSafe(t, "stderr of check -o markdown", stderr)
	if !strings.Contains(stdout, "```mermaid") || strings.Contains(stdout, "<img") || strings.Contains(stdout, "](http") && !strings.Contains(stdout, "](https://github.com/flipflop-dev/flipflop/blob/main/docs/rules/") {
		t.Errorf("check -o markdown:\n%s", stdout)
	}
	// The HTML page holds every value as text: no control or format
	// character, no tag of the input's.
	stdout, stderr, _ = run(t, "", append([]string{"report"}, paths...)...)
	assertSafe(t, "stderr of report", stderr)
	if off, bad, ok := safetext.Unsafe(strings.ReplaceAll(stdout, "\n", "")); ok && !strings.HasPrefix(bad, "##") && !strings.HasPrefix(bad, "::") && !strings.HasPrefix(bad, "section_") && !strings.HasSuffix(bad, "(Buildkite log group)") {
		t.Errorf("report holds %s at %d", bad, off)
	}
	for _, tag := range []string{"<script", "<img", "<iframe", " onerror=", " onload="} {
		if strings.Contains(stdout, tag) {
			t.Errorf("report holds %q", tag)
		}
	}
	// fix prints no patch from a partly read estate; without the broken file
	// it lists the ways out.
	_, stderr, _ = run(t, "", append([]string{"fix"}, paths...)...)
	assertSafe(t, "stderr of fix", stderr)
	stdout, stderr, _ = run(t, "", "fix", paths[0], paths[1])
	assertSafe(t, "fix listing", stdout)
	assertSafe(t, "stderr of fix", stderr)
	if !strings.Contains(stdout, "shared-branch-contradiction") {
		t.Errorf("fix lists no way out:\n%s", stdout)
	}
}

// walkStrings calls f with every string of a decoded JSON value, object keys
// included, and the name of the member it is in ("" for a key, and for a
// string outside any object).
func walkStrings(v any, f func(key, s string)) {
	walk(v, "", f)
}

func walk(v any, key string, f func(key, s string)) {
	switch x := v.(type) {
	case string:
		f(key, x)
	case []any:
		for _, e := range x {
			walk(e, key, f)
		}
	case map[string]any:
		for k, e := range x {
			f("", k)
			walk(e, k, f)
		}
	}
}

// fix names the files it patches on standard error (where the diff would
// apply, what --apply wrote): a file name that carries log commands and
// control characters is printed escaped there. (The diff on standard output
// is a patch: its headers name the files as git does.)
func TestFixEscapesHostileFileNames(t *testing.T) {
	dir := t.TempDir()
	kargo := "gitops/##vso[task.setvariable variable=x]y --- a\x1b[2J.yaml"
	argocd := "gitops/section_start:1:x ##teamcity[message text='m'].yaml"
	writeFiles(t, dir, map[string]string{kargo: readExample(t, "kargo.yaml"), argocd: readExample(t, "argocd.yaml")})
	// The top of a work tree, and a directory under it to run in: the note
	// on where to apply the diff names a file outside it.
	for _, d := range []string{".git", "sub"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	chdir(t, filepath.Join(dir, "sub"))

	_, stderr, code := run(t, "", "fix", "--way", "stage-branches", "..")
	if code != ExitOK || !strings.Contains(stderr, "lies outside this directory") {
		t.Fatalf("exit %d; no note on where to apply the diff:\n%s", code, stderr)
	}
	assertSafe(t, "stderr of fix --way", stderr)
	if !strings.Contains(stderr, `##teamcity\x5bmessage text='m'].yaml lies outside`) && !strings.Contains(stderr, `##vso\x5btask.setvariable variable=x]y \x2d-- a\x1b[2J.yaml lies outside`) {
		t.Errorf("the note does not name the file escaped:\n%s", stderr)
	}

	_, stderr, code = run(t, "", "fix", "--way", "stage-branches", "--apply", "..")
	if code != ExitOK {
		t.Fatalf("--apply: exit %d\n%s", code, stderr)
	}
	assertSafe(t, "stderr of fix --apply", stderr)
	for _, want := range []string{`../gitops/##vso\x5btask.setvariable variable=x]y \x2d-- a\x1b[2J.yaml`, `../gitops/section_start\x3a1:x ##teamcity\x5bmessage text='m'].yaml`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--apply does not name %s:\n%s", want, stderr)
		}
	}
}

// laughs is YAML whose aliases expand to 135,740 values, indented by indent.
func laughs(indent string) string {
	var b strings.Builder
	b.WriteString(indent + "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 5; i++ {
		b.WriteString(indent + "l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [" + strings.TrimSuffix(strings.Repeat("*l"+string(rune('0'+i-1))+", ", 10), ", ") + "]\n")
	}
	return b.String()
}

// One alias budget for the whole run: files, standard input and the files
// --repo-root git generators read. Eight files of a Stage whose aliases expand
// to about 136,000 values each spend it (1,000,000 values and one per byte
// read); standard input, read after them, and the parameters file a git
// generator reads are errors naming the file and the line where the budget
// ran out (what their own bytes bring pays for their first alias), and the
// contradiction beside them is still reported.
func TestAliasBudgetIsTheRuns(t *testing.T) {
	race.Sequential(t)
	dir, root := t.TempDir(), t.TempDir()
	for i := range 8 {
		stage := "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: laugh-" + string(rune('a'+i)) + ", namespace: other}\nspec:\n" + laughs("  ")
		if err := os.WriteFile(filepath.Join(dir, "laugh-"+string(rune('a'+i))+".yaml"), []byte(stage), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	appSet := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: files, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: https://github.com/acme/params.git
      revision: HEAD
      files: [{path: "params/*.yaml"}]
  template:
    metadata: {name: 'p-{{.path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://github.com/acme/deploy.git, targetRevision: main, path: x}
      destination: {server: https://kubernetes.default.svc, namespace: x}
`
	if err := os.WriteFile(filepath.Join(dir, "appset.yaml"), []byte(appSet), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "params"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "params", "p.yaml"), []byte(laughs("")), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: from-stdin, namespace: other}\nspec:\n" + laughs("  ")
	stdout, _, code := run(t, stdin, "check", "-o", "json", "--repo-root", root, "../../examples/contradiction", dir, "-")
	if code != ExitIncomplete {
		t.Errorf("exit %d, want %d", code, ExitIncomplete)
	}
	var report struct {
		Findings []struct{ Rule string }
		Errors   []struct {
			File, Message string
			Line          int
		}
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	var files, stdinCut, paramsCut int
	for _, e := range report.Errors {
		switch {
		case strings.HasSuffix(e.File, ".yaml") && strings.Contains(e.File, "laugh-") && strings.Contains(e.Message, "left of the run's budget"):
			files++
		case e.File == "<stdin>" && e.Line == 7 && strings.Contains(e.Message, "left of the run's budget"):
			stdinCut++
		case strings.HasSuffix(e.File, "appset.yaml") && strings.Contains(e.Message, "git files generator: params/p.yaml:3: aliases expand to more values than are left of the run's budget"):
			paramsCut++
		default:
			t.Errorf("error %+v", e)
		}
	}
	if files != 1 || stdinCut != 1 || paramsCut != 1 {
		t.Errorf("errors %+v: want the eighth file, standard input and the parameters file over the run's budget", report.Errors)
	}
	if !slices.ContainsFunc(report.Findings, func(f struct{ Rule string }) bool { return f.Rule == "shared-branch-contradiction" }) {
		t.Errorf("findings %+v: the contradiction beside the files is not reported", report.Findings)
	}
}
