package tests

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// actionYAML is the part of action.yml the tests read.
type actionYAML struct {
	Inputs  map[string]map[string]any `json:"inputs"`
	Outputs map[string]map[string]any `json:"outputs"`
	Runs    struct {
		Using string `json:"using"`
		Steps []struct {
			ID   string            `json:"id"`
			Run  string            `json:"run"`
			Uses string            `json:"uses"`
			If   string            `json:"if"`
			Env  map[string]string `json:"env"`
			With map[string]string `json:"with"`
		} `json:"steps"`
	} `json:"runs"`
}

// action.yml is consistent: every input a step reads is declared, every script
// a step runs exists, and the SARIF upload runs even when the check failed,
// before the step that fails the job.
func TestActionDefinition(t *testing.T) {
	raw, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionYAML
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q", a.Runs.Using)
	}
	for _, m := range regexp.MustCompile(`inputs\.([\w-]+)`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("action.yml reads inputs.%s, which it does not declare", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`steps\.(\w+)\.outputs`).FindAllStringSubmatch(string(raw), -1) {
		if !slices.ContainsFunc(a.Runs.Steps, func(s struct {
			ID   string            `json:"id"`
			Run  string            `json:"run"`
			Uses string            `json:"uses"`
			If   string            `json:"if"`
			Env  map[string]string `json:"env"`
			With map[string]string `json:"with"`
		}) bool {
			return s.ID == m[1]
		}) {
			t.Errorf("action.yml reads the outputs of step %s, which does not exist", m[1])
		}
	}
	upload, verdict := -1, -1
	for i, s := range a.Runs.Steps {
		for _, m := range regexp.MustCompile(`\$ACTION_PATH/(\S+\.sh)`).FindAllStringSubmatch(s.Run, -1) {
			if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
				t.Errorf("step %d runs %s: %v", i, m[1], err)
			}
		}
		if strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@") {
			upload = i
			if !strings.Contains(s.If, "always()") {
				t.Errorf("the SARIF upload does not run when the check fails: if %q", s.If)
			}
		}
		if strings.Contains(s.Run, `exit "$EXIT_CODE"`) {
			verdict = i
		}
	}
	if upload < 0 || verdict < upload {
		t.Errorf("the upload (step %d) must come before the verdict (step %d)", upload, verdict)
	}
}

// fakeRelease writes a release directory as GitHub serves one: the archive of
// this platform holding bin as flipflop, and checksums.txt.
func fakeRelease(t *testing.T, bin, version string) (dir, archive string) {
	t.Helper()
	dir = t.TempDir()
	archive = fmt.Sprintf("flipflop_%s_%s_%s.tar.gz", version, runtime.GOOS, runtime.GOARCH)
	if err := os.MkdirAll(filepath.Join(dir, version), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, version, archive))
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	add := func(name string, mode int64, content []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(content))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	license, _ := os.ReadFile("../LICENSE")
	add("LICENSE", 0o644, license)
	add("flipflop", 0o755, b)
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, version, archive))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(sum)
	checksums := fmt.Sprintf("%s  %s\n%s  flipflop_%s_other_os.tar.gz\n", hex.EncodeToString(h[:]), archive, strings.Repeat("0", 64), version)
	if err := os.WriteFile(filepath.Join(dir, version, "checksums.txt"), []byte(checksums), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, archive
}

