// Package reports turns a flipflop report into the policy reports the
// Kubernetes ecosystem reads (Policy Reporter and its UI, `kubectl get
// policyreport`, alerting on report counts): wgpolicyk8s.io/v1alpha2
// PolicyReports, one per namespace the findings touch, and a
// ClusterPolicyReport; or the same content as OpenReports Reports and a
// ClusterReport (openreports.io/v1alpha1). Both `flipflop check -o
// policyreport|openreports` and the writer (package writer) build them here,
// so what a user applies from a file and what the auditor writes are the same
// objects.
//
// Placement: a finding becomes one result in the report of each namespace
// among the objects it names (a Kargo project's, an Argo CD namespace), each
// listing all of them (those of that namespace first); a finding that names a
// cluster-scoped object (a ClusterPromotionTask), an object without a
// namespace (a manifest that names none) or with a namespace Kubernetes would
// reject, or no object at all, becomes a result in the cluster-scoped report
// too. The cluster-scoped report always exists: it also holds an error result
// per input that could not be read and a pass result per rule that found
// nothing, so that it says the audit ran and what it covered.
package reports

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/docs"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// Identity of flipflop's reports.
const (
	// Source is every result's source (and an OpenReports report's).
	Source = "flipflop"
	// Name is the name of each namespace's report and of the cluster-scoped
	// one; a namespace whose results do not fit in one object gets more,
	// named Name-2, Name-3, ...
	Name = "flipflop"
	// ManagedByLabel, set to ManagedBy, marks the reports flipflop writes
	// and replaces.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedBy is ManagedByLabel's value.
	ManagedBy = "flipflop"
)

// Results, as the CRDs' enum names them.
const (
	ResultPass  = "pass"
	ResultFail  = "fail"
	ResultWarn  = "warn"
	ResultError = "error"
	ResultSkip  = "skip"
)

// Severities of the CRDs' enum that flipflop uses (it never says critical or
// low: see Severity).
const (
	SeverityHigh   = "high"
	SeverityMedium = "medium"
	SeverityInfo   = "info"
)

// Categories of results.
const (
	// CategoryContradiction: the rules whose findings are promotions that
	// undo or block each other (the rules Gatekeeper enforces at admission).
	CategoryContradiction = "Contradiction"
	// CategoryConfiguration: every other rule.
	CategoryConfiguration = "Configuration"
	// CategoryInput: an input flipflop could not read.
	CategoryInput = "Input"
)

// PolicyInputError is the policy (and rule) of the error result of an input
// that could not be read, as the gitlab format's check name.
const PolicyInputError = "input-error"

// Bounds of what one result or one report holds: the input decides how long
// a message is and how many objects a finding names.
const (
	// DefaultMaxBytes bounds one report object's results, in bytes of JSON:
	// `kubectl apply` (client-side) keeps a copy of what it applies in the
	// last-applied annotation, which may not pass 256 KiB, and etcd refuses
	// an object over 1.5 MiB.
	DefaultMaxBytes = 200 << 10
	// MaxResources is the most objects one result lists; the rest are
	// counted in its resourcesLeftOut property.
	MaxResources = 100
	// maxMessage and maxProperty bound a message and a property, in
	// characters.
	maxMessage  = 2000
	maxProperty = 1000
	// maxLocations is the most file:line locations a result lists.
	maxLocations = 20
)

// Report is one report object before it is given a kind (PolicyReport or
// Report): where it lives, its name, its results and their summary.
type Report struct {
	// Namespace is the report's namespace; "" for the cluster-scoped report.
	Namespace string
	// Name is Name, or Name-N for a namespace's further reports.
	Name    string
	Results []PolicyReportResult
	Summary PolicyReportSummary
}

// Ref names an object for UIDs.
type Ref struct {
	// Group is the object's API group ("" for the core group).
	Group, Kind, Namespace, Name string
}

// RefOf is the Ref of an object of apiVersion and kind.
func RefOf(apiVersion, kind, namespace, name string) Ref {
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	return Ref{Group: group, Kind: kind, Namespace: namespace, Name: name}
}

// Options shape the reports.
type Options struct {
	// Rules lists every rule of the bundle: a rule that found nothing gets a
	// pass result in the cluster-scoped report, and a rule's category comes
	// from it.
	Rules []evaluator.Rule
	// Now is the results' timestamp; the zero value means time.Now().
	Now time.Time
	// UIDs are the UIDs of the objects read from the cluster; a resource
	// found here carries its uid.
	UIDs map[Ref]string
	// MaxBytes bounds each report object's results in bytes of JSON; 0
	// means DefaultMaxBytes.
	MaxBytes int
}

