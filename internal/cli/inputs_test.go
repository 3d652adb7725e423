package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// writeFiles writes name → content under dir, creating directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../examples/contradiction", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// chdir changes the working directory for the rest of the test.
func chdir(t *testing.T, dir string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
}

// An input with no Stage and no Application says so and exits 2 in every
// command that reads inputs, unless --allow-empty.
func TestEmptyInput(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"empty/.keep":       "",
		"other/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"other/notes.json":  `{"not": "kubernetes"}`,
		// a Stage-like object of another API group is not a Kargo Stage
		"other/stage.yaml": "apiVersion: example.com/v1\nkind: Stage\nmetadata:\n  name: s\n",
	})
	for _, in := range []string{filepath.Join(dir, "empty"), filepath.Join(dir, "other")} {
		for _, cmd := range [][]string{{"check"}, {"check", "-o", "json"}, {"explain"}, {"graph"}, {"fix"}} {
			args := append(append([]string{}, cmd...), in)
			stdout, stderr, code := run(t, "", args...)
			if code != ExitIncomplete {
				t.Errorf("%v: exit %d, want 2", args, code)
			}
			if !strings.Contains(stdout+stderr, "no Kargo Stage and no Argo CD Application") {
				t.Errorf("%v does not say the input holds nothing to check:\n%s\n%s", args, stdout, stderr)
			}
			if (cmd[0] == "graph" || cmd[0] == "explain") && stdout != "" {
				t.Errorf("%v drew or explained an empty estate:\n%s", args, stdout)
			}
		}
		stdout, stderr, code := run(t, "", "check", "--allow-empty", in)
		if code != ExitOK {
			t.Errorf("check --allow-empty %s: exit %d:\n%s%s", in, code, stdout, stderr)
		}
	}
	// Applications alone are something to check.
	writeFiles(t, dir, map[string]string{"apps/argocd.yaml": readExample(t, "argocd.yaml")})
	if stdout, _, code := run(t, "", "check", filepath.Join(dir, "apps")); code != ExitOK || !strings.Contains(stdout, "2 objects checked") {
		t.Errorf("Applications alone: exit %d:\n%s", code, stdout)
	}
}

func TestSummaryPlural(t *testing.T) {
	dir := t.TempDir()
	app := strings.SplitN(readExample(t, "argocd.yaml"), "\n---\n", 2)[0]
	writeFiles(t, dir, map[string]string{"one.yaml": app})
	for _, format := range []string{"text", "github"} {
		stdout, _, _ := run(t, "", "check", "-o", format, filepath.Join(dir, "one.yaml"))
		if !strings.Contains(stdout, "1 object checked:") {
			t.Errorf("-o %s: %q lacks \"1 object checked\"", format, stdout)
		}
	}
}