// runScript runs one of the action's scripts with bash in dir, with env added
// to this process's environment.
func runScript(t *testing.T, dir, script string, env map[string]string) (string, string, int) {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "action", script))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", abs)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// install.sh installs a release archive only when its sha256 matches the
// release's checksums.txt, and puts it on the job's PATH.
func TestActionInstall(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the action's scripts run under bash on Linux and macOS runners")
	}
	for _, tool := range []string{"bash", "curl", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	bin := tool(t, "FLIPFLOP_BIN")
	const version = "v9.8.7"
	rel, archive := fakeRelease(t, bin, version)
	tmp := t.TempDir()
	env := func(dest string) map[string]string {
		return map[string]string{
			"FLIPFLOP_VERSION":      version,
			"FLIPFLOP_RELEASES_URL": "file://" + rel,
			"FLIPFLOP_INSTALL_DIR":  dest,
			"GITHUB_PATH":           filepath.Join(tmp, filepath.Base(dest)+".path"),
			"ACTION_PATH":           "",
		}
	}
	dest := filepath.Join(tmp, "ok")
	stdout, stderr, code := runScript(t, tmp, "install.sh", env(dest))
	if code != 0 || !strings.Contains(stdout, "flipflop ") {
		t.Fatalf("install: exit %d\n%s%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(tmp, "ok.path")); strings.TrimSpace(string(b)) != dest {
		t.Errorf("GITHUB_PATH holds %q, want %s", b, dest)
	}
	if out, _, code := runCmd(t, tmp, filepath.Join(dest, "flipflop"), "rules"); code != 0 || !strings.Contains(out, "shared-branch-contradiction") {
		t.Errorf("the installed binary does not run: exit %d", code)
	}

	// A tampered archive is refused and nothing is installed.
	sums := filepath.Join(rel, version, "checksums.txt")
	good, _ := os.ReadFile(sums)
	if err := os.WriteFile(sums, []byte(strings.Replace(string(good), archive, "x"+archive, 1)+strings.Repeat("1", 64)+"  "+archive+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dest = filepath.Join(tmp, "tampered")
	_, stderr, code = runScript(t, tmp, "install.sh", env(dest))
	if code == 0 || !strings.Contains(stderr, "checksum mismatch") {
		t.Errorf("a wrong checksum was accepted: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dest, "flipflop")); err == nil {
		t.Error("a binary was installed from an archive whose checksum did not match")
	}
	if _, err := os.Stat(filepath.Join(tmp, "tampered.path")); err == nil {
		t.Error("GITHUB_PATH was written for a refused archive")
	}
	// An archive checksums.txt does not list is refused too.
	if err := os.WriteFile(sums, []byte(strings.Replace(string(good), archive, "x"+archive, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runScript(t, tmp, "install.sh", env(filepath.Join(tmp, "unlisted"))); code == 0 || !strings.Contains(stderr, "does not list") {
		t.Errorf("an archive checksums.txt does not list was accepted: exit %d\n%s", code, stderr)
	}

	// Any other ref builds from the action's source.
	if _, err := exec.LookPath("go"); err == nil {
		e := env(filepath.Join(tmp, "source"))
		e["FLIPFLOP_VERSION"], e["ACTION_PATH"] = "main", must(filepath.Abs(".."))
		stdout, stderr, code := runScript(t, tmp, "install.sh", e)
		if code != 0 || !strings.Contains(stderr+stdout, "Building flipflop from the action's source (main)") {
			t.Errorf("build from source: exit %d\n%s%s", code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(tmp, "source", "flipflop")); err != nil {
			t.Error(err)
		}
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// check.sh annotates with -o github, writes SARIF, and reports check's exit
// code as an output while exiting 0 itself (the action's last step fails the
// job, after the upload).
func TestActionCheck(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the action's scripts run under bash on Linux and macOS runners")
	}
	bin := tool(t, "FLIPFLOP_BIN")
	pathDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(pathDir, "flipflop")); err != nil {
		t.Skip("symbolic links unsupported:", err)
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		name, paths, args, failOn, sarif string
		code                             int
		stdout                           string
		// summary is the action's input; the job summary must hold each of
		// inSummary (nil: no summary written).
		summary   string
		inSummary []string
	}{
		{name: "contradiction", paths: "examples/contradiction", sarif: "true", code: 1, stdout: "::error file=examples/contradiction/kargo.yaml,line=18,title=shared-branch-contradiction",
			inSummary: []string{"## flipflop: 1 error, 1 warning", "```mermaid\nflowchart LR\n", "**Why:** Stages acme/dev, acme/qa all pin", "```sh\nflipflop fix --way stage-branches -- examples/contradiction\n```"}},
		{name: "clean", paths: "examples/fix-stage-branches", sarif: "true", code: 0, stdout: "flipflop: 5 objects checked (1 more skipped: no rule reads their kind): 0 errors", summary: "true",
			inSummary: []string{"## flipflop: no error, 0 warnings", "No finding."}},
		{name: "several paths", paths: "examples/contradiction/argocd.yaml\n examples/contradiction/kargo.yaml", sarif: "false", code: 1, summary: "false"},
		{name: "args one per line", paths: "examples/contradiction", args: "--exclude=kargo.yaml\n\n  --default-branch=main  \n", sarif: "true", code: 0, stdout: "1 path excluded",
			inSummary: []string{"1 path excluded"}},
		{name: "fail-on never", paths: "examples/contradiction", failOn: "never", sarif: "false", code: 0,
			inSummary: []string{"flipflop fix --way stage-branches -- examples/contradiction"}},
		{name: "empty input", paths: empty, sarif: "true", code: 2, stdout: "no Kargo Stage and no Argo CD Application",
			inSummary: []string{"### Input errors", "no Kargo Stage and no Argo CD Application"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "output")
			sarifFile := filepath.Join(tmp, "flipflop.sarif")
			stepSummary := filepath.Join(tmp, "step_summary.md")
			stdout, stderr, code := runScript(t, "..", "check.sh", map[string]string{
				"PATH":                pathDir + string(os.PathListSeparator) + os.Getenv("PATH"),
				"GITHUB_OUTPUT":       out,
				"GITHUB_STEP_SUMMARY": stepSummary,
				"INPUT_PATHS":         tc.paths,
				"INPUT_ARGS":          tc.args,
				"INPUT_FAIL_ON":       tc.failOn,
				"INPUT_SARIF":         tc.sarif,
				"INPUT_SARIF_FILE":    sarifFile,
				"INPUT_SUMMARY":       tc.summary,
			})
			if code != 0 {
				t.Fatalf("check.sh exited %d (the verdict belongs to the last step):\n%s%s", code, stdout, stderr)
			}
			summary, err := os.ReadFile(stepSummary)
			switch {
			case tc.inSummary == nil && err == nil:
				t.Errorf("a job summary was written with summary %q:\n%s", tc.summary, summary)
			case tc.inSummary != nil && err != nil:
				t.Errorf("no job summary: %v", err)
			}
			for _, want := range tc.inSummary {
				if !strings.Contains(string(summary), want) {
					t.Errorf("the job summary lacks %q:\n%s", want, summary)
				}
			}
			if strings.Contains(stdout, "## flipflop") {
				t.Errorf("the Markdown went to the log:\n%s", stdout)
			}
			outputs, _ := os.ReadFile(out)
			if !strings.Contains(string(outputs), fmt.Sprintf("exit-code=%d\n", tc.code)) {
				t.Errorf("outputs %q, want exit-code=%d\n%s%s", outputs, tc.code, stdout, stderr)
			}
			if tc.stdout != "" && !strings.Contains(stdout, tc.stdout) {
				t.Errorf("the log lacks %q:\n%s", tc.stdout, stdout)
			}
			if tc.sarif != "true" {
				if strings.Contains(string(outputs), "sarif-file=") {
					t.Error("a SARIF file was reported although sarif is false")
				}
				return
			}
			if !strings.Contains(string(outputs), "sarif-file="+sarifFile+"\n") {
				t.Errorf("outputs %q lack the SARIF file", outputs)
			}
			var log struct {
				Runs []struct {
					Results     []any `json:"results"`
					Invocations []struct {
						ExecutionSuccessful bool `json:"executionSuccessful"`
					} `json:"invocations"`
				} `json:"runs"`
			}
			b, err := os.ReadFile(sarifFile)
			if err != nil || json.Unmarshal(b, &log) != nil || len(log.Runs) != 1 {
				t.Fatalf("no SARIF log: %v\n%s", err, b)
			}
			if got := len(log.Runs[0].Results) > 0; got != (tc.code == 1) {
				t.Errorf("SARIF results %d for exit code %d", len(log.Runs[0].Results), tc.code)
			}
			if tc.code == 2 && (len(log.Runs[0].Invocations) == 0 || log.Runs[0].Invocations[0].ExecutionSuccessful) {
				t.Error("the SARIF log of an empty input claims a successful run")
			}
		})
	}
}

// The checkout is the pull request's: check.sh writes the SARIF report under
// $RUNNER_TEMP by default, and never through a symbolic link the pull request
// committed (flipflop.sarif pointing at a script the runner runs later), nor
// reports a file flipflop did not write.
func TestActionSARIFNeverThroughALink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the action's scripts run under bash on Linux and macOS runners")
	}
	bin := tool(t, "FLIPFLOP_BIN")
	pathDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(pathDir, "flipflop")); err != nil {
		t.Skip("symbolic links unsupported:", err)
	}
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.sh")
	const original = "#!/bin/sh\necho hello\n"
	if err := os.WriteFile(victim, []byte(original), 0o755); err != nil {
		t.Fatal(err)
	}
	checkout := t.TempDir()
	for _, name := range []string{"kargo.yaml", "argocd.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "contradiction", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(checkout, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"flipflop.sarif": victim, "reports": outside} {
		if err := os.Symlink(target, filepath.Join(checkout, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(checkout, "planted.sarif"), []byte(`{"runs":[{"results":[]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, sarifFile, args string
		// inTemp: the report is written under RUNNER_TEMP; else none is.
		inTemp bool
		want   string
	}{
		{name: "default", inTemp: true},
		{name: "a link", sarifFile: "flipflop.sarif", want: "flipflop.sarif is a symbolic link"},
		{name: "a linked directory", sarifFile: "reports/flipflop.sarif", want: "reports is a symbolic link"},
		{name: "a planted file left by a failed run", sarifFile: "planted.sarif", args: "--no-such-flag", want: "no SARIF report was written (exit 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "output")
			stdout, stderr, code := runScript(t, checkout, "check.sh", map[string]string{
				"PATH":                pathDir + string(os.PathListSeparator) + os.Getenv("PATH"),
				"RUNNER_TEMP":         tmp,
				"GITHUB_OUTPUT":       out,
				"GITHUB_STEP_SUMMARY": "",
				"INPUT_PATHS":         ".",
				"INPUT_ARGS":          tc.args,
				"INPUT_SARIF":         "true",
				"INPUT_SARIF_FILE":    tc.sarifFile,
				"INPUT_SUMMARY":       "false",
			})
			if code != 0 {
				t.Fatalf("check.sh exited %d:\n%s%s", code, stdout, stderr)
			}
			if b, _ := os.ReadFile(victim); string(b) != original {
				t.Fatalf("the SARIF report was written through the link:\n%.200s", b)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Fatalf("files were written through the link: %v", entries)
			}
			outputs, _ := os.ReadFile(out)
			m := regexp.MustCompile(`(?m)^sarif-file=(.*)$`).FindSubmatch(outputs)
			if !tc.inTemp {
				if m != nil {
					t.Errorf("sarif-file=%s reported, want none", m[1])
				}
				if !strings.Contains(stdout, "::warning title=flipflop::") || !strings.Contains(stdout, tc.want) {
					t.Errorf("the log does not say why no SARIF was written (%q):\n%s%s", tc.want, stdout, stderr)
				}
				return
			}
			if m == nil || !strings.HasPrefix(string(m[1]), tmp+string(filepath.Separator)) {
				t.Fatalf("sarif-file not under RUNNER_TEMP %s: %q\n%s%s", tmp, outputs, stdout, stderr)
			}
			if b, err := os.ReadFile(string(m[1])); err != nil || !strings.Contains(string(b), `"shared-branch-contradiction"`) {
				t.Errorf("no SARIF report at %s: %v", m[1], err)
			}
		})
	}
}
