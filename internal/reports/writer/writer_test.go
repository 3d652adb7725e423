package writer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/kubetest"
	"github.com/flipflop-dev/flipflop/internal/reports"
	"github.com/flipflop-dev/flipflop/internal/reports/writer"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// kube is a real API server that starts with no CRD: the tests install the
// released report CRDs as they go.
var kube = kubetest.Shared{Options: kubetest.Options{CRDs: []string{}}}

func TestMain(m *testing.M) {
	code := m.Run()
	kube.Stop()
	os.Exit(code)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// install installs the released CRDs of an API (upstream) and waits until
// the API server serves it.
func install(t *testing.T, env *kubetest.Env, api reports.API) {
	t.Helper()
	crds := upstream.PolicyReportCRDs
	if api == reports.OpenReports {
		crds = upstream.OpenReportsCRDs
	}
	files, err := crds()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.ApplyFiles(ctx(t), files...); err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		l, err := disc.ServerResourcesForGroupVersion(api.GroupVersion().String())
		if err == nil && len(l.APIResources) >= 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not served: %v", api, err)
		}
	}
}

func stage(ns, name string) evaluator.Resource {
	return evaluator.Resource{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: ns, Name: name}
}

func finding(rule, severity string, res ...evaluator.Resource) evaluator.Finding {
	return evaluator.Finding{Rule: rule, Severity: severity, Title: rule, Message: rule + " on " + res[0].Name, Resources: res}
}

var rules = []evaluator.Rule{
	{ID: "shared-branch-contradiction", Severity: "error", Title: "Several Stages pin one floating pointer", Admission: true},
	{ID: "shared-write-branch", Severity: "warning", Title: "Several Stages push to one branch"},
}

func build(at time.Time, fs ...evaluator.Finding) []reports.Report {
	return reports.Build(&evaluator.Report{Findings: fs}, reports.Options{Rules: rules, Now: at})
}

func ensureNamespace(t *testing.T, env *kubetest.Env, ns string) {
	t.Helper()
	// A throwaway ConfigMap makes Apply create the namespace.
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "ns-marker", "namespace": ns}}}
	if err := env.Apply(ctx(t), cm); err != nil {
		t.Fatal(err)
	}
}

// list is every report of an API in the cluster, "namespace/name" sorted.
func list(t *testing.T, env *kubetest.Env, api reports.API) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, namespaced := range []bool{true, false} {
		l, err := env.Dynamic().Resource(api.GVR(namespaced)).List(ctx(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			out[l.Items[i].GetNamespace()+"/"+l.Items[i].GetName()] = &l.Items[i]
		}
	}
	return out
}

func keys(m map[string]*unstructured.Unstructured) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// foreign is a report of another source (Kyverno's shape: a PolicyReport per
// resource, named by its UID), which flipflop must never touch.
func foreign(api reports.API, ns, name string) *unstructured.Unstructured {
	kind := api.Kind
	if ns == "" {
		kind = api.ClusterKind
	}
	md := map[string]any{"name": name, "labels": map[string]any{reports.ManagedByLabel: "kyverno"}}
	if ns != "" {
		md["namespace"] = ns
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": api.GroupVersion().String(), "kind": kind, "metadata": md,
		"results": []any{map[string]any{"policy": "require-labels", "result": "fail", "source": "kyverno",
			"timestamp": map[string]any{"seconds": int64(1), "nanos": int64(0)}}},
		"summary": map[string]any{"fail": int64(1)},
	}}
}

func outcome(outs []writer.Outcome) string {
	var s []string
	for _, o := range outs {
		s = append(s, fmt.Sprintf("%s written %d unchanged %d deleted %d", o.API.Format, o.Written, o.Unchanged, o.Deleted))
	}
	return strings.Join(s, "; ")
}

