package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// prEstate writes examples/contradiction (acme's two Stages and two
// Applications, a shared-branch contradiction) under acme/ in a new
// directory, with the files a pull request adds, and returns the directory.
func prEstate(t *testing.T, acmeKustomization bool, added map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{"kargo.yaml", "argocd.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", "contradiction", name))
		if err != nil {
			t.Fatal(err)
		}
		files["acme/"+name] = string(data)
	}
	if acmeKustomization {
		files["acme/kustomization.yaml"] = "resources:\n- kargo.yaml\n- argocd.yaml\n"
	}
	for k, v := range added {
		files[k] = v
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Issue 39 items 1 and 2: one small file in a pull request must not take
// another team's manifests out of the check. Argo CD reads exactly what an
// Application's path points at, so a chart or kustomization added above
// acme/ changes nothing about acme's contradiction; an overlay that adopts
// acme's kustomization as a base, patches it and annotates it leaves acme's
// own build counted, unwaived. The run exits 1 with the strict flags and
// without them, and every CI format names what the run left out.
func TestPullRequestCannotTakeOtherTeamsOut(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	const waiveAll = "  flipflop.dev/ignore: \"shared-branch-contradiction,foreign-branch-writer: not ours\"\n"
	for _, tc := range []struct {
		name  string
		kust  bool
		added map[string]string
		// notChecked is a file the run must name as left out.
		notChecked string
	}{{
		name:       "chart at the root",
		added:      map[string]string{"Chart.yaml": "apiVersion: v2\nname: x\nversion: 0.1.0\n", "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "stray.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n"},
		notChecked: "stray.yaml",
	}, {
		name:       "kustomization at the root listing one file",
		added:      map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n", "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "stray.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n"},
		notChecked: "stray.yaml",
	}, {
		name: "kustomization at the root adopting acme's files with a patch",
		added: map[string]string{"kustomization.yaml": "resources:\n- acme/kargo.yaml\n- acme/argocd.yaml\ncommonAnnotations:\n" + waiveAll +
			"patches:\n- target: {kind: Stage}\n  patch: |\n    - op: remove\n      path: /spec/promotionTemplate/spec/steps/4/config/apps/0/sources/0/desiredRevision\n"},
	}, {
		name: "overlay adopting acme's base into its own namespace, annotated",
		kust: true,
		added: map[string]string{"evil/kustomization.yaml": "resources:\n- ../acme\nnamespace: evil\ncommonAnnotations:\n" + waiveAll,
			"evil/stray.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n"},
		notChecked: "evil/stray.yaml",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := prEstate(t, tc.kust, tc.added)
			for _, strict := range [][]string{nil, {"--no-waivers", "--no-ignore-file"}} {
				r, code := checkJSON(t, bin, append(strict, dir)...)
				if code != 1 {
					t.Errorf("%v: exit %d, want 1", strict, code)
				}
				n := 0
				for _, f := range r.Findings {
					if f.Rule != "shared-branch-contradiction" {
						continue
					}
					n++
					for _, res := range f.Resources {
						if res.Kind == "Stage" && res.Namespace != "acme" {
							t.Errorf("%v: the contradiction names Stage %s/%s", strict, res.Namespace, res.Name)
						}
					}
				}
				if n != 1 {
					t.Errorf("%v: %d shared-branch-contradiction findings, want acme's one: %+v", strict, n, r.Findings)
				}
			}
			if tc.notChecked == "" {
				return
			}
			want := filepath.ToSlash(filepath.Join(dir, tc.notChecked))
			r, _ := checkJSON(t, bin, dir)
			var listed []string
			for _, root := range r.Rendered {
				listed = append(listed, root.NotListed...)
			}
			if !slices.Contains(listed, want) {
				t.Errorf("json: notListed %v, want %s", listed, want)
			}
			for _, format := range []string{"github", "gitlab", "markdown", "sarif", "junit", "text"} {
				out, _, _ := runCmd(t, "..", bin, "check", "-o", format, dir)
				if !strings.Contains(out, tc.notChecked) || !strings.Contains(strings.ToLower(out), "not checked") {
					t.Errorf("-o %s does not say that %s was not checked:\n%s", format, tc.notChecked, out)
				}
			}
		})
	}
}
