package reports

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The wgpolicyk8s.io/v1alpha2 kinds, as the CRDs Kyverno ships (and the
// Policy Working Group's prototypes) define them. No Go module that the Go
// module proxy serves provides them without a whole policy engine
// (sigs.k8s.io/wg-policy-prototypes is not served; Kyverno's and Policy
// Reporter's copies live in their main modules), so these mirror the CRD's
// schema field for field: testdata's copy of the CRD validates them
// (TestPolicyReportSchema) and so does a real API server (writer tests).
//
// The OpenReports kinds (openreports.io/v1alpha1) come from their own module,
// github.com/openreports/reports-api.

// PolicyReport is a namespaced wgpolicyk8s.io/v1alpha2 PolicyReport.
type PolicyReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Scope is the object the report is about; flipflop leaves it out (the
	// report is about its namespace).
	Scope *corev1.ObjectReference `json:"scope,omitempty"`
	// Summary counts the results by outcome.
	Summary PolicyReportSummary `json:"summary"`
	// Results are the report's results.
	Results []PolicyReportResult `json:"results,omitempty"`
}

// ClusterPolicyReport is the cluster-scoped wgpolicyk8s.io/v1alpha2
// ClusterPolicyReport: the same fields as PolicyReport.
type ClusterPolicyReport PolicyReport

// PolicyReportSummary counts a report's results by outcome.
type PolicyReportSummary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// PolicyReportResult is one result of a report.
type PolicyReportResult struct {
	// Source names the tool: "flipflop".
	Source string `json:"source,omitempty"`
	// Policy and Rule are the flipflop rule's id (or input-error).
	Policy string `json:"policy"`
	Rule   string `json:"rule,omitempty"`
	// Category groups rules (Contradiction, Configuration, Input).
	Category string `json:"category,omitempty"`
	// Severity is one of the CRD's enum: critical, high, medium, low, info.
	Severity string `json:"severity,omitempty"`
	// Timestamp is when the result was found.
	Timestamp metav1.Timestamp `json:"timestamp"`
	// Result is one of the CRD's enum: pass, fail, warn, error, skip.
	Result string `json:"result,omitempty"`
	// Scored is true for the rules whose findings fail (flipflop's errors).
	Scored bool `json:"scored,omitempty"`
	// Resources are the objects the finding names.
	Resources []corev1.ObjectReference `json:"resources,omitempty"`
	// Message is the finding's message.
	Message string `json:"message,omitempty"`
	// Properties hold the rest: title, pointer, locations, remediation, ...
	Properties map[string]string `json:"properties,omitempty"`
}