// --exclude, exclude: in .flipflop.yaml and .flipflopignore leave paths
// unread (never opened: a broken file there is no error), say so in the
// summary, and list them in JSON.
func TestExclude(t *testing.T) {
	dir := t.TempDir()
	broken := "kind: Stage\nmetadata:\n  name: [oops\n"
	writeFiles(t, dir, map[string]string{
		"gitops/argocd.yaml":               readExample(t, "argocd.yaml"),
		"gitops/kargo.yaml":                readExample(t, "kargo.yaml"),
		"charts/web/templates/deploy.yaml": "metadata:\n  name: {{ .Values.name }}\n",
		"charts/web/values.yaml":           broken,
		"vendor/x.yaml":                    broken,
	})
	chdir(t, dir)
	if _, _, code := run(t, "", "check", "."); code != ExitIncomplete {
		t.Fatalf("without excludes: exit %d, want 2", code)
	}
	stdout, stderr, code := run(t, "", "check", "--exclude", "templates/", "--exclude", "values.yaml", "--exclude", "/vendor", ".")
	if code != ExitFindings || !strings.Contains(stdout, "3 paths excluded") {
		t.Errorf("--exclude: exit %d:\n%s%s", code, stdout, stderr)
	}

	writeFiles(t, dir, map[string]string{".flipflopignore": "# Helm charts are rendered elsewhere\ncharts/\n"})
	writeFiles(t, dir, map[string]string{".flipflop.yaml": "exclude:\n- vendor/**\n"})
	stdout, stderr, code = run(t, "", "check", "-o", "json", ".")
	if code != ExitFindings {
		t.Fatalf(".flipflopignore and exclude: exit %d:\n%s%s", code, stdout, stderr)
	}
	var report evaluator.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	want := []evaluator.Exclusion{
		{Path: "charts/", Pattern: "charts/", Source: ".flipflopignore:2"},
		{Path: "vendor/x.yaml", Pattern: "vendor/**", Source: ".flipflop.yaml:2"},
	}
	if len(report.Excluded) != len(want) || report.Excluded[0] != want[0] || report.Excluded[1] != want[1] {
		t.Errorf("excluded %+v, want %+v", report.Excluded, want)
	}
	if _, _, code := run(t, "", "check", "--no-ignore-file", "."); code != ExitIncomplete {
		t.Errorf("--no-ignore-file: exit %d, want 2 (the chart is read again)", code)
	}
	// A path given explicitly is excluded too (a shell glob must not bring excluded files back).
	if stdout, _, code := run(t, "", "check", "gitops", "charts/web/values.yaml"); code != ExitFindings || !strings.Contains(stdout, "1 path excluded") {
		t.Errorf("explicit excluded file: exit %d:\n%s", code, stdout)
	}
	// Malformed patterns are input errors naming where they were written.
	writeFiles(t, dir, map[string]string{".flipflopignore": "charts/\n[oops\n"})
	stdout, _, code = run(t, "", "check", ".")
	if code != ExitIncomplete || !strings.Contains(stdout, ".flipflopignore:2:") {
		t.Errorf("malformed .flipflopignore: exit %d:\n%s", code, stdout)
	}
	if _, stderr, code := run(t, "", "check", "--exclude", "[x", "gitops"); code != ExitIncomplete {
		t.Errorf("malformed --exclude: exit %d: %s", code, stderr)
	}
}

// The help of each command describes that command, on standard output: fix
// has no cluster flags, rules and version print usage for --help.
func TestHelp(t *testing.T) {
	stdout, _, code := run(t, "", "fix", "--help")
	if code != ExitOK || strings.Contains(stdout, "--cluster") || strings.Contains(stdout, "--kubeconfig") || !strings.Contains(stdout, "--exclude") {
		t.Errorf("fix --help (exit %d) lists flags fix refuses, or lacks --exclude:\n%s", code, stdout)
	}
	for _, cmd := range []string{"check", "explain", "graph", "diagnose"} {
		stdout, _, _ := run(t, "", cmd, "--help")
		for _, want := range []string{"--cluster", "--exclude", "--allow-empty"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s --help lacks %s", cmd, want)
			}
		}
	}
	stdout, _, code = run(t, "", "rules", "--help")
	if code != ExitOK || !strings.HasPrefix(stdout, "Usage: flipflop rules") {
		t.Errorf("rules --help (exit %d):\n%s", code, stdout)
	}
	stdout, stderr, code := run(t, "", "version", "--help")
	if code != ExitOK || stderr != "" || !strings.HasPrefix(stdout, "Usage: flipflop version") {
		t.Errorf("version --help (exit %d) printed %q / %q", code, stdout, stderr)
	}
	stdout, _, code = run(t, "", "version")
	if code != ExitOK || !strings.HasPrefix(stdout, "flipflop ") || !strings.Contains(stdout, "\nopa ") {
		t.Errorf("version (exit %d):\n%s", code, stdout)
	}
	stdout, _, code = run(t, "", "--version")
	if code != ExitOK || !strings.HasPrefix(stdout, "flipflop ") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("--version (exit %d): %q", code, stdout)
	}
}

