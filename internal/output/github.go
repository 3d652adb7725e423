package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// writeGitHub writes the report as GitHub Actions workflow commands: one
// annotation per finding at its first resource with a file (::error for
// errors, ::warning for warnings, ::notice for info; waived findings are only
// counted), one ::error per load error, a ::notice per path left out, and the
// summary line as plain log output.
func writeGitHub(w io.Writer, report *evaluator.Report, _ Options) error {
	var b strings.Builder
	for i := range report.Findings {
		f := &report.Findings[i]
		if f.Waived != nil {
			continue // counted in the summary line, not annotated
		}
		var file string
		var line int
		if p := primary(f); p >= 0 {
			file, line = f.Resources[p].File, f.Resources[p].Line
		}
		writeCommand(&b, githubCommand(f.Severity), file, line, f.Rule+": "+f.Title, annotationText(f))
	}
	for _, e := range report.Errors {
		writeCommand(&b, "error", e.Path, e.Line, "flipflop: input not checked", safetext.Text(e.Message))
	}
	writeGitHubLeftOut(&b, report)
	s := report.Summary
	fmt.Fprintf(&b, "flipflop: %s: %s, %s, %s",
		objectsChecked(s), plural(s.Error, "error"), plural(s.Warning, "warning"), plural(s.Info, "info"))
	b.WriteString(summaryTail(report) + "\n")
	if k := kargoNote(report.Kargo); k != "" {
		b.WriteString("flipflop: " + k + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// githubCommand maps a severity to a workflow command.
func githubCommand(severity string) string {
	switch severity {
	case "error":
		return "error"
	case "warning":
		return "warning"
	default:
		return "notice"
	}
}

// writeCommand writes "::cmd file=…,line=…,title=…::data", leaving out the
// properties that are empty. data must have had the values from input in it
// escaped (safetext); its own line breaks become %0A, which the runner turns
// back into line breaks of the annotation.
func writeCommand(b *strings.Builder, cmd, file string, line int, title, data string) {
	var props []string
	if file != "" {
		props = append(props, "file="+escapeProperty(safetext.Text(file)))
		if line > 0 {
			props = append(props, "line="+strconv.Itoa(line))
		}
	}
	if title != "" {
		props = append(props, "title="+escapeProperty(title))
	}
	b.WriteString("::" + cmd)
	if len(props) > 0 {
		b.WriteString(" " + strings.Join(props, ","))
	}
	b.WriteString("::" + escapeData(data) + "\n")
}

// annotationText is the body of a finding's annotation: why, every resource
// with its location, and the fix.
func annotationText(f *evaluator.Finding) string {
	var b strings.Builder
	b.WriteString(safetext.Text(f.Message) + "\n\n")
	writeResourceList(&b, f, "")
	if r := strings.TrimSpace(f.Remediation); r != "" {
		b.WriteString("\nfix:\n" + r + "\n")
	}
	b.WriteString("\nsee " + ruleDocURL(f.Rule))
	return b.String()
}

// escapeData escapes the message of a workflow command as the Actions runner
// unescapes it: %, CR and LF (the other control characters of values from
// input are escaped by safetext before).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a property value of a workflow command: as data,
// plus the ":" and "," that delimit properties.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