// Severity maps a flipflop severity to the CRDs' enum: error high, warning
// medium, info info. critical is left to what the ecosystem reserves it for
// (exploitable vulnerabilities, trivy's CVSS 9+): a flip-flop stops
// promotions, it opens no hole.
func Severity(s string) string {
	switch s {
	case evaluator.SeverityError:
		return SeverityHigh
	case evaluator.SeverityWarning:
		return SeverityMedium
	}
	return SeverityInfo
}

// Outcome maps a finding to the CRDs' result: an error fails, a warning or an
// info warns (the policy's requirement is not met and the rule does not
// score), and a waived finding is skipped (a user chose not to apply the
// rule there, as Kyverno reports a policy exception).
func Outcome(f *evaluator.Finding) string {
	switch {
	case f.Waived != nil:
		return ResultSkip
	case f.Severity == evaluator.SeverityError:
		return ResultFail
	}
	return ResultWarn
}

// Build places the findings of report in reports: one or more per namespace
// the findings touch (sorted by namespace), and the cluster-scoped one, which
// comes first. The results keep the report's order (severity, rule,
// resources), then the input errors, then the passes, so the same report
// builds the same reports.
func Build(report *evaluator.Report, opts Options) []Report {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	ts := metav1.Timestamp{Seconds: now.Unix()}
	rules := map[string]evaluator.Rule{}
	for _, r := range opts.Rules {
		rules[r.ID] = r
	}

	scoped := map[string][]PolicyReportResult{"": nil}
	fired := map[string]bool{}
	for i := range report.Findings {
		f := &report.Findings[i]
		fired[f.Rule] = true
		for _, ns := range scopes(f) {
			scoped[ns] = append(scoped[ns], findingResult(f, ns, rules[f.Rule], ts, opts.UIDs))
		}
	}
	for _, e := range report.Errors {
		scoped[""] = append(scoped[""], errorResult(e, ts))
	}
	ids := make([]string, 0, len(rules))
	for id := range rules {
		if !fired[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		scoped[""] = append(scoped[""], passResult(rules[id], ts))
	}

	nss := make([]string, 0, len(scoped))
	for ns := range scoped {
		nss = append(nss, ns)
	}
	slices.Sort(nss) // "" first: the cluster-scoped report
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	var out []Report
	for _, ns := range nss {
		for i, results := range chunk(scoped[ns], maxBytes) {
			name := Name
			if i > 0 {
				name = Name + "-" + strconv.Itoa(i+1)
			}
			out = append(out, Report{Namespace: ns, Name: name, Results: results, Summary: Summarize(results)})
		}
	}
	return out
}

// Summarize counts results by outcome.
func Summarize(results []PolicyReportResult) PolicyReportSummary {
	var s PolicyReportSummary
	for _, r := range results {
		switch r.Result {
		case ResultPass:
			s.Pass++
		case ResultFail:
			s.Fail++
		case ResultWarn:
			s.Warn++
		case ResultError:
			s.Error++
		case ResultSkip:
			s.Skip++
		}
	}
	return s
}

// scopes lists the reports a finding goes to: the namespaces of its objects,
// sorted, and "" (the cluster-scoped report) for an object without a valid
// namespace or a finding about no object.
func scopes(f *evaluator.Finding) []string {
	var out []string
	for _, r := range f.Resources {
		ns := reportNamespace(r.Namespace)
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	slices.Sort(out)
	return out
}

// reportNamespace is the namespace a report about an object of namespace ns
// lives in: ns itself when Kubernetes accepts it as a namespace name, else
// "" (the cluster-scoped report).
func reportNamespace(ns string) string {
	if ns == "" || len(validation.IsDNS1123Label(ns)) > 0 {
		return ""
	}
	return ns
}

// category is a rule's result category.
func category(r evaluator.Rule) string {
	if r.Admission {
		return CategoryContradiction
	}
	return CategoryConfiguration
}

// findingResult is f's result in the report of namespace ns.
func findingResult(f *evaluator.Finding, ns string, rule evaluator.Rule, ts metav1.Timestamp, uids map[Ref]string) PolicyReportResult {
	props := map[string]string{}
	set := func(k, v string) {
		if v = oneLine(v); v != "" {
			props[k] = safetext.Text(safetext.Cut(v, maxProperty))
		}
	}
	set("title", f.Title)
	set("key", f.Key)
	set("pointer", f.PointerText)
	set("remediation", f.Remediation)
	set("locations", locations(f.Resources))
	set("doc", fmt.Sprintf(docs.PageURL, f.Rule))
	if f.Waived != nil {
		set("waiver", f.Waived.Reason)
		set("waivedBy", f.Waived.By)
		set("waiverExpires", f.Waived.Expires)
	}
	// This namespace's objects first, then the others, in the finding's order.
	res := slices.Clone(f.Resources)
	slices.SortStableFunc(res, func(a, b evaluator.Resource) int {
		return boolRank(reportNamespace(a.Namespace) != ns) - boolRank(reportNamespace(b.Namespace) != ns)
	})
	if len(res) > MaxResources {
		props["resourcesLeftOut"] = strconv.Itoa(len(res) - MaxResources)
		res = res[:MaxResources]
	}
	refs := make([]corev1.ObjectReference, 0, len(res))
	for _, r := range res {
		refs = append(refs, corev1.ObjectReference{
			APIVersion: field(r.APIVersion),
			Kind:       field(r.Kind),
			Namespace:  field(r.Namespace),
			Name:       field(r.Name),
			UID:        types.UID(uids[RefOf(r.APIVersion, r.Kind, r.Namespace, r.Name)]),
		})
	}
	if len(props) == 0 {
		props = nil
	}
	return PolicyReportResult{
		Source:     Source,
		Policy:     safetext.Text(f.Rule),
		Rule:       safetext.Text(f.Rule),
		Category:   category(rule),
		Severity:   Severity(f.Severity),
		Timestamp:  ts,
		Result:     Outcome(f),
		Scored:     f.Severity == evaluator.SeverityError,
		Resources:  refs,
		Message:    safetext.Text(safetext.Cut(oneLine(f.Message), maxMessage)),
		Properties: props,
	}
}

// field is a name read from input as a reference shows it: escaped, and cut
// at 253 characters, the longest name Kubernetes accepts (a name it accepts
// is left as it is).
func field(s string) string { return safetext.Text(safetext.Cut(s, 253)) }

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// errorResult is the error result of an input that could not be read.
func errorResult(e evaluator.LoadError, ts metav1.Timestamp) PolicyReportResult {
	props := map[string]string{"file": safetext.Text(safetext.Cut(e.Path, maxProperty))}
	if e.Line > 0 {
		props["line"] = strconv.Itoa(e.Line)
	}
	return PolicyReportResult{
		Source:     Source,
		Policy:     PolicyInputError,
		Rule:       PolicyInputError,
		Category:   CategoryInput,
		Timestamp:  ts,
		Result:     ResultError,
		Message:    safetext.Text(safetext.Cut(oneLine(e.Error()), maxMessage)),
		Properties: props,
	}
}

// passResult is the pass result of a rule that found nothing.
func passResult(r evaluator.Rule, ts metav1.Timestamp) PolicyReportResult {
	return PolicyReportResult{
		Source:     Source,
		Policy:     r.ID,
		Rule:       r.ID,
		Category:   category(r),
		Severity:   Severity(r.Severity),
		Timestamp:  ts,
		Result:     ResultPass,
		Scored:     r.Severity == evaluator.SeverityError,
		Message:    safetext.Text("no finding: " + oneLine(r.Title)),
		Properties: map[string]string{"doc": fmt.Sprintf(docs.PageURL, r.ID)},
	}
}

// locations lists where a finding's objects were read ("gitops/kargo.yaml:18",
// "cluster:prod"), each once, at most maxLocations.
func locations(rs []evaluator.Resource) string {
	var locs []string
	for _, r := range rs {
		if r.File == "" {
			continue
		}
		l := r.File
		if r.Line > 0 {
			l += ":" + strconv.Itoa(r.Line)
		}
		if !slices.Contains(locs, l) {
			locs = append(locs, l)
		}
	}
	if len(locs) > maxLocations {
		locs = append(locs[:maxLocations], fmt.Sprintf("and %d more", len(locs)-maxLocations))
	}
	return strings.Join(locs, ", ")
}

// oneLine folds white space runs (line breaks included) into one space: a
// property or message reads on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// chunk splits results into runs whose JSON stays under maxBytes (every run
// holds at least one result; at least one run, maybe empty).
func chunk(results []PolicyReportResult, maxBytes int) [][]PolicyReportResult {
	out := [][]PolicyReportResult{nil}
	size := 0
	for _, r := range results {
		b, _ := json.Marshal(r)
		n := len(b) + 1
		last := len(out) - 1
		if size+n > maxBytes && len(out[last]) > 0 {
			out = append(out, nil)
			last++
			size = 0
		}
		out[last] = append(out[last], r)
		size += n
	}
	return out
}
