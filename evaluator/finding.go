package evaluator

import (
	"cmp"
	"slices"
)

// Severity levels, from most to least severe.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// SeverityRank orders severities: error 3, warning 2, info 1, anything else 0.
func SeverityRank(s string) int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 1
	}
	return 0
}

// Resource names an object a finding involves and where it was read.
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	File       string `json:"file,omitempty"`
	Line       int    `json:"line,omitempty"`
	// GeneratedBy names the ApplicationSet that generates an Application that
	// exists in no file ("ApplicationSet argocd/apps"); File and Line are then the
	// ApplicationSet's.
	GeneratedBy string `json:"generatedBy,omitempty"`
	// RenderedBy names the Helm chart or kustomization the object was rendered
	// by ("helm chart <dir>", "kustomize <dir>"): File is then the template (Line
	// the template document it came from, when known) or the file kustomize
	// read it from (before patches).
	RenderedBy string `json:"renderedBy,omitempty"`
}

// Finding is one rule's verdict on a set of objects.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	// RuleSeverity is the rule's own severity when the settings report its
	// findings at another (Settings.Severity); empty otherwise.
	RuleSeverity string     `json:"ruleSeverity,omitempty"`
	Title        string     `json:"title"`
	Message      string     `json:"message"`
	Remediation  string     `json:"remediation"`
	Resources    []Resource `json:"resources"`
	// Key names what the finding is about (e.g. the shared pointer), stable
	// across runs; with Rule it identifies the finding.
	Key string `json:"key,omitempty"`
	// Pointer, Stages, Applications, Pins and Writes say what the finding is
	// about in the model's terms, for tools to join on: the pointer key ("" for
	// none), Stage keys ("project/name"), Application keys ("namespace/name"),
	// and the ids of pins and writes in the model (Model.Pin, Model.Write;
	// opaque strings). Every rule fills the same fields.
	Pointer string `json:"pointer,omitempty"`
	// PointerText is the pointer for people: "github.com/acme/deploy @ main".
	PointerText  string   `json:"pointerText,omitempty"`
	Stages       []string `json:"stages,omitempty"`
	Applications []string `json:"applications,omitempty"`
	Pins         []string `json:"pins,omitempty"`
	Writes       []string `json:"writes,omitempty"`
	// Details holds rule-specific facts for people; tools read the typed fields
	// above. One key is shared by the rules that involve Applications:
	// autoSync, {"namespace/name": true | false | "unknown"}.
	Details map[string]any `json:"details,omitempty"`
	// Waived is set when a waiver covers the finding: it is listed, but counts
	// toward neither the severity totals nor the exit code.
	Waived *Waived `json:"waived,omitempty"`
}

// Waived says which waiver covers a finding and why.
type Waived struct {
	Reason string `json:"reason"`
	// By names the waiver: "annotation flipflop.dev/ignore on Stage/acme/dev" or "waiver 2 (rule)".
	By      string `json:"by"`
	Expires string `json:"expires,omitempty"`
}

// Summary counts objects read and findings by severity.
type Summary struct {
	// Objects counts the objects checked.
	Objects int `json:"objects"`
	// Skipped counts the objects read but dropped unconverted because no
	// rule reads their kind (Projects, Warehouses, ConfigMaps, ...).
	Skipped int `json:"skipped"`
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
	// Waived counts findings a waiver covers (not counted above).
	Waived int `json:"waived"`
}

// Report is the result of one check: findings, load errors and a summary. Its
// JSON form is flipflop's documented output contract.
type Report struct {
	Findings []Finding   `json:"findings"`
	Errors   []LoadError `json:"errors"`
	// Excluded lists the paths that exclude patterns left unread (loader.Loader.LoadAll); the caller's to add.
	Excluded []Exclusion `json:"excluded,omitempty"`
	Summary  Summary     `json:"summary"`
	// Rendered lists the directories read as Helm charts or kustomizations
	// (absent when every path was read as plain YAML).
	Rendered []RenderedRoot `json:"rendered,omitempty"`
	// Kargo is the Kargo version the findings assume (set by Evaluate and
	// Analyze).
	Kargo *KargoVersion `json:"kargo,omitempty"`
}

// KargoVersion is the Kargo release the policies read the estate as.
type KargoVersion struct {
	// Version is the release, "v1.11.2".
	Version string `json:"version"`
	// Assumed is true when no setting named a version: Version is then the
	// newest release the policies model.
	Assumed bool `json:"assumed"`
	// Named is the version as the setting named it, when that is not
	// Version (a release newer than the newest the policies model).
	Named string `json:"named,omitempty"`
	// Source says where a named version came from ("--kargo-version",
	// ".flipflop.yaml:3", the cluster): the caller's to set.
	Source string `json:"source,omitempty"`
}

// sortFindings orders findings by severity (most severe first), rule, then
// resources, so that output is deterministic.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if c := cmp.Compare(SeverityRank(b.Severity), SeverityRank(a.Severity)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		if c := slices.CompareFunc(a.Resources, b.Resources, compareResource); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
}

func compareResource(a, b Resource) int {
	return cmp.Or(
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
	)
}

// Count returns how many unwaived findings are at or above severity min.
func (r *Report) Count(min string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Waived == nil && SeverityRank(f.Severity) >= SeverityRank(min) {
			n++
		}
	}
	return n
}
