package stepschema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/upstream"
	"github.com/open-policy-agent/opa/v1/ast"
)

// The table the policies check step configs with is generated from Kargo's
// schemas as released, and regenerated whenever they change: a stale file
// fails here (go run ./hack/genstepschemas rewrites it). The newest release
// is read from its Go module, always; the older ones from a Kargo repository
// at their tags, when one is at hand (DefaultGitDir): without it, their
// tables are checked only for being there.
func TestTableIsCurrent(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", Path))
	if err != nil {
		t.Fatal(err)
	}
	table := parseTable(t, committed)
	gitDir := filepath.Join("..", "..", DefaultGitDir())
	if filepath.IsAbs(DefaultGitDir()) {
		gitDir = DefaultGitDir()
	}
	_, gitErr := os.Stat(gitDir)
	var releases []Release
	for _, v := range Releases {
		var r Release
		switch {
		case v == upstream.KargoVersion:
			dir, err := upstream.Dir(upstream.KargoModule, upstream.KargoVersion)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := Nodes(filepath.Join(dir, SchemaDirOf(v)))
			if err != nil {
				t.Fatal(err)
			}
			r = Release{Version: v, Source: ModuleSource(v), Nodes: nodes}
		case gitErr == nil:
			nodes, commit, err := FromGit(gitDir, v)
			if err != nil {
				t.Fatal(err)
			}
			r = Release{Version: v, Source: GitSource(v, commit), Nodes: nodes}
		default:
			if _, ok := table.Nodes[Minor(v)]; !ok || table.Releases[Minor(v)].Version != v {
				t.Errorf("%s: no table for %s", Path, v)
			}
			continue
		}
		releases = append(releases, r)
		got, _ := json.Marshal(table.Nodes[Minor(v)])
		want, _ := json.Marshal(r.Nodes)
		if !bytes.Equal(got, want) || table.Releases[Minor(v)].Source != r.Source {
			t.Errorf("%s is stale for %s: run go run ./hack/genstepschemas", Path, v)
		}
	}
	if gitErr != nil {
		t.Logf("no Kargo repository at %s (FLIPFLOP_KARGO_GIT): the tables of the releases before %s are not regenerated", gitDir, upstream.KargoVersion)
	} else {
		want, err := Rego(releases)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(committed, want) {
			t.Errorf("%s is stale: run go run ./hack/genstepschemas", Path)
		}
	}
	if len(table.Releases) != len(Releases) {
		t.Errorf("%s has %d releases, want %d", Path, len(table.Releases), len(Releases))
	}
	// What the table is for: the fields real Stages get wrong.
	nodes := table.Nodes[Minor(upstream.KargoVersion)]
	push := nodes["git-push"]
	if len(push) == 0 || !slices.Equal(push[0].Required, []string{"path"}) || !slices.Contains(push[0].Allowed, "targetBranch") {
		t.Errorf("git-push: %+v", push)
	}
	commit := nodes["git-commit"]
	if len(commit) == 0 || slices.Contains(commit[0].Allowed, "messageFromSteps") || !slices.Contains(commit[0].Required, "message") {
		t.Errorf("git-commit: %+v", commit)
	}
	if old := table.Nodes["1.4"]["git-commit"]; len(old) == 0 || !slices.Contains(old[0].Allowed, "messageFromSteps") {
		t.Errorf("git-commit at v1.4 (messageFromSteps until v1.5): %+v", old)
	}
	clone := nodes["git-clone"]
	if !slices.ContainsFunc(clone, func(n Node) bool {
		return slices.Equal(n.Path, []string{"checkout", "[]"}) && !slices.Contains(n.Allowed, "fromFreight")
	}) {
		t.Errorf("git-clone: %+v", clone)
	}
}

type table struct {
	Releases map[string]struct{ Version, Source string }
	Nodes    map[string]map[string][]Node
}

// parseTable reads the generated module's two values back.
func parseTable(t *testing.T, src []byte) table {
	t.Helper()
	m, err := ast.ParseModuleWithOpts(Path, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	var tb table
	for _, r := range m.Rules {
		v, err := ast.JSON(r.Head.Value.Value)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		switch r.Head.Name.String() {
		case "releases":
			err = json.Unmarshal(b, &tb.Releases)
		case "nodes":
			err = json.Unmarshal(b, &tb.Nodes)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

// $ref is followed within a file and across files, and only closed or
// requiring objects are kept.
func TestNodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("common.json", `{"definitions": {"sel": {"type": "object", "additionalProperties": false, "properties": {"a": {}, "b": {}}}}}`)
	write("x-config.json", `{"type": "object", "additionalProperties": false, "required": ["items"],
		"definitions": {"item": {"type": "object", "required": ["k"], "properties": {"k": {}, "v": {}}}},
		"properties": {"items": {"type": "array", "items": {"$ref": "#/definitions/item"}}, "sel": {"$ref": "common.json#/definitions/sel"}, "free": {"type": "object"}}}`)
	write("open-config.json", `{"type": "object", "properties": {"a": {}}}`)
	nodes, err := Nodes(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := nodes["x"]
	if len(got) != 3 || !slices.Equal(got[0].Allowed, []string{"free", "items", "sel"}) || !slices.Equal(got[1].Path, []string{"items", "[]"}) ||
		got[1].Allowed != nil || !slices.Equal(got[1].Required, []string{"k"}) || !slices.Equal(got[2].Allowed, []string{"a", "b"}) {
		t.Errorf("x: %+v", got)
	}
	if _, ok := nodes["open"]; ok {
		t.Errorf("an open object without required keys is no node: %+v", nodes["open"])
	}
}
