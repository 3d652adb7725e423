// Package output renders a flipflop report, one file per format.
package output

import (
	"fmt"
	"io"
	"slices"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Options carry what a renderer may need besides the report.
type Options struct {
	// Rules lists every rule of the bundle (for formats that describe rules
	// even when nothing fired).
	Rules []evaluator.Rule
}

type renderer func(io.Writer, *evaluator.Report, Options) error

var renderers = map[string]renderer{
	"text": writeText,
	"json": writeJSON,
}

// Formats lists the output formats, sorted.
func Formats() []string {
	fs := make([]string, 0, len(renderers))
	for f := range renderers {
		fs = append(fs, f)
	}
	slices.Sort(fs)
	return fs
}

// Write renders report to w in format.
func Write(w io.Writer, format string, report *evaluator.Report, opts Options) error {
	r, ok := renderers[format]
	if !ok {
		return fmt.Errorf("unknown output format %q", format)
	}
	return r(w, report, opts)
}
