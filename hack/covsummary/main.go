// Command covsummary reads `opa test --coverage --format=json` from stdin and
// prints the coverage of every file and of the whole policy tree.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

type report struct {
	Files map[string]struct {
		Coverage   float64 `json:"coverage"`
		NotCovered []struct {
			Start struct{ Row int } `json:"start"`
		} `json:"not_covered"`
	} `json:"files"`
	Coverage float64 `json:"coverage"`
}

func main() {
	var r report
	if err := json.NewDecoder(os.Stdin).Decode(&r); err != nil {
		fmt.Fprintln(os.Stderr, "covsummary:", err)
		os.Exit(2)
	}
	names := make([]string, 0, len(r.Files))
	for n := range r.Files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := r.Files[n]
		fmt.Printf("  %6.1f%%  %s\n", f.Coverage, n)
	}
	fmt.Printf("rego coverage: %.1f%%\n", r.Coverage)
}
