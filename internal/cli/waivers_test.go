package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// intruder is a Stage of another Kargo project (mallory) that joins the
// contradiction of examples/contradiction, carrying annotation as its
// flipflop.dev/ignore, and the Application it pins.
func intruder(annotation string) string {
	return `apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata:
  name: intruder
  namespace: mallory
  annotations:
    flipflop.dev/ignore: "` + annotation + `"
spec:
  promotionTemplate:
    spec:
      steps:
      - uses: git-clone
        config:
          repoURL: https://github.com/acme/deploy.git
          checkout: [{branch: main, path: ./repo}]
      - uses: git-push
        as: push
        config: {path: ./repo}
      - uses: argocd-update
        config:
          apps:
          - name: intruder
            sources:
            - repoURL: https://github.com/acme/deploy.git
              desiredRevision: ${{ outputs.push.commit }}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: intruder
  namespace: argocd
  annotations:
    kargo.akuity.io/authorized-stage: mallory:intruder
    flipflop.dev/ignore: "` + annotation + `"
spec:
  source: {repoURL: https://github.com/acme/deploy.git, targetRevision: main, path: env/intruder}
`
}

type waivedReport struct {
	Findings []struct {
		Rule    string
		Message string
		Waived  *struct{ Reason, By string }
	}
	Errors []struct {
		Path    string `json:"file"`
		Line    int
		Message string
	}
}

// check runs `flipflop check -o json` in dir on examples/contradiction and the
// files given, and returns the findings of rule, the exit code, and standard
// error followed by the input errors of the report (path: message, or
// path:line: message).
func waiverCheck(t *testing.T, dir string, args ...string) (map[string][]bool, int, string) {
	t.Helper()
	t.Chdir(dir)
	example, _ := filepath.Abs(filepath.Join(repoRootDir, "examples/contradiction"))
	stdout, stderr, code := run(t, "", append(append([]string{"check", "-o", "json"}, args...), example, "pr.yaml")...)
	var r waivedReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil && code != ExitIncomplete {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	out := map[string][]bool{}
	for _, f := range r.Findings {
		out[f.Rule] = append(out[f.Rule], f.Waived != nil)
	}
	for _, e := range r.Errors {
		if e.Line > 0 {
			stderr += fmt.Sprintf("%s:%d: %s\n", e.Path, e.Line, e.Message)
		} else {
			stderr += fmt.Sprintf("%s: %s\n", e.Path, e.Message)
		}
	}
	return out, code, stderr
}

var repoRootDir, _ = filepath.Abs("../..")

// A pull request cannot waive what it brings: an annotation on its own Stage
// (and Application) leaves a contradiction that involves another project's
// Stages; "*" in an annotation is refused; --no-waivers ignores the
// annotations and the .flipflop.yaml it brings, and --waivers FILE from a
// trusted path is still honoured.
func TestPullRequestCannotWaiveOthersFindings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	write("pr.yaml", intruder("shared-branch-contradiction, shared-write-branch: trust me"))
	got, code, _ := waiverCheck(t, dir)
	if w := got["shared-branch-contradiction"]; len(w) != 1 || w[0] || code != ExitFindings {
		t.Errorf("the intruder's own annotation waived the contradiction it joined: %v (exit %d)", got, code)
	}

	write("pr.yaml", intruder("*: trust me"))
	got, code, _ = waiverCheck(t, dir)
	if w := got["shared-branch-contradiction"]; len(w) != 1 || w[0] || len(got["invalid-waiver"]) != 2 || code != ExitFindings {
		t.Errorf(`"*" in an annotation: %v (exit %d); want the contradiction and two invalid-waiver errors`, got, code)
	}

	// The pull request also brings a .flipflop.yaml waiving everything.
	write("pr.yaml", intruder("unknown-application: a typo"))
	write(".flipflop.yaml", "waivers:\n- rule: \"*\"\n  resources: [\"*/*/*\"]\n  reason: trust me\n")
	got, _, _ = waiverCheck(t, dir)
	if w := got["shared-branch-contradiction"]; len(w) != 1 || !w[0] {
		t.Errorf("without --no-waivers the working directory's .flipflop.yaml is honoured (documented): %v", got)
	}
	got, code, _ = waiverCheck(t, dir, "--no-waivers")
	if w := got["shared-branch-contradiction"]; len(w) != 1 || w[0] || code != ExitFindings {
		t.Errorf("--no-waivers: %v (exit %d)", got, code)
	}
	trusted := filepath.Join(t.TempDir(), "trusted.yaml")
	os.WriteFile(trusted, []byte("waivers:\n- rule: shared-write-branch\n  resources: [\"Stage/acme/*\"]\n  reason: monorepo, agreed with the platform team\n"), 0o644)
	got, code, _ = waiverCheck(t, dir, "--no-waivers", "--waivers", trusted)
	if sc, sw := got["shared-branch-contradiction"], got["shared-write-branch"]; len(sc) != 1 || sc[0] || len(sw) != 1 || !sw[0] || code != ExitFindings {
		t.Errorf("--no-waivers --waivers trusted.yaml: %v (exit %d)", got, code)
	}
}

