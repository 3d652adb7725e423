package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/textwrap"
)

// The JUnit XML flipflop writes: the common subset that Jenkins, GitLab,
// Azure DevOps and the usual test-report actions read.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		File      string        `xml:"file,attr,omitempty"`
		Line      int           `xml:"line,attr,omitempty"`
		Skipped   *junitSkipped `xml:"skipped,omitempty"`
		Failure   *junitProblem `xml:"failure,omitempty"`
		Error     *junitProblem `xml:"error,omitempty"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
		// Text is the finding's report for a finding that does not fail
		// the run (as a <failure>'s), empty otherwise.
		Text string `xml:",cdata"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		// Text is CDATA so that its lines stay lines (character data would
		// turn every newline into &#xA;).
		Text string `xml:",cdata"`
	}
)

// junitErrorsSuite names the testsuite of load errors.
const junitErrorsSuite = "errors"

// writeJUnit writes the report as JUnit XML: one testsuite per rule (sorted by
// id) with a testcase per finding, or one passing testcase named after the
// rule when it found nothing; load errors as testcases with <error> in a
// testsuite named "errors", present only when there are load errors.
//
// A finding's testcase fails only when the finding fails the run
// (Options.FailOn, as the exit code counts), so that a test report viewer
// (GitLab's merge-request widget, Jenkins) shows a failed test exactly when
// the job fails on findings. A finding below --fail-on is skipped, its
// message and report in the <skipped>: GitLab shows a skipped test's
// <skipped> text and never a passing test's output (its parser keeps
// system-out only for failures), Jenkins shows both, and neither counts a
// skip against the build. A waived finding is skipped too, with the waiver.
func writeJUnit(w io.Writer, report *evaluator.Report, opts Options) error {
	failOn := opts.failOn()
	byRule := map[string][]*evaluator.Finding{}
	var ids []string
	for _, r := range opts.Rules {
		if _, ok := byRule[r.ID]; !ok {
			byRule[r.ID] = nil
			ids = append(ids, r.ID)
		}
	}
	for i := range report.Findings {
		f := &report.Findings[i]
		if _, ok := byRule[f.Rule]; !ok {
			ids = append(ids, f.Rule)
		}
		byRule[f.Rule] = append(byRule[f.Rule], f)
	}
	slices.Sort(ids)

	doc := junitSuites{Name: "flipflop"}
	for _, id := range ids {
		suite := junitSuite{Name: id}
		class := "flipflop." + id
		seen := map[string]int{}
		for _, f := range byRule[id] {
			c := junitCase{Name: caseName(f, seen), Classname: class}
			if p := primary(f); p >= 0 {
				c.File, c.Line = safetext.Text(f.Resources[p].File), f.Resources[p].Line
			}
			switch {
			case f.Waived != nil:
				c.Skipped = &junitSkipped{Message: "waived: " + waiverNote(f.Waived)}
				suite.Skipped++
			case fails(f, failOn):
				c.Failure = &junitProblem{Message: safetext.Text(f.Message), Type: f.Severity, Text: xmlText(failureText(f))}
				suite.Failures++
			default:
				c.Skipped = &junitSkipped{
					Message: fmt.Sprintf("%s, does not fail the run (--fail-on %s): %s", f.Severity, failOn, safetext.Text(f.Message)),
					Text:    xmlText(failureText(f)),
				}
				suite.Skipped++
			}
			suite.Cases = append(suite.Cases, c)
		}
		if len(suite.Cases) == 0 {
			suite.Cases = append(suite.Cases, junitCase{Name: id, Classname: class})
		}
		suite.Tests = len(suite.Cases)
		doc.Suites = append(doc.Suites, suite)
	}
	if len(report.Errors) > 0 {
		suite := junitSuite{Name: junitErrorsSuite}
		for _, e := range report.Errors {
			suite.Cases = append(suite.Cases, junitCase{
				Name:      errorLocation(e),
				Classname: "flipflop." + junitErrorsSuite,
				File:      safetext.Text(e.Path),
				Line:      e.Line,
				Error:     &junitProblem{Message: safetext.Text(e.Message), Type: "input-error", Text: xmlText(errorLocation(e) + ": " + safetext.Text(e.Message))},
			})
		}
		suite.Tests, suite.Errors = len(suite.Cases), len(suite.Cases)
		doc.Suites = append(doc.Suites, suite)
	}
	if s := junitLeftOut(report); s != nil {
		doc.Suites = append(doc.Suites, *s)
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}

	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// caseName names a finding's testcase after what the finding is about: its
// key, or its resources when it has none; a repeated name gets " #2", " #3".
func caseName(f *evaluator.Finding, seen map[string]int) string {
	name := safetext.Text(f.Key)
	if name == "" {
		names := make([]string, 0, len(f.Resources))
		for _, r := range f.Resources {
			names = append(names, safetext.Text(r.Kind)+" "+qualified(r))
		}
		name = strings.Join(names, ", ")
	}
	if name == "" {
		name = f.Rule
	}
	seen[name]++
	if n := seen[name]; n > 1 {
		name = fmt.Sprintf("%s #%d", name, n)
	}
	return name
}

// failureText is the body of a finding's <failure>: the rule, the resources
// with their locations, and how to fix it.
func failureText(f *evaluator.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s\n", strings.ToUpper(f.Severity), f.Rule, f.Title)
	writeResourceList(&b, f, "  ")
	b.WriteString("why\n")
	b.WriteString(textwrap.Wrap(safetext.Text(f.Message), "  ", textWidth))
	if r := strings.TrimSpace(f.Remediation); r != "" {
		b.WriteString("fix\n")
		for _, line := range strings.Split(r, "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	fmt.Fprintf(&b, "see %s\n", ruleDocURL(f.Rule))
	return b.String()
}

// writeResourceList writes one line per resource: what it is and where.
func writeResourceList(b *strings.Builder, f *evaluator.Finding, indent string) {
	for _, r := range f.Resources {
		b.WriteString(indent + describe(r))
		if loc := location(r); loc != "" {
			b.WriteString("  " + loc)
		}
		b.WriteString("\n")
	}
}

// xmlText replaces the characters XML 1.0 cannot carry (most control
// characters, surrogates, U+FFFE and U+FFFF) with U+FFFD: encoding/xml does so
// in attributes and character data but not in CDATA.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}
