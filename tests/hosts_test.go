package tests

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// host is one policy host binary: a tool of hack/hosts/matrix at a version.
type host struct {
	Tool, Version, Path string
	// OPA is the OPA version the matrix says the binary carries ("" when the
	// binary is not a matrix entry, e.g. OPA_BIN pointing elsewhere).
	OPA string
}

func (h host) String() string { return h.Tool + "@" + h.Version }

// matrixEntry is one line of hack/hosts/matrix.
type matrixEntry struct {
	Tool, Version, Module, Package string
	Default                        bool
	OPA, Why                       string
}

// readMatrix reads hack/hosts/matrix.
func readMatrix(t *testing.T) []matrixEntry {
	t.Helper()
	f, err := os.Open("../hack/hosts/matrix")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []matrixEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) < 8 {
			t.Fatalf("hack/hosts/matrix: short line %q", line)
		}
		out = append(out, matrixEntry{
			Tool: fs[0], Version: fs[1], Module: fs[2], Package: fs[3],
			Default: fs[4] == "yes", OPA: fs[5], Why: strings.Join(fs[7:], " "),
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// hostsOf returns the binaries of one tool to test. `make compat` passes every
// matrix host it built in FLIPFLOP_HOSTS ("tool@version path" lines); otherwise
// (make test) it is the one binary of OPA_BIN, CONFTEST_BIN or GATOR_BIN, which
// make points at the matrix's default version.
func hostsOf(t *testing.T, name string) []host {
	t.Helper()
	opa := map[string]string{}
	def := ""
	for _, e := range readMatrix(t) {
		if e.Tool == name {
			opa[e.Version] = e.OPA
			if e.Default {
				def = e.Version
			}
		}
	}
	if list := os.Getenv("FLIPFLOP_HOSTS"); list != "" {
		var hs []host
		for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
			fs := strings.Fields(line)
			if len(fs) != 2 {
				t.Fatalf("FLIPFLOP_HOSTS: bad line %q", line)
			}
			tl, version, _ := strings.Cut(fs[0], "@")
			if tl == name {
				hs = append(hs, host{Tool: name, Version: version, Path: fs[1], OPA: opa[version]})
			}
		}
		if len(hs) == 0 {
			t.Fatalf("FLIPFLOP_HOSTS names no %s", name)
		}
		return hs
	}
	env := strings.ToUpper(name) + "_BIN"
	p := tool(t, env)
	h := host{Tool: name, Version: "default", Path: p}
	// The default binaries are symlinks into the host cache: .../<tool>@<version>/<tool>.
	if target, err := filepath.EvalSymlinks(p); err == nil {
		if tl, version, ok := strings.Cut(filepath.Base(filepath.Dir(target)), "@"); ok && tl == name && version == def {
			h.Version, h.OPA = version, opa[version]
		}
	}
	return []host{h}
}

// hostVersion runs a host's version command and returns the tool's version and
// the OPA version it reports.
func hostVersion(t *testing.T, h host) (string, string) {
	t.Helper()
	var args []string
	switch h.Tool {
	case "opa":
		args = []string{"version"}
	default:
		args = []string{"--version"}
	}
	out, stderr, code := runCmd(t, ".", h.Path, args...)
	if code != 0 {
		t.Fatalf("%s %v: exit %d: %s", h, args, code, stderr)
	}
	find := func(re string) string {
		if m := regexp.MustCompile(re).FindStringSubmatch(out); m != nil {
			return strings.TrimPrefix(m[1], "v")
		}
		return ""
	}
	switch h.Tool {
	case "opa":
		v := find(`(?m)^Version: (\S+)`)
		return v, v
	case "conftest":
		return find(`(?m)^Conftest: (\S+)`), find(`(?m)^OPA: (\S+)`)
	default: // gator: "gator version v3.23.1 (Feature State: beta), opa/v1.17.1, ..."
		return find(`gator version (v[^\s,]+)`), find(`opa/(v[0-9.]+)`)
	}
}

// Every host binary is what the matrix says it is: the tool at its version,
// carrying the OPA its release carries (not the one of another module).
func TestCompatHostVersions(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"opa", "conftest", "gator"} {
		for _, h := range hostsOf(t, tool) {
			t.Run(h.String(), func(t *testing.T) {
				if h.OPA == "" {
					t.Skipf("%s is not a matrix binary", h.Path)
				}
				version, opa := hostVersion(t, h)
				if version != strings.TrimPrefix(h.Version, "v") {
					t.Errorf("%s reports version %q", h, version)
				}
				if opa != strings.TrimPrefix(h.OPA, "v") {
					t.Errorf("%s reports OPA %q, the matrix says %s", h, opa, h.OPA)
				}
			})
		}
	}
}

// The README's host table lists exactly the versions of the matrix, so what it
// claims is what make compat tests.
func TestReadmeHostTable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "<!-- hosts:begin -->")
	end := strings.Index(readme, "<!-- hosts:end -->")
	if start < 0 || end < start {
		t.Fatal("README has no <!-- hosts:begin --> ... <!-- hosts:end --> table")
	}
	table := readme[start:end]
	tested := map[string][]string{}
	for _, e := range readMatrix(t) {
		tested[e.Tool] = append(tested[e.Tool], e.Version)
	}
	rows := map[string]string{"opa": "| OPA ", "conftest": "| conftest ", "gator": "| Gatekeeper |", "gatekeeper": "| Gatekeeper manager |"}
	for tool, prefix := range rows {
		var row string
		for _, line := range strings.Split(table, "\n") {
			if strings.HasPrefix(line, prefix) {
				row = line
			}
		}
		if row == "" {
			t.Errorf("host table has no row starting %q", prefix)
			continue
		}
		cells := strings.Split(row, "|")
		if len(cells) < 4 {
			t.Errorf("row %q: want host | versions tested | what runs there", row)
			continue
		}
		got := regexp.MustCompile(`\bv\d+\.\d+\.\d+`).FindAllString(cells[2], -1)
		want := tested[tool]
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("host table, %s: versions tested %v, hack/hosts/matrix %v", tool, got, want)
		}
	}
}