// The waivers file is read like every input: empty or comments only is an
// empty list, a link to /dev/zero or a FIFO is refused without reading it, and
// the error names the file.
func TestWaiversFileLimits(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pr.yaml"), []byte("# nothing\n"), 0o644)
	for _, content := range []string{"", "# waivers come later\n\n", "waivers:\n", "---\n# c\n"} {
		os.WriteFile(filepath.Join(dir, ".flipflop.yaml"), []byte(content), 0o644)
		got, code, stderr := waiverCheck(t, dir)
		if code != ExitFindings || len(got["shared-branch-contradiction"]) != 1 {
			t.Errorf(".flipflop.yaml %q: exit %d, %v\n%s", content, code, got, stderr)
		}
	}
	os.Remove(filepath.Join(dir, ".flipflop.yaml"))
	if err := os.Symlink("/dev/zero", filepath.Join(dir, ".flipflop.yaml")); err != nil {
		t.Skip(err)
	}
	_, code, stderr := waiverCheck(t, dir)
	if code != ExitIncomplete || !strings.Contains(stderr, ".flipflop.yaml: a symbolic link leading outside the working directory: not read") {
		t.Errorf("/dev/zero: exit %d\n%s", code, stderr)
	}
	// Followed, the link is still not opened.
	if _, code, stderr = waiverCheck(t, dir, "--follow-symlinks"); code != ExitIncomplete || !strings.Contains(stderr, ".flipflop.yaml: not a regular file (device)") {
		t.Errorf("/dev/zero followed: exit %d\n%s", code, stderr)
	}
	os.Remove(filepath.Join(dir, ".flipflop.yaml"))
	if err := exec.Command("mkfifo", filepath.Join(dir, ".flipflop.yaml")).Run(); err != nil {
		t.Skip("mkfifo:", err)
	}
	_, code, stderr = waiverCheck(t, dir)
	if code != ExitIncomplete || !strings.Contains(stderr, ".flipflop.yaml: not a regular file (named pipe)") {
		t.Errorf("FIFO: exit %d\n%s", code, stderr)
	}
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, []byte("waivers: []\n"+strings.Repeat("# padding\n", 200)), 0o644)
	_, code, stderr = waiverCheck(t, dir, "--waivers", big, "--max-file-size", "1000")
	if code != ExitIncomplete || !strings.Contains(stderr, "file is too large") {
		t.Errorf("over --max-file-size: exit %d\n%s", code, stderr)
	}
}

