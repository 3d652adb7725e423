package output

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// The GitLab Code Quality report: a JSON array of issues, each with the
// fields GitLab reads of a Code Climate issue (docs.gitlab.com, "Code
// Quality report format"). GitLab shows them in the merge-request widget
// (the issues the merge request adds or resolves, by fingerprint) and, in
// Ultimate, beside the changed lines.
type (
	gitlabIssue struct {
		Description string         `json:"description"`
		CheckName   string         `json:"check_name"`
		Fingerprint string         `json:"fingerprint"`
		Severity    string         `json:"severity"`
		Location    gitlabLocation `json:"location"`
	}
	gitlabLocation struct {
		Path  string      `json:"path"`
		Lines gitlabLines `json:"lines"`
	}
	gitlabLines struct {
		Begin int `json:"begin"`
	}
)

// GitLab's severities, least severe first.
const (
	gitlabInfo     = "info"
	gitlabMinor    = "minor"
	gitlabCritical = "critical"
	gitlabBlocker  = "blocker"
)

// The check names of what is not a rule's finding.
const (
	gitlabInputError = "input-error"
	gitlabNotChecked = "not-checked"
)

// gitlabRoot is the path of an issue about no file (objects read from a
// cluster, an input error about no path): the repository's root.
const gitlabRoot = "."

// writeGitLab writes the report as a GitLab Code Quality report: an issue per
// unwaived finding at its first object that has a file (its rule the check
// name, the SARIF fingerprint, error critical, warning minor, info info), an
// issue of severity blocker per input that could not be read (the run exits 2:
// GitLab has no notifications), and an info issue per path left out, so that
// a merge request that excludes a path or adds a file no render reads shows
// it. Waived findings are left out: GitLab has no suppressions, and a waiver
// resolves the issue in the widget. Values are data, JSON-escaped, as in the
// json format.
func writeGitLab(w io.Writer, report *evaluator.Report, _ Options) error {
	issues := make([]gitlabIssue, 0, len(report.Findings)+len(report.Errors))
	for i := range report.Findings {
		f := &report.Findings[i]
		if f.Waived != nil {
			continue
		}
		file, line := "", 0
		if p := primary(f); p >= 0 {
			file, line = f.Resources[p].File, f.Resources[p].Line
		}
		issues = append(issues, gitlabIssue{
			Description: f.Message,
			CheckName:   f.Rule,
			Fingerprint: fingerprint(f),
			Severity:    gitlabSeverity(f.Severity),
			Location:    gitlabAt(file, line),
		})
	}
	for _, e := range report.Errors {
		issues = append(issues, gitlabIssue{
			Description: "input error, not checked: " + e.Message,
			CheckName:   gitlabInputError,
			Fingerprint: gitlabFingerprint(gitlabInputError, e.Path, e.Message),
			Severity:    gitlabBlocker,
			Location:    gitlabAt(e.Path, e.Line),
		})
	}
	for _, p := range leftOutPaths(report) {
		issues = append(issues, gitlabIssue{
			Description: "not checked: " + p.Why,
			CheckName:   gitlabNotChecked,
			Fingerprint: gitlabFingerprint(gitlabNotChecked, p.Path, p.Why),
			Severity:    gitlabInfo,
			Location:    gitlabAt(p.Path, 0),
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(issues)
}

// gitlabSeverity maps a finding's severity to GitLab's: an error breaks
// promotions (critical); blocker is kept for the inputs a run could not read.
func gitlabSeverity(severity string) string {
	switch severity {
	case evaluator.SeverityError:
		return gitlabCritical
	case evaluator.SeverityWarning:
		return gitlabMinor
	default:
		return gitlabInfo
	}
}

// gitlabAt locates an issue: the path as GitLab matches it against the
// repository's files (forward slashes, no "./"), or the repository's root
// when there is none, and the line, 1 when unknown (GitLab requires one).
func gitlabAt(file string, line int) gitlabLocation {
	p := gitlabRoot
	if file != "" {
		p = filepath.ToSlash(file)
		if !strings.HasPrefix(p, "/") {
			p = path.Clean(p)
		}
	}
	return gitlabLocation{Path: p, Lines: gitlabLines{Begin: max(line, 1)}}
}

// gitlabFingerprint identifies an issue that is not a finding: the SHA-256 of
// its check name and parts, separated by NUL bytes.
func gitlabFingerprint(check string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(check))
	for _, p := range parts {
		h.Write([]byte("\x00" + p))
	}
	return hex.EncodeToString(h.Sum(nil))
}
