package schemagen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing/fstest"

	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// kindFiles are the CRDs of the kinds the model reads: each project's module
// as internal/upstream pins it, and the file in it.
var kindFiles = []struct{ module, version, project, file string }{
	{upstream.ArgoCDModule, upstream.ArgoCDVersion, "Argo CD", "manifests/crds/application-crd.yaml"},
	{upstream.ArgoCDModule, upstream.ArgoCDVersion, "Argo CD", "manifests/crds/applicationset-crd.yaml"},
	{upstream.KargoModule, upstream.KargoVersion, "Kargo", "charts/kargo/resources/crds/kargo.akuity.io_stages.yaml"},
	{upstream.KargoModule, upstream.KargoVersion, "Kargo", "charts/kargo/resources/crds/kargo.akuity.io_promotiontasks.yaml"},
	{upstream.KargoModule, upstream.KargoVersion, "Kargo", "charts/kargo/resources/crds/kargo.akuity.io_clusterpromotiontasks.yaml"},
	{upstream.KargoModule, upstream.KargoVersion, "Kargo", "charts/kargo/resources/crds/kargo.akuity.io_warehouses.yaml"},
}

// Kinds converts the CRD of every kind the model reads, from the modules
// internal/upstream pins.
func Kinds() ([]Kind, error) {
	var out []Kind
	for _, f := range kindFiles {
		dir, err := upstream.Dir(f.module, f.version)
		if err != nil {
			return nil, err
		}
		kind, s, err := FromCRD(filepath.Join(dir, filepath.FromSlash(f.file)), "v1alpha1")
		if err != nil {
			return nil, err
		}
		out = append(out, Kind{
			Kind:    kind,
			Version: fmt.Sprintf("%s %s", f.project, f.version),
			Source:  fmt.Sprintf("%s@%s (Go module), %s", f.module, f.version, f.file),
			Schema:  s,
		})
	}
	return out, nil
}

// ReleaseOf reads the step schemas of Kargo release v: the pinned one from
// its module, any other from the Kargo repository gitDir at its tag.
func ReleaseOf(gitDir, v string) (Release, error) {
	if v != upstream.KargoVersion {
		steps, commit, err := FromGit(gitDir, v)
		return Release{Version: v, Source: fmt.Sprintf("github.com/akuity/kargo tag %s (commit %s), %s", v, commit, SchemaDirOf(v)), Steps: steps}, err
	}
	dir, err := upstream.Dir(upstream.KargoModule, v)
	if err != nil {
		return Release{}, err
	}
	steps, err := Steps(os.DirFS(filepath.Join(dir, SchemaDirOf(v))))
	if err != nil {
		err = fmt.Errorf("%s: %w", filepath.Join(dir, SchemaDirOf(v)), err)
	}
	return Release{Version: v, Source: fmt.Sprintf("%s@%s (Go module), %s", upstream.KargoModule, v, SchemaDirOf(v)), Steps: steps}, err
}

// Generate renders the modules at KindsPath and Path (by path) from the
// pinned modules and, for the older Kargo releases, the Kargo repository
// gitDir.
func Generate(gitDir string) (map[string][]byte, error) {
	kinds, err := Kinds()
	if err != nil {
		return nil, err
	}
	releases := make([]Release, len(Releases))
	for i, v := range Releases {
		if releases[i], err = ReleaseOf(gitDir, v); err != nil {
			return nil, err
		}
	}
	return Rego(kinds, releases)
}

// FromGit reads the step config schemas of Kargo release version from a Git
// repository of Kargo (gitDir, a clone or a bare mirror) at the release's tag,
// and returns them bundled (Steps) with the commit the tag names. Only the
// schema directory's JSON files are read (into memory).
func FromGit(gitDir, version string) (map[string]Schema, string, error) {
	commit, err := git(gitDir, "rev-parse", "--verify", version+"^{commit}")
	if err != nil {
		return nil, "", err
	}
	commit = strings.TrimSpace(commit)
	list, err := git(gitDir, "ls-tree", "--name-only", commit, SchemaDirOf(version)+"/")
	if err != nil {
		return nil, "", err
	}
	files := fstest.MapFS{}
	for _, f := range strings.Fields(list) {
		if path.Ext(f) != ".json" {
			continue
		}
		body, err := git(gitDir, "show", commit+":"+f)
		if err != nil {
			return nil, "", err
		}
		files[path.Base(f)] = &fstest.MapFile{Data: []byte(body)}
	}
	steps, err := Steps(files)
	if err != nil {
		return nil, "", fmt.Errorf("kargo %s: %w", version, err)
	}
	return steps, commit, nil
}

func git(gitDir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// DefaultGitDir is the Kargo repository the generator and the drift test read
// the older releases from: $FLIPFLOP_KARGO_GIT, else a mirror beside the
// repository (../.mirror/akuity+kargo/repo, relative to its root).
func DefaultGitDir() string {
	if d := os.Getenv("FLIPFLOP_KARGO_GIT"); d != "" {
		return d
	}
	return filepath.Join("..", ".mirror", "akuity+kargo", "repo")
}