// The settings file and the ignore files a checkout brings are confined to it
// as the files of a directory walk are: a .flipflop.yaml (or .flipflopignore)
// committed as a symbolic link out of the working directory is refused
// unread, and the error names the file without echoing a byte of what it
// points to; a link inside is read, and --follow-symlinks reads the outside
// .flipflop.yaml as it reads outside manifests. --waivers FILE names a file
// explicitly and is read wherever it is.
func TestSettingsFileLinkOutOfCheckout(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "credentials.yaml")
	os.WriteFile(secret, []byte("aws_secret_access_key: SECRETVALUE123\nwaivers: []\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "patterns"), []byte("SECRETPATTERN[\n"), 0o644)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pr.yaml"), []byte("# nothing\n"), 0o644)
	if err := os.Symlink(secret, filepath.Join(dir, ".flipflop.yaml")); err != nil {
		t.Skip(err)
	}
	got, code, stderr := waiverCheck(t, dir)
	if code != ExitIncomplete || !strings.Contains(stderr, ".flipflop.yaml: a symbolic link leading outside the working directory: not read (use --follow-symlinks to read it)") {
		t.Errorf("link out: exit %d, want 2 and the file named:\n%s", code, stderr)
	}
	// The findings of the other inputs are still reported, none waived.
	if strings.Contains(stderr, "SECRET") || strings.Contains(stderr, "aws_secret") || len(got["shared-branch-contradiction"]) != 1 || got["shared-branch-contradiction"][0] {
		t.Errorf("the linked file was read: %v\n%s", got, stderr)
	}
	// --follow-symlinks reads it: then its unknown key is reported, as for
	// any settings file.
	if _, code, stderr := waiverCheck(t, dir, "--follow-symlinks"); code != ExitIncomplete || !strings.Contains(stderr, "aws_secret_access_key") {
		t.Errorf("--follow-symlinks: exit %d\n%s", code, stderr)
	}
	// A link inside the working directory is read.
	os.Remove(filepath.Join(dir, ".flipflop.yaml"))
	os.MkdirAll(filepath.Join(dir, "config"), 0o755)
	os.WriteFile(filepath.Join(dir, "config", "flipflop.yaml"), []byte("waivers: []\n"), 0o644)
	os.Symlink(filepath.Join("config", "flipflop.yaml"), filepath.Join(dir, ".flipflop.yaml"))
	if got, code, stderr := waiverCheck(t, dir); code != ExitFindings || len(got["shared-branch-contradiction"]) != 1 {
		t.Errorf("link inside: exit %d, %v\n%s", code, got, stderr)
	}
	// A link through the parent directory back in is inside too; one through
	// a directory link out is not.
	os.Remove(filepath.Join(dir, ".flipflop.yaml"))
	os.Symlink(filepath.Join("..", filepath.Base(dir), "config", "flipflop.yaml"), filepath.Join(dir, ".flipflop.yaml"))
	if _, code, stderr := waiverCheck(t, dir); code != ExitFindings {
		t.Errorf("link back in: exit %d\n%s", code, stderr)
	}
	os.Remove(filepath.Join(dir, ".flipflop.yaml"))
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Symlink(filepath.Join("out", "credentials.yaml"), filepath.Join(dir, ".flipflop.yaml"))
	if _, code, stderr := waiverCheck(t, dir); code != ExitIncomplete || strings.Contains(stderr, "SECRET") {
		t.Errorf("link through a directory link: exit %d\n%s", code, stderr)
	}
	// --waivers names the file: read wherever it is.
	os.Remove(filepath.Join(dir, ".flipflop.yaml"))
	trusted := filepath.Join(outside, "trusted.yaml")
	os.WriteFile(trusted, []byte("waivers: []\n"), 0o644)
	os.Symlink(trusted, filepath.Join(dir, "trusted-link.yaml"))
	if _, code, stderr := waiverCheck(t, dir, "--waivers", "trusted-link.yaml"); code != ExitFindings {
		t.Errorf("--waivers through a link: exit %d\n%s", code, stderr)
	}
	// An ignore file linked out is refused unread.
	os.Symlink(filepath.Join(outside, "patterns"), filepath.Join(dir, ".flipflopignore"))
	example, _ := filepath.Abs(filepath.Join(repoRootDir, "examples/contradiction"))
	stdout, stderr, code := run(t, "", "check", example, "pr.yaml")
	if code != ExitIncomplete || !strings.Contains(stdout, ".flipflopignore") || strings.Contains(stdout+stderr, "SECRET") {
		t.Errorf(".flipflopignore linked out: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A waiver whose expiry is no date that exists (month 13), in .flipflop.yaml
// or in an annotation, is an input error (exit 2) naming the file, line and
// key; it waives nothing, and every finding is still reported.
func TestExpiryNotADate(t *testing.T) {
	for _, tc := range []struct{ name, settings, pr, want string }{
		{
			name:     "waivers file",
			settings: "waivers:\n- rule: shared-branch-contradiction\n  resources: [\"Stage/acme/*\"]\n  reason: accepted\n  expires: 2027-13-01\n",
			pr:       "# nothing\n",
			want:     `.flipflop.yaml:5: waiver 1: expires: "2027-13-01" is not a date (YYYY-MM-DD): there is no month 13; the waiver waives nothing`,
		},
		{
			name: "annotation",
			pr:   strings.Replace(readExample(t, "kargo.yaml"), "  name: dev\n", "  name: dev\n  annotations:\n    flipflop.dev/ignore: \"shared-branch-contradiction: accepted\"\n    flipflop.dev/ignore-expires: \"2027-13-01\"\n", 1),
			want: `pr.yaml:24: flipflop.dev/ignore-expires: "2027-13-01" is not a date (YYYY-MM-DD): there is no month 13; the waiver waives nothing`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"pr.yaml": tc.pr, "argocd.yaml": readExample(t, "argocd.yaml")}
			if tc.settings != "" {
				files[".flipflop.yaml"] = tc.settings
			}
			if tc.pr == "# nothing\n" {
				files["kargo.yaml"] = readExample(t, "kargo.yaml")
			}
			writeFiles(t, dir, files)
			t.Chdir(dir)
			stdout, stderr, code := run(t, "", "check", "-o", "json", ".")
			var r struct {
				waivedReport
				Errors []evaluator.LoadError
			}
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("exit %d: %v\n%s%s", code, err, stdout, stderr)
			}
			var errs []string
			for _, e := range r.Errors {
				errs = append(errs, e.Error())
			}
			if code != ExitIncomplete || !slices.Contains(errs, tc.want) {
				t.Errorf("exit %d, errors %q, want 2 and %q", code, errs, tc.want)
			}
			found := false
			for _, f := range r.Findings {
				if f.Rule == "shared-branch-contradiction" {
					found = true
					if f.Waived != nil {
						t.Errorf("waived by an expiry that is no date: %+v", f)
					}
				}
			}
			if !found {
				t.Errorf("the contradiction is not reported: %s", stdout)
			}
		})
	}
}