// One cluster's life: no CRD (nothing written, a clear error), the
// wgpolicyk8s.io CRDs (PolicyReports written, rewritten in place, stale ones
// deleted, Kyverno's untouched), then the OpenReports CRDs as well (both
// written).
func TestWriteLifecycle(t *testing.T) {
	env := kube.Env(t)
	for _, ns := range []string{"acme", "argocd", "web"} {
		ensureNamespace(t, env, ns)
	}
	t0 := time.Unix(1798761600, 0)
	first := build(t0,
		finding("shared-branch-contradiction", "error", stage("acme", "dev"), stage("argocd", "dev")),
		finding("shared-write-branch", "warning", stage("web", "a"), stage("web", "b")),
	)

	// No CRD: an error that says what to install, and nothing is written.
	_, err := writer.Write(ctx(t), env.Config, first, writer.Options{DeleteStale: true})
	var werr *writer.Error
	if !errors.As(err, &werr) || !strings.Contains(err.Error(), "serves neither wgpolicyk8s.io/v1alpha2 PolicyReports nor openreports.io/v1alpha1 Reports") ||
		!strings.Contains(err.Error(), "https://raw.githubusercontent.com/kyverno/kyverno/v1.19.0/config/crds/policyreport/wgpolicyk8s.io_policyreports.yaml") {
		t.Fatalf("no CRD: %v", err)
	}

	install(t, env, reports.PolicyReports)
	// OpenReports asked for by name, not served: an error naming it.
	_, err = writer.Write(ctx(t), env.Config, first, writer.Options{APIs: []reports.API{reports.OpenReports}})
	if err == nil || !strings.Contains(err.Error(), "does not serve openreports.io/v1alpha1 Reports") {
		t.Fatalf("openreports not served: %v", err)
	}

	// Kyverno's reports, in a namespace flipflop writes to and cluster-wide.
	kyverno := []*unstructured.Unstructured{foreign(reports.PolicyReports, "acme", "8d2c6f1e-uid"), foreign(reports.PolicyReports, "", "4ab1-uid")}
	if err := env.Apply(ctx(t), kyverno...); err != nil {
		t.Fatal(err)
	}

	outs, err := writer.Write(ctx(t), env.Config, first, writer.Options{DeleteStale: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcome(outs); got != "policyreport written 4 unchanged 0 deleted 0" {
		t.Errorf("first write: %s", got)
	}
	got := list(t, env, reports.PolicyReports)
	if k := keys(got); !slices.Equal(k, []string{"/4ab1-uid", "/flipflop", "acme/8d2c6f1e-uid", "acme/flipflop", "argocd/flipflop", "web/flipflop"}) {
		t.Fatalf("reports %q", k)
	}
	// What the API server holds is what was built, nothing pruned.
	for _, r := range first {
		u, _ := reports.PolicyReports.Unstructured(r)
		have := got[r.Namespace+"/"+r.Name]
		for _, f := range []string{"results", "summary"} {
			a, _ := json.Marshal(have.Object[f])
			b, _ := json.Marshal(u.Object[f])
			if string(a) != string(b) {
				t.Errorf("%s/%s %s:\n%s\nwant\n%s", r.Namespace, r.Name, f, a, b)
			}
		}
		if have.GetLabels()[reports.ManagedByLabel] != "flipflop" {
			t.Errorf("%s/%s labels %v", r.Namespace, r.Name, have.GetLabels())
		}
		if mf := have.GetManagedFields(); len(mf) != 1 || mf[0].Manager != writer.FieldManager {
			t.Errorf("%s/%s managed fields %v", r.Namespace, r.Name, mf)
		}
	}
	versions := map[string]string{}
	for k, u := range got {
		versions[k] = u.GetResourceVersion()
	}

	// The same findings an hour later: nothing is rewritten, and the results
	// keep the time they were found.
	again := build(t0.Add(time.Hour),
		finding("shared-branch-contradiction", "error", stage("acme", "dev"), stage("argocd", "dev")),
		finding("shared-write-branch", "warning", stage("web", "a"), stage("web", "b")),
	)
	outs, err = writer.Write(ctx(t), env.Config, again, writer.Options{DeleteStale: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcome(outs); got != "policyreport written 0 unchanged 4 deleted 0" {
		t.Errorf("same findings: %s", got)
	}
	got = list(t, env, reports.PolicyReports)
	for _, k := range []string{"/flipflop", "acme/flipflop", "argocd/flipflop", "web/flipflop"} {
		if got[k].GetResourceVersion() != versions[k] {
			t.Errorf("%s was rewritten", k)
		}
	}
	ts, _, _ := unstructured.NestedInt64(got["acme/flipflop"].Object["results"].([]any)[0].(map[string]any), "timestamp", "seconds")
	if ts != t0.Unix() {
		t.Errorf("a result found again has timestamp %d, want the first run's %d", ts, t0.Unix())
	}

	// Fewer findings: the web report is gone, argocd's too; acme's holds a
	// new result with the new time; Kyverno's are untouched.
	t2 := t0.Add(2 * time.Hour)
	fewer := build(t2, finding("shared-branch-contradiction", "error", stage("acme", "qa")))
	outs, err = writer.Write(ctx(t), env.Config, fewer, writer.Options{DeleteStale: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcome(outs); got != "policyreport written 2 unchanged 0 deleted 2" {
		t.Errorf("fewer findings: %s", got)
	}
	got = list(t, env, reports.PolicyReports)
	if k := keys(got); !slices.Equal(k, []string{"/4ab1-uid", "/flipflop", "acme/8d2c6f1e-uid", "acme/flipflop"}) {
		t.Errorf("reports after the rewrite %q", k)
	}
	for _, u := range kyverno {
		have := got[u.GetNamespace()+"/"+u.GetName()]
		if have.GetResourceVersion() != versions[u.GetNamespace()+"/"+u.GetName()] {
			t.Errorf("Kyverno's %s/%s was changed", u.GetNamespace(), u.GetName())
		}
	}
	res := got["acme/flipflop"].Object["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("acme: %v", res)
	}
	if ts, _, _ := unstructured.NestedInt64(res[0].(map[string]any), "timestamp", "seconds"); ts != t2.Unix() {
		t.Errorf("a new result has timestamp %d, want %d", ts, t2.Unix())
	}

	// Without DeleteStale (a run that could not read everything), nothing
	// is deleted.
	outs, err = writer.Write(ctx(t), env.Config, build(t2), writer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcome(outs); got != "policyreport written 1 unchanged 0 deleted 0" {
		t.Errorf("without DeleteStale: %s", got)
	}
	if _, ok := list(t, env, reports.PolicyReports)["acme/flipflop"]; !ok {
		t.Error("acme's report was deleted without DeleteStale")
	}

	// Results that need more than one object: flipflop, flipflop-2, ...;
	// and when they fit again, the extra ones go.
	var many []evaluator.Finding
	for i := range 30 {
		f := finding("shared-write-branch", "warning", stage("web", fmt.Sprintf("s%02d", i)))
		f.Message = strings.Repeat("long ", 100)
		many = append(many, f)
	}
	big := reports.Build(&evaluator.Report{Findings: many}, reports.Options{Rules: rules, Now: t2, MaxBytes: 4000})
	if _, err := writer.Write(ctx(t), env.Config, big, writer.Options{DeleteStale: true}); err != nil {
		t.Fatal(err)
	}
	var web []string
	for _, k := range keys(list(t, env, reports.PolicyReports)) {
		if strings.HasPrefix(k, "web/") {
			web = append(web, k)
		}
	}
	if len(web) < 3 || web[0] != "web/flipflop" || web[1] != "web/flipflop-2" {
		t.Errorf("web's reports %q", web)
	}
	if _, err := writer.Write(ctx(t), env.Config, build(t2, many[0]), writer.Options{DeleteStale: true}); err != nil {
		t.Fatal(err)
	}
	if k := keys(list(t, env, reports.PolicyReports)); !slices.Equal(k, []string{"/4ab1-uid", "/flipflop", "acme/8d2c6f1e-uid", "web/flipflop"}) {
		t.Errorf("after shrinking %q", k)
	}

	// OpenReports installed too: both APIs are written, the same results.
	install(t, env, reports.OpenReports)
	orKyverno := foreign(reports.OpenReports, "web", "5e1f-uid")
	if err := env.Apply(ctx(t), orKyverno); err != nil {
		t.Fatal(err)
	}
	outs, err = writer.Write(ctx(t), env.Config, first, writer.Options{DeleteStale: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcome(outs); got != "policyreport written 4 unchanged 0 deleted 0; openreports written 4 unchanged 0 deleted 0" {
		t.Errorf("both APIs: %s", got)
	}
	or := list(t, env, reports.OpenReports)
	if k := keys(or); !slices.Equal(k, []string{"/flipflop", "acme/flipflop", "argocd/flipflop", "web/5e1f-uid", "web/flipflop"}) {
		t.Errorf("OpenReports %q", k)
	}
	if src, _, _ := unstructured.NestedString(or["acme/flipflop"].Object, "source"); src != "flipflop" {
		t.Errorf("OpenReports source %q", src)
	}
	// Only OpenReports, by name.
	outs, err = writer.Write(ctx(t), env.Config, fewer, writer.Options{APIs: []reports.API{reports.OpenReports}, DeleteStale: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcome(outs); got != "openreports written 2 unchanged 0 deleted 2" {
		t.Errorf("OpenReports alone: %s", got)
	}
	if _, ok := list(t, env, reports.OpenReports)["web/5e1f-uid"]; !ok {
		t.Error("another source's Report was deleted")
	}
}

// The shipped RBAC (deploy/rbac.yaml's flipflop-report-writer) is enough to
// write, rewrite and delete, and grants nothing on other kinds; without it
// the error says what to grant.
func TestShippedWriterRBAC(t *testing.T) {
	env := kube.Env(t)
	install(t, env, reports.PolicyReports)
	install(t, env, reports.OpenReports)
	root, _ := kubetest.RepoRoot()
	if err := env.ApplyFiles(ctx(t), filepath.Join(root, "deploy", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	ensureNamespace(t, env, "rbac-a")
	ensureNamespace(t, env, "rbac-b")
	bind := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "writer-auditor"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "flipflop-report-writer"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "auditor"}}}}
	if err := env.Apply(ctx(t), bind); err != nil {
		t.Fatal(err)
	}
	kc, err := env.AddUser("auditor")
	if err != nil {
		t.Fatal(err)
	}
	cfg := userConfig(t, kc)
	at := time.Unix(1798761600, 0)
	two := build(at, finding("shared-write-branch", "warning", stage("rbac-a", "x")), finding("shared-write-branch", "warning", stage("rbac-b", "y")))
	// RBAC takes a moment to reach the authorizer's cache.
	var outs []writer.Outcome
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		outs, err = writer.Write(ctx(t), cfg, two, writer.Options{DeleteStale: true})
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the shipped role cannot write: %v", err)
	}
	if len(outs) != 2 {
		t.Errorf("outcomes %s", outcome(outs))
	}
	if _, err := writer.Write(ctx(t), cfg, build(at, finding("shared-write-branch", "warning", stage("rbac-a", "x"))), writer.Options{DeleteStale: true}); err != nil {
		t.Fatalf("the shipped role cannot rewrite and delete: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).List(ctx(t), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the writer role lists ConfigMaps: %v", err)
	}

	// A user without the role: exit-2 material, naming what to grant.
	kc, err = env.AddUser("nobody")
	if err != nil {
		t.Fatal(err)
	}
	_, err = writer.Write(ctx(t), userConfig(t, kc), two, writer.Options{DeleteStale: true})
	if err == nil || !strings.Contains(err.Error(), "cannot list flipflop's policyreports.wgpolicyk8s.io") ||
		!strings.Contains(err.Error(), "grant list on policyreports.wgpolicyk8s.io (deploy/rbac.yaml, ClusterRole flipflop-report-writer)") {
		t.Errorf("without the role: %v", err)
	}
}

// An API server that cannot be reached: one error, nothing else tried.
func TestWriteUnreachable(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1", Timeout: 2 * time.Second}
	_, err := writer.Write(ctx(t), cfg, build(time.Now()), writer.Options{})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the API server at https://127.0.0.1:1") || !strings.Contains(err.Error(), "no report was written") {
		t.Errorf("unreachable: %v", err)
	}
}

func userConfig(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
