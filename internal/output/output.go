// Package output renders a flipflop report, one file per format: text (for a
// person at a terminal), json (the documented contract), sarif (code
// scanning), junit (test reports), github (workflow annotations), gitlab
// (GitLab Code Quality), markdown (job summaries, merge-request notes,
// pull-request comments), and policyreport and openreports (Kubernetes policy
// reports, built by package reports).
package output

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/digest"
	"github.com/flipflop-dev/flipflop/internal/docs"
	"github.com/flipflop-dev/flipflop/internal/reports"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// Colour modes of the text format.
const (
	// ColorAuto colours when the writer is a terminal and NO_COLOR is unset
	// or empty (and TERM is not "dumb"). The zero value of Options.Color.
	ColorAuto = "auto"
	// ColorAlways colours whatever the writer and the environment.
	ColorAlways = "always"
	// ColorNever never colours.
	ColorNever = "never"
)

// RuleDocURL is where a rule's documentation page lives; %s is the rule id.
const RuleDocURL = docs.PageURL

// Options carry what a renderer may need besides the report.
type Options struct {
	// Rules lists every rule of the bundle (for formats that describe rules
	// even when nothing fired).
	Rules []evaluator.Rule
	// Color is ColorAuto (or empty), ColorAlways or ColorNever; only the text
	// format colours.
	Color string
	// Version is flipflop's version, named by formats that describe the tool
	// (SARIF, Markdown); empty leaves it out.
	Version string
	// Digest is the report's digest (pictures, why, ways out) for the
	// markdown format, built by the caller from the model and the fix plan
	// of the same objects; nil (or a digest of another report) draws no
	// picture and offers no command.
	Digest *digest.Digest
	// MarkdownLimit bounds the markdown format, in bytes; 0 means
	// DefaultMarkdownLimit.
	MarkdownLimit int
	// FailOn is check's --fail-on: the severity at or above which an
	// unwaived finding fails the run (evaluator.SeverityError,
	// SeverityWarning, SeverityInfo), or FailNever; "" means SeverityError,
	// check's default. The junit format fails only those findings, so that
	// its failures agree with the exit code.
	FailOn string
	// Now is the time the policyreport and openreports formats give their
	// results; the zero value means time.Now().
	Now time.Time
	// UIDs are the UIDs of the objects read from a cluster, which the
	// policyreport and openreports formats give the resources they name.
	UIDs map[reports.Ref]string
}

// FailNever is the FailOn level at which no finding fails the run.
const FailNever = "never"

// FailLevels lists the values of Options.FailOn (and of --fail-on), most
// severe first.
func FailLevels() []string {
	return []string{evaluator.SeverityError, evaluator.SeverityWarning, evaluator.SeverityInfo, FailNever}
}

// failOn is the fail-on level of opts, its default filled in.
func (o Options) failOn() string {
	if o.FailOn == "" {
		return evaluator.SeverityError
	}
	return o.FailOn
}

// fails reports whether f fails the run at the fail-on level failOn, as the
// exit code counts findings (evaluator.Report.Count): unwaived, and at or
// above the level.
func fails(f *evaluator.Finding, failOn string) bool {
	if f.Waived != nil || failOn == FailNever {
		return false
	}
	return evaluator.SeverityRank(f.Severity) >= evaluator.SeverityRank(failOn)
}

type renderer func(io.Writer, *evaluator.Report, Options) error

var renderers = map[string]renderer{
	"text":         writeText,
	"json":         writeJSON,
	"sarif":        writeSARIF,
	"junit":        writeJUnit,
	"github":       writeGitHub,
	"gitlab":       writeGitLab,
	"markdown":     writeMarkdown,
	"policyreport": writePolicyReport,
	"openreports":  writeOpenReports,
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

// ColorModes lists the values of Options.Color (and of --color).
func ColorModes() []string { return []string{ColorAuto, ColorAlways, ColorNever} }

// Write renders report to w in format.
func Write(w io.Writer, format string, report *evaluator.Report, opts Options) error {
	r, ok := renderers[format]
	if !ok {
		return fmt.Errorf("unknown output format %q", format)
	}
	if opts.Color != "" && !slices.Contains(ColorModes(), opts.Color) {
		return fmt.Errorf("unknown colour mode %q", opts.Color)
	}
	if opts.FailOn != "" && !slices.Contains(FailLevels(), opts.FailOn) {
		return fmt.Errorf("unknown fail-on level %q", opts.FailOn)
	}
	return r(w, report, opts)
}

// ruleDocURL is the documentation page of rule id.
func ruleDocURL(id string) string { return fmt.Sprintf(RuleDocURL, id) }

// primary returns the index of the resource a finding is reported at: the
// first one with a file, else the first one, else -1.
func primary(f *evaluator.Finding) int {
	for i, r := range f.Resources {
		if r.File != "" {
			return i
		}
	}
	if len(f.Resources) > 0 {
		return 0
	}
	return -1
}

// describe names a resource for a person: "Stage acme/dev", with the
// ApplicationSet that generates it and the chart or kustomization that
// rendered it, if any; escaped for display.
func describe(r evaluator.Resource) string {
	s := safetext.Text(r.Kind) + " " + qualified(r)
	if r.GeneratedBy != "" {
		s += " (generated by " + safetext.Text(r.GeneratedBy) + ")"
	}
	if r.RenderedBy != "" {
		s += " (rendered by " + safetext.Text(r.RenderedBy) + ")"
	}
	return s
}
