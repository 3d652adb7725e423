package output

import (
	"encoding/json"
	"io"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// writeJSON writes the report as flipflop's documented JSON contract:
// {"findings": [...], "errors": [...], "summary": {...}}.
func writeJSON(w io.Writer, report *evaluator.Report, _ Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(report)
}
