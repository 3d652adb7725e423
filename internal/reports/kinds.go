package reports

import (
	"fmt"
	"io"

	"github.com/open-policy-agent/opa/v1/ast"
	orv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// API is one of the two report APIs: its group, version and kinds.
type API struct {
	// Format is the output format (-o) and --report-api value that selects it.
	Format string
	// Group and Version are the API's.
	Group, Version string
	// Kind and Resource are the namespaced kind's; ClusterKind and
	// ClusterResource the cluster-scoped one's.
	Kind, Resource, ClusterKind, ClusterResource string
}

// The two report APIs.
var (
	// PolicyReports is wgpolicyk8s.io/v1alpha2 PolicyReport and
	// ClusterPolicyReport, whose CRDs Kyverno and Policy Reporter install.
	PolicyReports = API{
		Format: "policyreport", Group: "wgpolicyk8s.io", Version: "v1alpha2",
		Kind: "PolicyReport", Resource: "policyreports",
		ClusterKind: "ClusterPolicyReport", ClusterResource: "clusterpolicyreports",
	}
	// OpenReports is openreports.io/v1alpha1 Report and ClusterReport, the
	// reports API's successor outside the working group.
	OpenReports = API{
		Format: "openreports", Group: orv1alpha1.SchemeGroupVersion.Group, Version: orv1alpha1.SchemeGroupVersion.Version,
		Kind: "Report", Resource: "reports",
		ClusterKind: "ClusterReport", ClusterResource: "clusterreports",
	}
)

// APIs lists the report APIs.
func APIs() []API { return []API{PolicyReports, OpenReports} }

// GroupVersion is the API's group and version.
func (a API) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: a.Group, Version: a.Version}
}

// String names the API as people do: "wgpolicyk8s.io/v1alpha2 PolicyReports".
func (a API) String() string { return fmt.Sprintf("%s %ss", a.GroupVersion(), a.Kind) }

// GVR is the resource of a report of namespace ns ("" for the cluster-scoped
// kind).
func (a API) GVR(namespaced bool) schema.GroupVersionResource {
	if namespaced {
		return a.GroupVersion().WithResource(a.Resource)
	}
	return a.GroupVersion().WithResource(a.ClusterResource)
}

// meta is the metadata of r's object.
func meta(r Report) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace, Labels: map[string]string{ManagedByLabel: ManagedBy}}
}

// Object is r as an object of the API's kind: a *PolicyReport,
// *ClusterPolicyReport, or *orv1alpha1.Report or *orv1alpha1.ClusterReport.
func (a API) Object(r Report) any {
	tm := metav1.TypeMeta{APIVersion: a.GroupVersion().String(), Kind: a.Kind}
	if r.Namespace == "" {
		tm.Kind = a.ClusterKind
	}
	if a.Group == PolicyReports.Group {
		pr := PolicyReport{TypeMeta: tm, ObjectMeta: meta(r), Summary: r.Summary, Results: r.Results}
		if r.Namespace == "" {
			cpr := ClusterPolicyReport(pr)
			return &cpr
		}
		return &pr
	}
	results := make([]orv1alpha1.ReportResult, len(r.Results))
	for i, x := range r.Results {
		results[i] = orv1alpha1.ReportResult{
			Source: x.Source, Policy: x.Policy, Rule: x.Rule, Category: x.Category,
			Severity: orv1alpha1.ResultSeverity(x.Severity), Timestamp: x.Timestamp,
			Result: orv1alpha1.Result(x.Result), Scored: x.Scored,
			Subjects: x.Resources, Description: x.Message, Properties: x.Properties,
		}
	}
	sum := orv1alpha1.ReportSummary{Pass: r.Summary.Pass, Fail: r.Summary.Fail, Warn: r.Summary.Warn, Error: r.Summary.Error, Skip: r.Summary.Skip}
	if r.Namespace == "" {
		return &orv1alpha1.ClusterReport{TypeMeta: tm, ObjectMeta: meta(r), Source: Source, Summary: sum, Results: results}
	}
	return &orv1alpha1.Report{TypeMeta: tm, ObjectMeta: meta(r), Source: Source, Summary: sum, Results: results}
}

// Unstructured is r as an object of the API's kind, for a dynamic client.
func (a API) Unstructured(r Report) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a.Object(r))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", a.Kind, r.Name, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// WriteYAML writes reports as a YAML stream of the API's objects, each
// document starting with "---": what `kubectl apply -f` reads.
func (a API) WriteYAML(w io.Writer, reports []Report) error {
	for _, r := range reports {
		b, err := yaml.Marshal(a.Object(r))
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}

// UIDs reads the UIDs (metadata.uid) of objects, for Options.UIDs: pass
// the objects read from the cluster, whose UIDs the API server gave.
func UIDs(objs []evaluator.Object) map[Ref]string {
	out := map[Ref]string{}
	for _, o := range objs {
		obj, ok := o.Value.(ast.Object)
		if !ok {
			continue
		}
		md := obj.Get(ast.StringTerm("metadata"))
		if md == nil {
			continue
		}
		mdo, ok := md.Value.(ast.Object)
		if !ok {
			continue
		}
		if uid := mdo.Get(ast.StringTerm("uid")); uid != nil {
			if s, ok := uid.Value.(ast.String); ok && s != "" {
				out[RefOf(o.APIVersion, o.Kind, o.Namespace, o.Name)] = string(s)
			}
		}
	}
	return out
}
