// Command genstepschemas writes policies/lib/flipflop/step_schemas.rego from
// the step config schemas of each Kargo release stepschema.Releases lists: the
// newest from the Kargo module internal/upstream pins, the others from a Git
// repository of Kargo at their release tags (-kargo-git, default
// $FLIPFLOP_KARGO_GIT, else ../.mirror/akuity+kargo/repo beside the
// repository), since the module proxy serves no other Kargo version.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flipflop-dev/flipflop/internal/stepschema"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

func main() {
	gitDir := flag.String("kargo-git", stepschema.DefaultGitDir(), "a Git repository of Kargo (a clone or a bare mirror) with its release tags")
	flag.Parse()
	if err := run(*gitDir); err != nil {
		fmt.Fprintln(os.Stderr, "genstepschemas:", err)
		os.Exit(1)
	}
}

func run(gitDir string) error {
	var releases []stepschema.Release
	for _, v := range stepschema.Releases {
		if v == upstream.KargoVersion {
			dir, err := upstream.Dir(upstream.KargoModule, upstream.KargoVersion)
			if err != nil {
				return err
			}
			nodes, err := stepschema.Nodes(filepath.Join(dir, stepschema.SchemaDirOf(v)))
			if err != nil {
				return err
			}
			releases = append(releases, stepschema.Release{Version: v, Source: stepschema.ModuleSource(v), Nodes: nodes})
			continue
		}
		nodes, commit, err := stepschema.FromGit(gitDir, v)
		if err != nil {
			return err
		}
		releases = append(releases, stepschema.Release{Version: v, Source: stepschema.GitSource(v, commit), Nodes: nodes})
	}
	b, err := stepschema.Rego(releases)
	if err != nil {
		return err
	}
	return os.WriteFile(stepschema.Path, b, 0o644)
}
