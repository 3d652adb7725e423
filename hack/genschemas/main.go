// Command genschemas writes policies/lib/flipflop/kind_schemas.rego and
// schemas.rego (internal/schemagen):
// the JSON schemas of the kinds the model reads, from the Kargo and Argo CD
// modules internal/upstream pins, and the step config schemas of each Kargo
// release schemagen.Releases lists: the newest from the Kargo module, the
// others from a Git repository of Kargo at their release tags (-kargo-git,
// default $FLIPFLOP_KARGO_GIT, else ../.mirror/akuity+kargo/repo beside the
// repository), since the module proxy serves no other Kargo version.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/flipflop-dev/flipflop/internal/safefile"
	"github.com/flipflop-dev/flipflop/internal/schemagen"
)

func main() {
	gitDir := flag.String("kargo-git", schemagen.DefaultGitDir(), "a Git repository of Kargo (a clone or a bare mirror) with its release tags")
	flag.Parse()
	files, err := schemagen.Generate(*gitDir)
	for _, p := range []string{schemagen.KindsPath, schemagen.Path} {
		if err == nil {
			err = safefile.Write(p, files[p], 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genschemas:", err)
		os.Exit(1)
	}
}