// A pull request cannot take another team's namespace-less directory into
// its own namespace with an Application of its own: the directory is then
// given two namespaces, and its Stages' project is unknown, so no
// authorization is judged from a guess (acme's deployment names a namespace
// flipflop cannot know, from a cluster generator; or -n names acme), the
// contradiction stays an error and says why the project is unknown, and the
// annotation on the pull request's own namespace-less Stage does not speak
// for acme's Stages. Before, the pull request's namespace won: acme's Stages
// became mallory's, their contradiction two missing-authorized-stage errors;
// and the annotation waived the contradiction.
func TestPullRequestCannotTakeAnotherTeamsDirectory(t *testing.T) {
	dir := t.TempDir()
	var kargo []string
	for _, line := range strings.Split(readExample(t, "kargo.yaml"), "\n") {
		if strings.TrimSpace(line) != "namespace: acme" {
			kargo = append(kargo, line)
		}
	}
	// The Applications authorize acme:qa only: acme/dev is not authorized.
	apps := strings.ReplaceAll(readExample(t, "argocd.yaml"), "acme:dev", "acme:qa")
	deploy := func(name, ns string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  source: {repoURL: "https://github.com/acme/platform", targetRevision: main, path: acme/kargo}
  destination: {server: "https://kubernetes.default.svc", namespace: ` + ns + `}
`
	}
	perCluster := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: acme-kargo, namespace: argocd}
spec:
  generators: [{clusters: {}}]
  template:
    metadata: {name: "{{name}}-acme-kargo"}
    spec:
      source: {repoURL: "https://github.com/acme/platform", targetRevision: main, path: acme/kargo}
      destination: {server: "{{server}}", namespace: "{{metadata.labels.project}}"}
`
	writeFiles(t, dir, map[string]string{
		"acme/kargo/stages.yaml": strings.Join(kargo, "\n"),
		"acme/argocd.yaml":       apps,
		"acme/deploy.yaml":       perCluster,
		"pr/deploy.yaml":         deploy("mallory-kargo", "mallory"),
	})
	chdir(t, dir)
	check := func(args ...string) (map[string][]string, map[string][]bool) {
		t.Helper()
		out, stderr, code := run(t, "", append([]string{"check", "-o", "json"}, args...)...)
		if code != ExitFindings {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var r waivedReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		messages, waived := map[string][]string{}, map[string][]bool{}
		for _, f := range r.Findings {
			messages[f.Rule] = append(messages[f.Rule], f.Message)
			waived[f.Rule] = append(waived[f.Rule], f.Waived != nil)
		}
		return messages, waived
	}

	got, _ := check("--no-waivers", "acme", "pr")
	if len(got["missing-authorized-stage"]) != 0 || len(got["shared-branch-contradiction"]) != 1 {
		t.Fatalf("acme's directory deployed into an unknown namespace and into mallory: want the contradiction and no authorization error, got %v", got)
	}
	for _, want := range []string{"Stages /dev, /qa: their files name no namespace", "a namespace flipflop cannot know (an Application ApplicationSet argocd/acme-kargo generates)", "mallory (Application argocd/mallory-kargo)"} {
		if !strings.Contains(got["shared-branch-contradiction"][0], want) {
			t.Errorf("the contradiction does not say %q: %s", want, got["shared-branch-contradiction"][0])
		}
	}

	// -n acme alone places them in acme (acme/dev is not authorized); with
	// the pull request's Application, -n and the Application disagree.
	got, _ = check("--no-waivers", "-n", "acme", "acme/kargo", "acme/argocd.yaml")
	if m := got["missing-authorized-stage"]; len(m) != 1 || !strings.Contains(m[0], "Stage acme/dev") {
		t.Errorf("-n acme: want acme/dev unauthorized, got %v", got)
	}
	got, _ = check("--no-waivers", "-n", "acme", "acme/kargo", "acme/argocd.yaml", "pr")
	if len(got["missing-authorized-stage"]) != 0 || len(got["shared-branch-contradiction"]) != 1 || !strings.Contains(got["shared-branch-contradiction"][0], "acme (-n), mallory (Application argocd/mallory-kargo)") {
		t.Errorf("-n acme and the pull request's Application into mallory: want the contradiction, saying so, and no authorization error; got %v", got)
	}

	// The pull request's own Stage, without a namespace and deployed by
	// nothing, joins the contradiction and waives it by annotation: it
	// speaks for its own file only.
	writeFiles(t, dir, map[string]string{"pr/loose/stage.yaml": strings.ReplaceAll(
		intruder("shared-branch-contradiction, shared-write-branch: ours"), "  namespace: mallory\n", "")})
	_, waived := check("acme", "pr")
	if w := waived["shared-branch-contradiction"]; len(w) != 1 || w[0] {
		t.Errorf("the pull request's annotation waived the contradiction of acme's Stages of unknown project: %v", waived)
	}
	if w := waived["shared-write-branch"]; len(w) != 1 || w[0] {
		t.Errorf("the pull request's annotation waived the shared write branch of acme's Stages of unknown project: %v", waived)
	}
}
