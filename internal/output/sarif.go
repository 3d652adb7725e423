package output

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/docs"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// SARIF constants.
const (
	sarifVersion = "2.1.0"
	// sarifSchema is the OASIS SARIF 2.1.0 schema (errata 01), the one
	// testdata/sarif-schema-2.1.0.json holds.
	sarifSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	toolURI     = "https://github.com/flipflop-dev/flipflop"
	// fingerprintKey names flipflop's partial fingerprint; the suffix is the
	// version of its recipe (see fingerprint).
	fingerprintKey = "flipflop/v1"
)

// The SARIF objects flipflop writes: the subset of SARIF 2.1.0 it uses, field
// order as in the specification.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool        sarifTool         `json:"tool"`
		Invocations []sarifInvocation `json:"invocations"`
		Results     []sarifResult     `json:"results"`
		// Properties carry the Kargo version the findings followed
		// (kargoVersion, kargoVersionAssumed, kargoVersionSource).
		Properties map[string]any `json:"properties,omitempty"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string            `json:"name"`
		Version        string            `json:"version,omitempty"`
		InformationURI string            `json:"informationUri"`
		Rules          []sarifDescriptor `json:"rules"`
	}
	sarifDescriptor struct {
		ID                   string             `json:"id"`
		Name                 string             `json:"name"`
		ShortDescription     sarifMessage       `json:"shortDescription"`
		FullDescription      sarifMessage       `json:"fullDescription"`
		DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
		HelpURI              string             `json:"helpUri"`
		Help                 sarifMessage       `json:"help"`
	}
	sarifConfiguration struct {
		Level string `json:"level"`
	}
	sarifMessage struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown,omitempty"`
	}
	sarifInvocation struct {
		ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
		ExecutionSuccessful        bool                `json:"executionSuccessful"`
	}
	sarifNotification struct {
		Locations []sarifLocation `json:"locations,omitempty"`
		Message   sarifMessage    `json:"message"`
		Level     string          `json:"level"`
	}
	sarifResult struct {
		RuleID              string             `json:"ruleId"`
		RuleIndex           int                `json:"ruleIndex"`
		Level               string             `json:"level"`
		Message             sarifMessage       `json:"message"`
		Locations           []sarifLocation    `json:"locations"`
		PartialFingerprints map[string]string  `json:"partialFingerprints"`
		RelatedLocations    []sarifLocation    `json:"relatedLocations,omitempty"`
		Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	}
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Status        string `json:"status"`
		Justification string `json:"justification,omitempty"`
	}
	sarifLocation struct {
		ID               *int                   `json:"id,omitempty"`
		PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
		LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
		Message          *sarifMessage          `json:"message,omitempty"`
	}
	sarifPhysicalLocation struct {
		ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
		Region           *sarifRegion          `json:"region,omitempty"`
	}
	sarifArtifactLocation struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
	sarifLogicalLocation struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
)

