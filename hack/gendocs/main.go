// Command gendocs regenerates flipflop's generated documentation: from the
// rules' METADATA and samples, docs/rules/<id>.md, docs/rules/README.md and the
// generated regions of README.md (the rules index) and docs/usage.md (the
// explain example); from the command tree (internal/cli), the command
// reference docs/reference/flipflop*.md and the man pages docs/man/*.1
// (internal/clidoc). With -check it changes nothing and exits 1 when the
// committed files drift.
//
//	go run ./hack/gendocs [-root DIR] [-check]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/flipflop-dev/flipflop/internal/clidoc"
	"github.com/flipflop-dev/flipflop/internal/docs"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	check := flag.Bool("check", false, "report drift instead of writing")
	flag.Parse()
	ctx := context.Background()
	if *check {
		problems, err := docs.Check(ctx, *root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(2)
		}
		commands, err := clidoc.Check(*root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(2)
		}
		problems = append(problems, commands...)
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p)
		}
		if len(problems) > 0 {
			fmt.Fprintf(os.Stderr, "the generated docs are stale: run '%s' and commit\n", docs.RegenerateCommand)
			os.Exit(1)
		}
		fmt.Println("docs up to date")
		return
	}
	if err := docs.Write(ctx, *root); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(2)
	}
	if err := clidoc.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(2)
	}
}
