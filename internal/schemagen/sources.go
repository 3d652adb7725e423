package schemagen

import (
	"fmt"
	"os"
	"path/filepath"

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
	if v == upstream.KargoVersion {
		dir, err := upstream.Dir(upstream.KargoModule, upstream.KargoVersion)
		if err != nil {
			return Release{}, err
		}
		schemas := filepath.Join(dir, SchemaDirOf(v))
		steps, err := Steps(os.DirFS(schemas))
		if err != nil {
			return Release{}, fmt.Errorf("%s: %w", schemas, err)
		}
		return Release{Version: v, Source: ModuleSource(v), Steps: steps}, nil
	}
	steps, commit, err := FromGit(gitDir, v)
	if err != nil {
		return Release{}, err
	}
	return Release{Version: v, Source: GitSource(v, commit), Steps: steps}, nil
}

// Generate renders the modules at KindsPath and Path (by path) from the
// pinned modules and, for the older Kargo releases, the Kargo repository
// gitDir.
func Generate(gitDir string) (map[string][]byte, error) {
	kinds, err := Kinds()
	if err != nil {
		return nil, err
	}
	var releases []Release
	for _, v := range Releases {
		r, err := ReleaseOf(gitDir, v)
		if err != nil {
			return nil, err
		}
		releases = append(releases, r)
	}
	return Rego(kinds, releases)
}
