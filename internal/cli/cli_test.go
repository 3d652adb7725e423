package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commandPaths lists the command lines of every command of the tree but the
// root ("check", "completion bash", ...), hidden ones left out.
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, s := range c.Commands() {
			if s.Hidden {
				continue
			}
			p := append(slices.Clip(path), s.Name())
			paths = append(paths, p)
			walk(s, p)
		}
	}
	walk(Command(IO{}), nil)
	if len(paths) < 14 {
		t.Fatalf("the tree has %d commands: %v", len(paths), paths)
	}
	return paths
}

// Every command prints its help on standard output and exits 0, for
// COMMAND --help, COMMAND -h and help COMMAND alike.
func TestHelpOnStdout(t *testing.T) {
	for _, path := range commandPaths(t) {
		name := strings.Join(path, " ")
		want := "Usage: flipflop " + name
		var first string
		for i, args := range [][]string{append(slices.Clip(path), "--help"), append(slices.Clip(path), "-h"), append([]string{"help"}, path...)} {
			stdout, stderr, code := run(t, "", args...)
			if code != ExitOK || stderr != "" || !strings.HasPrefix(stdout, want) {
				t.Errorf("%q: exit %d, stderr %q, stdout:\n%s", args, code, stderr, stdout)
			}
			if i == 0 {
				first = stdout
			} else if stdout != first {
				t.Errorf("%q prints another help than %s --help", args, name)
			}
		}
	}
}

// A bare flipflop prints the top-level help on standard output and exits 0,
// as kubectl does; so do help and --help.
func TestBareFlipflop(t *testing.T) {
	stdout, stderr, code := run(t, "")
	if code != ExitOK || stderr != "" {
		t.Fatalf("flipflop: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"Usage:\n  flipflop COMMAND [flags]\n", "Exit codes:\n  0  ", "\n  check ", "\n  completion ", "\n  help ", "source <(flipflop completion bash)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the help lacks %q:\n%s", want, stdout)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		if out, _, code := run(t, "", args...); code != ExitOK || out != stdout {
			t.Errorf("%q: exit %d, or another help than a bare flipflop's:\n%s", args, code, out)
		}
	}
}

// A usage error exits 2 and points to the help of the command that failed.
func TestUsageErrorNamesCommandHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
		help string
	}{
		{[]string{"check", "--nope", "x"}, "unknown flag: --nope", "flipflop check --help"},
		{[]string{"check", "--max-file-size", "big", "x"}, `invalid argument "big" for "--max-file-size"`, "flipflop check --help"},
		{[]string{"check", "--out"}, "flag needs an argument: --out", "flipflop check --help"},
		{[]string{"check", "-o", "xml", "x"}, `unknown output format "xml"`, "flipflop check --help"},
		{[]string{"graph"}, "give at least one PATH", "flipflop graph --help"},
		{[]string{"fix", "--apply", "x"}, "--apply needs --way", "flipflop fix --help"},
		{[]string{"export", "conftest"}, "export needs a target", "flipflop export --help"},
		{[]string{"rules", "x"}, "rules takes no arguments", "flipflop rules --help"},
		{[]string{"version", "x"}, "version takes no arguments", "flipflop version --help"},
		{[]string{"completion", "bash", "x"}, `unknown command "x"`, "flipflop completion bash --help"},
		{[]string{"completion", "tcsh"}, `unknown shell "tcsh" (want bash, zsh, fish or powershell)`, "flipflop completion --help"},
		{[]string{"--nope"}, "unknown flag: --nope", "flipflop --help"},
		{[]string{"help", "frobnicate"}, `unknown help topic "frobnicate"`, "flipflop --help"},
	} {
		stdout, stderr, code := run(t, "", tc.args...)
		if code != ExitIncomplete || stdout != "" || !strings.HasPrefix(stderr, "flipflop: "+tc.msg) || !strings.HasSuffix(stderr, "\nRun '"+tc.help+"' for usage.\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s", tc.args, code, stdout, stderr)
		}
	}
}

