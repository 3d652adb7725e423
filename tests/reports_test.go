package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/rest"

	"github.com/flipflop-dev/flipflop/internal/kubetest"
)

// reportsCluster starts an API server of its own with Kargo's, Argo CD's and
// the report CRDs (Kyverno's and reports-api's releases), stopped when the test ends: the auditor's
// reports describe the whole estate, so no other test's objects may be there.
func reportsCluster(t *testing.T) *kubetest.Env {
	t.Helper()
	env, err := kubetest.Start(kubetest.Options{CRDs: []string{kubetest.KargoCRDs, kubetest.ArgoCDCRDs, kubetest.ReportCRDs}})
	if errors.Is(err, kubetest.ErrNoBinaries) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	return env
}

var (
	policyReports        = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "policyreports"}
	clusterPolicyReports = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "clusterpolicyreports"}
	openReports          = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
)

// bindUser binds ClusterRoles to a user and returns the user's kubeconfig.
func bindUser(t *testing.T, env *kubetest.Env, user string, roles ...string) string {
	t.Helper()
	for _, role := range roles {
		applyObjs(t, env, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
			"metadata": map[string]any{"name": role + "-" + user},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
			"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}}}})
	}
	kc, err := env.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// runAuthorized runs bin in the repository root as runCmd does, again while
// it exits 2 for up to 30 s: RBAC just granted reaches the authorizer's
// cache within a moment.
func runAuthorized(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		stdout, stderr, code := runCmd(t, "..", bin, args...)
		if code != 2 || time.Now().After(deadline) {
			return stdout, stderr, code
		}
	}
}

// resultsOf lists "policy=result" of a report's results.
func resultsOf(u *unstructured.Unstructured) []string {
	var out []string
	rs, _, _ := unstructured.NestedSlice(u.Object, "results")
	for _, r := range rs {
		m := r.(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v", m["policy"], m["result"]))
	}
	return out
}

// The auditor: check --cluster --write-reports as the ServiceAccount's roles
// allow (deploy/rbac.yaml) writes a PolicyReport (and an OpenReports Report)
// per namespace with findings and the cluster-scoped ones, exits as the
// findings say; after the fix, the stale reports are gone. Without the
// writer role: exit 2 and what to grant.
func TestAuditorWritesReports(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	env := reportsCluster(t)
	applyObjs(t, env, example(t, "contradiction", "shop", "argocd")...)
	if err := env.ApplyFiles(kctx(t), "../deploy/rbac.yaml"); err != nil {
		t.Fatal(err)
	}
	kc := bindUser(t, env, "auditor", "flipflop-reader", "flipflop-report-writer")
	args := []string{"check", "--cluster", "--kubeconfig", kc, "--write-reports", "-o", "json"}
	stdout, stderr, code := runAuthorized(t, bin, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (findings; the reports written)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "wgpolicyk8s.io/v1alpha2 PolicyReports: 3 written, 0 unchanged, 0 deleted") ||
		!strings.Contains(stderr, "openreports.io/v1alpha1 Reports: 3 written, 0 unchanged, 0 deleted") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if len(parseReport(t, stdout).Findings) == 0 {
		t.Error("the JSON report has no finding")
	}
	dyn := env.Dynamic()
	pr, err := dyn.Resource(policyReports).Namespace("shop").Get(kctx(t), "flipflop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(resultsOf(pr), " "); !strings.Contains(got, "shared-branch-contradiction=fail") {
		t.Errorf("shop's PolicyReport: %s", got)
	}
	// The resources carry the live objects' UIDs.
	stage, err := dyn.Resource(schema.GroupVersionResource{Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "stages"}).Namespace("shop").Get(kctx(t), "dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, _, _ := unstructured.NestedSlice(pr.Object, "results")
	found := false
	for _, r := range rs {
		res, _, _ := unstructured.NestedSlice(r.(map[string]any), "resources")
		for _, o := range res {
			m := o.(map[string]any)
			if m["kind"] == "Stage" && m["name"] == "dev" {
				found = true
				if m["uid"] != string(stage.GetUID()) {
					t.Errorf("Stage shop/dev: uid %v, want %s", m["uid"], stage.GetUID())
				}
			}
		}
	}
	if !found {
		t.Error("no result names Stage shop/dev")
	}
	for _, ns := range []string{"argocd"} {
		if _, err := dyn.Resource(policyReports).Namespace(ns).Get(kctx(t), "flipflop", metav1.GetOptions{}); err != nil {
			t.Errorf("%s: %v", ns, err)
		}
	}
	if _, err := dyn.Resource(openReports).Namespace("shop").Get(kctx(t), "flipflop", metav1.GetOptions{}); err != nil {
		t.Errorf("the OpenReports Report: %v", err)
	}
	t.Logf("kubectl get policyreport -A:\n%s", getTable(t, env.Config, "/apis/wgpolicyk8s.io/v1alpha2/policyreports", true))
	t.Logf("kubectl get clusterpolicyreport:\n%s", getTable(t, env.Config, "/apis/wgpolicyk8s.io/v1alpha2/clusterpolicyreports", false))

	// Run again: nothing changed, nothing written.
	_, stderr, code = runCmd(t, "..", bin, args...)
	if code != 1 || !strings.Contains(stderr, "PolicyReports: 0 written, 3 unchanged, 0 deleted") {
		t.Errorf("second run: exit %d\n%s", code, stderr)
	}

	// The fix: the contradiction's results go (the Argo CD namespace's
	// report with them); the Stages still share a branch (a warning), so
	// the project's report keeps that one; the cluster-scoped one stays.
	applyObjs(t, env, example(t, "fix-update-target-revision", "shop", "argocd")...)
	stdout, stderr, code = runCmd(t, "..", bin, args...)
	if code != 0 {
		t.Fatalf("after the fix: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "PolicyReports: 2 written, 0 unchanged, 1 deleted") {
		t.Errorf("after the fix:\n%s", stderr)
	}
	if _, err := dyn.Resource(policyReports).Namespace("argocd").Get(kctx(t), "flipflop", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("argocd's stale report: %v", err)
	}
	pr, err = dyn.Resource(policyReports).Namespace("shop").Get(kctx(t), "flipflop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(resultsOf(pr), " "); got != "shared-write-branch=warn" {
		t.Errorf("shop's report after the fix: %s", got)
	}
	cpr, err := dyn.Resource(clusterPolicyReports).Get(kctx(t), "flipflop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(resultsOf(cpr), " "); !strings.Contains(got, "shared-branch-contradiction=pass") {
		t.Errorf("the ClusterPolicyReport after the fix: %s", got)
	}

	// Only the reader role: the check runs, the writing fails: exit 2.
	kc = bindUser(t, env, "reader", "flipflop-reader")
	stdout, stderr, code = runCmd(t, "..", bin, "check", "--cluster", "--kubeconfig", kc, "--write-reports")
	if code != 2 || !strings.Contains(stderr, "flipflop: --write-reports: writing the reports failed: cannot list flipflop's policyreports.wgpolicyk8s.io") ||
		!strings.Contains(stderr, "ClusterRole flipflop-report-writer") {
		t.Errorf("without the writer role: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// getTable is what kubectl get prints for a resource: the API server's
// table of it (the CRD's printer columns).
func getTable(t *testing.T, cfg *rest.Config, path string, allNamespaces bool) string {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := newTableRequest(kctx(t), strings.TrimSuffix(cfg.Host, "/")+path)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return formatTable(t, resp.Body, allNamespaces)
}

func newTableRequest(ctx context.Context, url string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	return req, nil
}

// formatTable prints a table as kubectl get does: with -A (allNamespaces) a
// NAMESPACE column, then the columns of priority 0, upper-cased, dates as
// ages.
func formatTable(t *testing.T, body io.Reader, allNamespaces bool) string {
	t.Helper()
	var tab metav1.Table
	raw, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &tab); err != nil {
		t.Fatalf("%v\n%.500s", err, raw)
	}
	var header []string
	if allNamespaces {
		header = append(header, "NAMESPACE")
	}
	var cols []int
	for i, c := range tab.ColumnDefinitions {
		if c.Priority == 0 {
			cols = append(cols, i)
			header = append(header, strings.ToUpper(c.Name))
		}
	}
	rows := [][]string{header}
	for _, r := range tab.Rows {
		var md struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(r.Object.Raw, &md)
		var row []string
		if allNamespaces {
			row = append(row, md.Metadata.Namespace)
		}
		for _, i := range cols {
			cell := fmt.Sprint(r.Cells[i])
			if r.Cells[i] == nil {
				cell = ""
			}
			if tab.ColumnDefinitions[i].Type == "date" {
				if at, err := time.Parse(time.RFC3339, cell); err == nil {
					cell = duration.HumanDuration(time.Since(at))
				}
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	width := make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i < len(r)-1 {
				fmt.Fprintf(&b, "%-*s   ", width[i], c)
			} else {
				b.WriteString(c)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
