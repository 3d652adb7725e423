// Command genschemas writes what internal/schemagen generates
// (policies/lib/flipflop/kind_schemas.rego and schemas.rego). The older Kargo
// releases' step schemas come from a Git repository of Kargo at their tags
// (-kargo-git, default $FLIPFLOP_KARGO_GIT, else ../.mirror/akuity+kargo/repo).
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