// An unknown command, a misspelt rule or help topic is answered with the
// nearest names (internal/suggest), not with every name.
func TestSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the suggestion ending the message; "": none
	}{
		{[]string{"chek", "x"}, `; did you mean "check"?`},
		{[]string{"explian"}, `; did you mean "explain"?`},
		{[]string{"frobnicate"}, ""},
		{[]string{"explain", "shared-branch"}, `; did you mean "shared-branch-contradiction" or "shared-write-branch"?`},
		{[]string{"explain", "shared-branch-contradictoin"}, `; did you mean "shared-branch-contradiction"?`},
		{[]string{"explain", "zzz"}, ""},
		{[]string{"help", "grph"}, `; did you mean "graph"?`},
	} {
		_, stderr, code := run(t, "", tc.args...)
		msg, _, _ := strings.Cut(stderr, "\n")
		if code != ExitIncomplete || tc.want != "" && !strings.HasSuffix(msg, tc.want) || tc.want == "" && strings.Contains(msg, "did you mean") {
			t.Errorf("%q: exit %d, want the suggestion %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	// No suggestion: where to find the names instead.
	if _, stderr, _ := run(t, "", "explain", "zzz"); !strings.Contains(stderr, `"zzz" is neither a rule nor a file ('flipflop rules' lists them)`) {
		t.Errorf("explain zzz does not say where the rules are listed:\n%s", stderr)
	}
}

// The completion scripts for every shell, and the completions they ask
// flipflop for: rule ids, the values of enum flags, the export targets, file
// names for paths, nothing for flags that take a name.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		stdout, stderr, code := run(t, "", "completion", shell)
		if code != ExitOK || len(stdout) < 1000 || !strings.Contains(stdout, "flipflop") || !strings.Contains(stdout, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes\n%s", shell, code, len(stdout), stderr)
		}
	}
	for _, tc := range []struct {
		args      []string
		want      []string // completions (without their descriptions) that must be offered
		not       []string // that must not be
		directive string
	}{
		{[]string{"explain", ""}, []string{"shared-branch-contradiction", "duplicate-key"}, nil, ":0"},
		{[]string{"explain", "shared-b"}, []string{"shared-branch-contradiction"}, []string{"shared-application"}, ":0"},
		{[]string{"explain", "../../examples/"}, nil, []string{"shared-branch-contradiction"}, ":0"},
		{[]string{""}, []string{"check", "explain", "completion", "help"}, nil, ":4"},
		{[]string{"help", ""}, []string{"check", "fix"}, nil, ":4"},
		{[]string{"check", "-o", ""}, []string{"text", "json", "sarif", "junit", "markdown"}, nil, ":4"},
		{[]string{"check", "--fail-on", ""}, []string{"error", "warning", "info", "never"}, nil, ":4"},
		{[]string{"check", "--color", ""}, []string{"auto", "always", "never"}, nil, ":4"},
		{[]string{"check", "--read", ""}, []string{"auto", "plain"}, nil, ":4"},
		{[]string{"report", "--progress", ""}, []string{"auto", "always", "never"}, nil, ":4"},
		{[]string{"check", "--rule", "shared-b"}, []string{"shared-branch-contradiction"}, []string{"duplicate-key"}, ":4"},
		{[]string{"check", "--skip-rule", "duplicate-key,shared-b"}, []string{"duplicate-key,shared-branch-contradiction"}, nil, ":4"},
		{[]string{"check", "--severity", "shared-w"}, []string{"shared-write-branch="}, nil, ":6"},
		{[]string{"check", "--severity", "shared-write-branch=e"}, []string{"shared-write-branch=error"}, []string{"shared-write-branch=warning"}, ":4"},
		{[]string{"fix", "--way", ""}, []string{"stage-branches", "no-desired-revision", "update-target-revision"}, nil, ":4"},
		{[]string{"fix", "-o", ""}, []string{"diff", "yaml"}, []string{"json"}, ":4"},
		{[]string{"graph", "-o", ""}, []string{"mermaid", "dot", "svg"}, nil, ":4"},
		{[]string{"diagnose", "-o", ""}, []string{"text", "json"}, nil, ":4"},
		{[]string{"rules", "-o", ""}, []string{"text", "json"}, nil, ":4"},
		{[]string{"export", ""}, []string{"conftest", "gatekeeper", "bundle", "all"}, nil, ":4"},
		{[]string{"export", "conftest", ""}, nil, nil, ":0"},
		{[]string{"check", ""}, nil, nil, ":0"},
		{[]string{"check", "--default-branch", ""}, nil, nil, ":4"},
		{[]string{"check", "--values", ""}, []string{"yaml", "yml"}, nil, ":8"},
		{[]string{"check", "--repo-root", ""}, nil, nil, ":16"},
	} {
		stdout, stderr, code := run(t, "", append([]string{cobra.ShellCompRequestCmd}, tc.args...)...)
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		directive := lines[len(lines)-1]
		var got []string
		for _, l := range lines[:len(lines)-1] {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		if code != ExitOK || directive != tc.directive {
			t.Errorf("complete %q: exit %d, directive %s, want %s\n%s%s", tc.args, code, directive, tc.directive, stdout, stderr)
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("complete %q offers %q, not %q", tc.args, got, w)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("complete %q offers %q", tc.args, n)
			}
		}
	}
}

