// Command genstepschemas writes policies/lib/flipflop/step_schemas.rego from
// the step config schemas of the Kargo release internal/upstream pins.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flipflop-dev/flipflop/internal/stepschema"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genstepschemas:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := upstream.Dir(upstream.KargoModule, upstream.KargoVersion)
	if err != nil {
		return err
	}
	nodes, err := stepschema.Nodes(filepath.Join(dir, stepschema.SchemaDir))
	if err != nil {
		return err
	}
	b, err := stepschema.Rego(nodes, upstream.KargoModule, upstream.KargoVersion)
	if err != nil {
		return err
	}
	return os.WriteFile(stepschema.Path, b, 0o644)
}
