// Command genschemas writes policies/lib/flipflop/schemas.rego (internal/schemagen):
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

	"github.com/flipflop-dev/flipflop/internal/schemagen"
)

func main() {
	gitDir := flag.String("kargo-git", schemagen.DefaultGitDir(), "a Git repository of Kargo (a clone or a bare mirror) with its release tags")
	flag.Parse()
	b, err := schemagen.Generate(*gitDir)
	if err == nil {
		err = os.WriteFile(schemagen.Path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genschemas:", err)
		os.Exit(1)
	}
}