// One pointer has one name in check, explain and graph, also when an
// Application tracks HEAD; an Application without a namespace is shown in the
// namespace it is taken to live in.
func TestPointerAndNamespaceNames(t *testing.T) {
	dir := t.TempDir()
	apps := strings.Replace(readExample(t, "argocd.yaml"), "targetRevision: main", "targetRevision: HEAD", 1)
	apps = strings.ReplaceAll(apps, "  namespace: argocd\n", "")
	writeFiles(t, dir, map[string]string{"argocd.yaml": apps, "kargo.yaml": readExample(t, "kargo.yaml")})
	check, _, _ := run(t, "", "check", dir)
	explained, _, _ := run(t, "", "explain", dir)
	drawn, _, _ := run(t, "", "graph", dir)
	const pointer = "github.com/acme/deploy @ main"
	if !strings.Contains(check, "pointer  "+pointer+"\n") || strings.Contains(check, "taken to be main)") {
		t.Errorf("check names the pointer otherwise:\n%s", check)
	}
	if !strings.HasPrefix(explained, pointer+"\n  (an Application tracks HEAD, taken to be main") {
		t.Errorf("explain names the pointer otherwise:\n%s", explained)
	}
	if !strings.Contains(drawn, `[("`+pointer+`")]`) {
		t.Errorf("graph names the pointer otherwise:\n%s", drawn)
	}
	if !strings.Contains(check, "HEAD was taken to be main") {
		t.Errorf("check no longer says HEAD was taken to be main:\n%s", check)
	}
	if !strings.Contains(check, "Application argocd/dev ") || strings.Contains(check, "Application dev ") {
		t.Errorf("a namespace-less Application is not shown in argocd:\n%s", check)
	}
	fix, _, _ := run(t, "", "fix", dir)
	if !strings.Contains(fix, "Application argocd/dev") {
		t.Errorf("fix does not show the effective namespace:\n%s", fix)
	}
}

// Kargo manifests kept without metadata.namespace (for kargo apply --project)
// have an unknown project: no authorization is judged on them, while the
// contradiction, which does not depend on it, is still found. -n gives them a
// namespace as kubectl apply -n would, and so does the Argo CD Application
// that deploys their directory; only one -n means anything without --cluster.
func TestManifestsWithoutNamespace(t *testing.T) {
	dir := t.TempDir()
	var kargo []string
	for _, line := range strings.Split(readExample(t, "kargo.yaml"), "\n") {
		if strings.TrimSpace(line) != "namespace: acme" {
			kargo = append(kargo, line)
		}
	}
	// The Applications authorize only acme:qa: acme/dev is not authorized.
	apps := strings.ReplaceAll(readExample(t, "argocd.yaml"), "acme:dev", "acme:qa")
	writeFiles(t, dir, map[string]string{"kargo/stages.yaml": strings.Join(kargo, "\n"), "apps/argocd.yaml": apps})
	chdir(t, dir)
	rules := func(args ...string) map[string][]string {
		t.Helper()
		out, stderr, code := run(t, "", append([]string{"check", "-o", "json"}, args...)...)
		if code != ExitFindings {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var rep evaluator.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{}
		for _, f := range rep.Findings {
			got[f.Rule] = append(got[f.Rule], f.Message)
		}
		return got
	}
	unknown := rules("kargo", "apps")
	if len(unknown["missing-authorized-stage"]) != 0 || len(unknown["shared-branch-contradiction"]) != 1 {
		t.Errorf("no namespace: want the contradiction and no authorization error, got %v", unknown)
	}
	for _, args := range [][]string{{"-n", "acme", "kargo", "apps"}, {"--namespace=acme", "kargo", "apps"}} {
		got := rules(args...)
		if m := got["missing-authorized-stage"]; len(m) != 1 || !strings.Contains(m[0], "Stage acme/dev") || !strings.Contains(m[0], "-n)") {
			t.Errorf("%v: want acme/dev unauthorized, saying the project came from -n; got %v", args, got)
		}
	}
	writeFiles(t, dir, map[string]string{"apps/kargo.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: kargo, namespace: argocd}
spec:
  source: {repoURL: "https://github.com/acme/platform", targetRevision: main, path: kargo}
  destination: {server: "https://kubernetes.default.svc", namespace: acme}
`})
	got := rules("kargo", "apps")
	if m := got["missing-authorized-stage"]; len(m) != 1 || !strings.Contains(m[0], "destination namespace of Application argocd/kargo") {
		t.Errorf("deployed by an Application: want acme/dev unauthorized, naming the Application; got %v", got)
	}
	if _, stderr, code := run(t, "", "check", "-n", "a", "-n", "b", "kargo"); code != ExitIncomplete || !strings.Contains(stderr, "one namespace") {
		t.Errorf("two -n without --cluster: exit %d, %s", code, stderr)
	}
}