// --context completes with the contexts of the kubeconfig --kubeconfig names.
func TestCompleteContexts(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts:
  - {name: staging, context: {cluster: c, user: u}}
  - {name: prod, context: {cluster: c, user: u}}
  - {name: prod-eu, context: {cluster: c, user: u}}
current-context: staging
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "", cobra.ShellCompRequestCmd, "check", "--cluster", "--kubeconfig", kubeconfig, "--context", "pr")
	if code != ExitOK || stdout != "prod\nprod-eu\n:4\n" {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
}

// Every flag of the commands that read inputs is in a group, and the help
// prints the groups in order.
func TestFlagGroups(t *testing.T) {
	root := Command(IO{})
	ids := map[string]bool{}
	for _, g := range flagGroups {
		ids[g.id] = true
	}
	for _, name := range []string{"check", "diagnose", "explain", "graph", "fix", "report"} {
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if g := flagGroup(f); !ids[g] && f.Name != "help" {
				t.Errorf("%s --%s is in no group (%q)", name, f.Name, g)
			}
		})
	}
	stdout, _, _ := run(t, "", "fix", "--help")
	last := -1
	for _, title := range []string{"\nFix flags:\n", "\nInput flags:\n", "\nRule flags", "\nEstate flags", "\nRendering flags", "\nOutput flags:\n", "\nOther flags:\n  -h, --help"} {
		i := strings.Index(stdout, title)
		if i <= last {
			t.Errorf("fix --help: %q missing or out of order:\n%s", title, stdout)
		}
		last = i
	}
	if strings.Contains(stdout, "Cluster flags") {
		t.Errorf("fix --help has cluster flags:\n%s", stdout)
	}
	stdout, _, _ = run(t, "", "rules", "--help")
	if !strings.Contains(stdout, "\nFlags:\n  -h, --help") || strings.Contains(stdout, "Other flags") {
		t.Errorf("rules --help: its flags are not under Flags:\n%s", stdout)
	}
}

// As the kubectl plugin (kubectl-flipflop), every usage line and pointer to
// help says "kubectl flipflop".
func TestKubectlPluginName(t *testing.T) {
	saved := os.Args[0]
	os.Args[0] = "/usr/local/bin/kubectl-flipflop"
	t.Cleanup(func() { os.Args[0] = saved })
	stdout, _, code := run(t, "")
	if code != ExitOK || !strings.Contains(stdout, "Usage:\n  kubectl flipflop COMMAND [flags]\n") || !strings.Contains(stdout, "  kubectl flipflop check gitops/") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
	stdout, _, _ = run(t, "", "check", "--help")
	if !strings.HasPrefix(stdout, "Usage: kubectl flipflop check [flags] [PATH...]\n") {
		t.Errorf("check --help:\n%s", stdout)
	}
	_, stderr, _ := run(t, "", "check", "--nope")
	if !strings.HasSuffix(stderr, "Run 'kubectl flipflop check --help' for usage.\n") {
		t.Errorf("check --nope:\n%s", stderr)
	}
}

// failOn in .flipflop.yaml is the default of --fail-on for fix and report too
// (the configuration file is read before the flag is used).
func TestFailOnFromConfigurationFile(t *testing.T) {
	sample, err := os.ReadFile("../../policies/rules/duplicate_object/samples/fires/same-file-no-namespace/apps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"gitops/apps.yaml": string(sample)})
	chdir(t, dir)
	for _, args := range [][]string{{"fix", "gitops"}, {"report", "gitops"}, {"check", "gitops"}} {
		if _, stderr, code := run(t, "", args...); code != ExitFindings {
			t.Errorf("%q without a configuration file: exit %d\n%s", args, code, stderr)
		}
	}
	writeFiles(t, dir, map[string]string{".flipflop.yaml": "failOn: never\n"})
	for _, args := range [][]string{{"fix", "gitops"}, {"report", "gitops"}, {"check", "gitops"}} {
		if _, stderr, code := run(t, "", args...); code != ExitOK {
			t.Errorf("%q with failOn: never: exit %d\n%s", args, code, stderr)
		}
	}
}