// writeSARIF writes the report as one SARIF 2.1.0 run: every rule of the
// bundle in tool.driver.rules (so code scanning can close alerts of rules that
// no longer fire), one result per finding located at its first resource with
// a file and related to the others (a waived finding carries an accepted
// suppression), and load errors as tool execution notifications of a failed
// invocation.
func writeSARIF(w io.Writer, report *evaluator.Report, opts Options) error {
	rules, index := sarifRules(report, opts.Rules)
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:           "flipflop",
			Version:        opts.Version,
			InformationURI: toolURI,
			Rules:          rules,
		}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: len(report.Errors) == 0}},
		Results:     make([]sarifResult, 0, len(report.Findings)),
	}
	if k := report.Kargo; k != nil && k.Version != "" {
		run.Properties = map[string]any{"kargoVersion": k.Version, "kargoVersionAssumed": k.Assumed}
		if k.Source != "" {
			run.Properties["kargoVersionSource"] = safetext.Text(k.Source)
		}
	}
	for _, e := range report.Errors {
		n := sarifNotification{Message: sarifMessage{Text: safetext.Text(e.Message)}, Level: "error"}
		if e.Path != "" {
			n.Locations = []sarifLocation{{PhysicalLocation: physical(e.Path, e.Line)}}
		}
		run.Invocations[0].ToolExecutionNotifications = append(run.Invocations[0].ToolExecutionNotifications, n)
	}
	run.Invocations[0].ToolExecutionNotifications = append(run.Invocations[0].ToolExecutionNotifications, sarifLeftOut(report)...)
	for i := range report.Findings {
		f := &report.Findings[i]
		res := sarifResult{
			RuleID:              f.Rule,
			RuleIndex:           index[f.Rule],
			Level:               sarifLevel(f.Severity),
			Message:             sarifMessage{Text: safetext.Text(f.Message)},
			Locations:           []sarifLocation{},
			PartialFingerprints: map[string]string{fingerprintKey: fingerprint(f)},
		}
		p := primary(f)
		id := 0
		for j, r := range f.Resources {
			loc := resourceLocation(r)
			if j == p {
				res.Locations = append(res.Locations, loc)
				continue
			}
			id++
			n := id
			loc.ID = &n
			res.RelatedLocations = append(res.RelatedLocations, loc)
		}
		if wv := f.Waived; wv != nil {
			res.Suppressions = []sarifSuppression{{Kind: suppressionKind(wv), Status: "accepted", Justification: waiverNote(wv)}}
		}
		run.Results = append(run.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// sarifRules describes every rule of the bundle, sorted by id, and any rule a
// finding names that the bundle lacks (from the finding), and returns their
// index by id.
func sarifRules(report *evaluator.Report, bundle []evaluator.Rule) ([]sarifDescriptor, map[string]int) {
	rules := slices.Clone(bundle)
	known := make(map[string]bool, len(rules))
	for _, r := range rules {
		known[r.ID] = true
	}
	for _, f := range report.Findings {
		if !known[f.Rule] {
			known[f.Rule] = true
			rules = append(rules, evaluator.Rule{ID: f.Rule, Title: f.Title, Severity: f.Severity, Remediation: f.Remediation})
		}
	}
	slices.SortFunc(rules, func(a, b evaluator.Rule) int { return cmp.Compare(a.ID, b.ID) })
	out := make([]sarifDescriptor, 0, len(rules))
	index := make(map[string]int, len(rules))
	for i, r := range rules {
		index[r.ID] = i
		title := cmp.Or(r.Title, r.ID)
		desc := strings.TrimSpace(r.Description)
		remedy := strings.TrimSpace(r.Remediation)
		d := sarifDescriptor{
			ID:                   r.ID,
			Name:                 pascalCase(r.ID),
			ShortDescription:     sarifMessage{Text: title},
			FullDescription:      sarifMessage{Text: unwrap(cmp.Or(desc, title)), Markdown: markdown(cmp.Or(desc, title))},
			DefaultConfiguration: sarifConfiguration{Level: sarifLevel(r.Severity)},
			HelpURI:              ruleDocURL(r.ID),
			Help:                 ruleHelp(r, remedy, title),
		}
		out = append(out, d)
	}
	return out, index
}

// ruleHelp is the rule's documentation page (what `flipflop explain RULE`
// prints and docs/rules/<id>.md holds), falling back to its remediation.
func ruleHelp(r evaluator.Rule, remedy, title string) sarifMessage {
	text, terr := docs.Text(r)
	md, merr := docs.Markdown(r)
	if terr != nil || merr != nil || text == "" || md == "" {
		return sarifMessage{
			Text:     cmp.Or(remedy, title) + "\n\nSee " + ruleDocURL(r.ID),
			Markdown: markdown(cmp.Or(remedy, title)) + "\n\n[Rule documentation](" + ruleDocURL(r.ID) + ")",
		}
	}
	return sarifMessage{Text: text, Markdown: md}
}

// suppressionKind tells a waiver written on the manifest (an annotation:
// "inSource") from one in a waiver file ("external").
func suppressionKind(wv *evaluator.Waived) string {
	if strings.HasPrefix(wv.By, "annotation") {
		return "inSource"
	}
	return "external"
}

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(severity string) string {
	switch severity {
	case "error":
		return "error"
	case "warning":
		return "warning"
	default:
		return "note"
	}
}

// fingerprint identifies a finding across runs and edits: the SHA-256 of the
// rule, the finding's key and the sorted, distinct identities of its
// resources (API group, kind, namespace, name), separated by NUL bytes. Files
// and lines are left out, so moving or editing a manifest keeps the alert.
func fingerprint(f *evaluator.Finding) string {
	ids := make([]string, 0, len(f.Resources))
	for _, r := range f.Resources {
		ids = append(ids, identity(r))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	h := sha256.New()
	h.Write([]byte(f.Rule + "\x00" + f.Key))
	for _, id := range ids {
		h.Write([]byte("\x00" + id))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// identity is a resource's identity, stable across API versions:
// "group/Kind/namespace/name" (group empty for the core API).
func identity(r evaluator.Resource) string {
	group, _, ok := strings.Cut(r.APIVersion, "/")
	if !ok {
		group = ""
	}
	return group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

// resourceLocation locates a resource: its file and line when it has a file,
// and always its Kubernetes identity as a logical location.
func resourceLocation(r evaluator.Resource) sarifLocation {
	loc := sarifLocation{
		LogicalLocations: []sarifLogicalLocation{{
			Name:               safetext.Text(r.Name),
			FullyQualifiedName: safetext.Text(identity(r)),
			Kind:               "resource",
		}},
		Message: &sarifMessage{Text: describe(r)},
	}
	if r.File != "" {
		loc.PhysicalLocation = physical(r.File, r.Line)
	}
	return loc
}

func physical(file string, line int) *sarifPhysicalLocation {
	p := &sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{URI: fileURI(file)}}
	if line > 0 {
		p.Region = &sarifRegion{StartLine: line}
	}
	return p
}

// fileURI turns a path as given into a URI reference: a relative path stays
// relative (slashes, percent-encoded where needed), an absolute one becomes a
// file:// URI.
func fileURI(path string) string {
	slashed := filepath.ToSlash(path)
	if filepath.IsAbs(path) || strings.HasPrefix(slashed, "/") {
		if !strings.HasPrefix(slashed, "/") {
			slashed = "/" + slashed // C:/x → /C:/x
		}
		return (&url.URL{Scheme: "file", Path: slashed}).String()
	}
	return (&url.URL{Path: slashed}).String()
}

// pascalCase turns a rule id into a SARIF rule name:
// shared-branch-contradiction → SharedBranchContradiction.
func pascalCase(id string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// unwrap joins the hard-wrapped lines of each paragraph of s.
func unwrap(s string) string {
	paras := strings.Split(strings.TrimSpace(s), "\n\n")
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n\n")
}

// markdown makes rule text (plain text with `code` spans and numbered lists)
// safe as GitHub-flavoured Markdown: a "<" outside code spans would start an
// HTML tag, so it becomes "&lt;".
func markdown(s string) string {
	parts := strings.Split(s, "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = strings.ReplaceAll(parts[i], "<", "&lt;")
	}
	return strings.Join(parts, "`")
}
