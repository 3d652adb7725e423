package output

import (
	"fmt"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/digest"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// leftOutLimit bounds the paths the github and markdown formats name one by
// one (the rest are counted): a reviewer needs to see that paths were left
// out and which kind, and the JSON and text formats list every one.
const leftOutLimit = 50

// leftOut is a path a run did not check, and why, both raw (each format
// escapes them as it prints them).
type leftOut struct {
	Path, Why string
}

// leftOutPaths lists, in report order, every path the run left out: the
// paths an exclusion pattern named (never read), and the manifest files in a
// kustomization's or chart's own directory that no render read (what an
// Application pointing at that directory reads leaves them out).
func leftOutPaths(report *evaluator.Report) []leftOut {
	var out []leftOut
	for _, e := range report.Excluded {
		out = append(out, leftOut{e.Path, fmt.Sprintf("excluded by %q (%s)", e.Pattern, e.Source)})
	}
	for _, r := range report.Rendered {
		for _, f := range r.NotListed {
			out = append(out, leftOut{f, notListedWhy(r)})
		}
	}
	return out
}

// notListedWhy says why a file in a rendered directory was not checked.
func notListedWhy(r evaluator.RenderedRoot) string {
	if r.Mode == evaluator.ModeHelm {
		return "in the directory of the Helm chart " + r.Path + ", outside templates/: an Application pointing at " +
			r.Path + " renders the chart, which never templates this file, so nothing applies it"
	}
	return "in the directory of the kustomization " + r.Path + ", which does not list it: an Application pointing at " +
		r.Path + " builds the kustomization, which never reads this file, so nothing applies it"
}

// leftOutTitle is the annotation title of a path left out.
const leftOutTitle = "flipflop: not checked"

// writeGitHubLeftOut writes a ::notice per path left out (the first
// leftOutLimit, then one counting the rest), so that a reviewer sees on the
// pull request what the run did not read.
func writeGitHubLeftOut(b *strings.Builder, report *evaluator.Report) {
	paths := leftOutPaths(report)
	for i, p := range paths {
		if i == leftOutLimit {
			writeCommand(b, "notice", "", 0, leftOutTitle, fmt.Sprintf("and %s more: flipflop check -o json lists every one under excluded and rendered[].notListed", plural(len(paths)-i, "path")))
			break
		}
		writeCommand(b, "notice", p.Path, 0, leftOutTitle, safetext.Text(p.Why))
	}
}

// sarifLeftOut is one tool execution notification (level note) per path left
// out, at the path.
func sarifLeftOut(report *evaluator.Report) []sarifNotification {
	var out []sarifNotification
	for _, p := range leftOutPaths(report) {
		out = append(out, sarifNotification{
			Message:   sarifMessage{Text: "not checked: " + safetext.Text(p.Why)},
			Level:     "note",
			Locations: []sarifLocation{{PhysicalLocation: physical(p.Path, 0)}},
		})
	}
	return out
}

// junitLeftOutSuite names the JUnit test suite of the paths left out.
const junitLeftOutSuite = "not-checked"

// junitLeftOut is a suite with a skipped test case per path left out: not a
// failure (the run's exit code does not count them), and visible in every
// test report viewer. nil when nothing was left out.
func junitLeftOut(report *evaluator.Report) *junitSuite {
	paths := leftOutPaths(report)
	if len(paths) == 0 {
		return nil
	}
	suite := junitSuite{Name: junitLeftOutSuite}
	for _, p := range paths {
		suite.Cases = append(suite.Cases, junitCase{
			Name:      safetext.Text(p.Path),
			Classname: "flipflop." + junitLeftOutSuite,
			File:      safetext.Text(p.Path),
			Skipped:   &junitSkipped{Message: "not checked: " + safetext.Text(p.Why)},
		})
	}
	suite.Tests, suite.Skipped = len(suite.Cases), len(suite.Cases)
	return &suite
}

// writeMarkdownLeftOut writes the section of the paths left out, within the
// size limit (fits), naming at most leftOutLimit of them.
func writeMarkdownLeftOut(b *strings.Builder, report *evaluator.Report, fits func(string) bool) {
	paths := leftOutPaths(report)
	if len(paths) == 0 {
		return
	}
	b.WriteString("### Not checked\n\nThese paths were left out of the check:\n\n")
	for i, p := range paths {
		line := fmt.Sprintf("- %s: %s\n", safetext.MarkdownCode(digest.Clip(p.Path, mdMaxName)), safetext.Markdown(digest.Clip(p.Why, mdMaxErrorText)))
		if i == leftOutLimit || !fits(line) {
			fmt.Fprintf(b, "- and %s more (`flipflop check` lists every one)\n", plural(len(paths)-i, "path"))
			break
		}
		b.WriteString(line)
	}
	b.WriteString("\n")
}
