package cluster_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
	"github.com/flipflop-dev/flipflop/internal/kubetest"
)

// kube is a real kube-apiserver with every CRD flipflop reads, started once
// for the package; noKargo is a second one with Argo CD's CRDs only.
var (
	kube    kubetest.Shared
	noKargo = kubetest.Shared{Options: kubetest.Options{CRDs: []string{kubetest.ArgoCDCRDs}}}
)

func TestMain(m *testing.M) {
	code := m.Run()
	kube.Stop()
	noKargo.Stop()
	os.Exit(code)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// stageSpec is the smallest Stage spec Kargo's CRD accepts.
func stageSpec() map[string]any {
	return map[string]any{"requestedFreight": []any{map[string]any{
		"origin":  map[string]any{"kind": "Warehouse", "name": "app"},
		"sources": map[string]any{"direct": true},
	}}}
}

// taskSpec is a PromotionTask spec with the one step Kargo's CRD asks for at least.
func taskSpec() map[string]any {
	return map[string]any{"steps": []any{map[string]any{"uses": "git-clear", "config": map[string]any{"path": "./out"}}}}
}

// appSpec is the smallest Application spec Argo CD's CRD accepts.
func appSpec() map[string]any {
	return map[string]any{
		"project":     "default",
		"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "default"},
	}
}

func names(objs []evaluator.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name))
	}
	slices.Sort(out)
	return out
}

func apply(t *testing.T, env *kubetest.Env, objs ...*unstructured.Unstructured) {
	t.Helper()
	if err := env.Apply(ctx(t), objs...); err != nil {
		t.Fatal(err)
	}
}

func applyFiles(t *testing.T, env *kubetest.Env, paths ...string) {
	t.Helper()
	if err := env.ApplyFiles(ctx(t), paths...); err != nil {
		t.Fatal(err)
	}
}

func mustContain(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q in %v", w, got)
		}
	}
}

// Every kind is read, from the namespaces the options select, with the
// cluster label as path and line 0, managed fields dropped, and the status
// kept only when the options ask for it (diagnose).
func TestReadKindsAndNamespaces(t *testing.T) {
	env := kube.Env(t)
	applyFiles(t, env, "../../examples/contradiction/argocd.yaml", "../../examples/contradiction/kargo.yaml")
	apply(t, env,
		obj("argoproj.io/v1alpha1", "ApplicationSet", "argocd", "envs", map[string]any{"spec": map[string]any{
			"generators": []any{}, "template": map[string]any{"metadata": map[string]any{}, "spec": appSpec()},
		}}),
		obj("argoproj.io/v1alpha1", "Application", "team-apps", "elsewhere", map[string]any{"spec": appSpec()}),
		obj("kargo.akuity.io/v1alpha1", "PromotionTask", "acme", "deploy", map[string]any{"spec": taskSpec()}),
		obj("kargo.akuity.io/v1alpha1", "ClusterPromotionTask", "", "shared", map[string]any{"spec": taskSpec()}),
		obj("kargo.akuity.io/v1alpha1", "Project", "", "other", nil),
		obj("kargo.akuity.io/v1alpha1", "Stage", "other", "prod", map[string]any{"spec": stageSpec()}),
		obj("v1", "ConfigMap", "acme", "not-read", map[string]any{"data": map[string]any{"a": "b"}}),
	)
	if err := env.SetStatus(ctx(t), "kargo.akuity.io/v1alpha1", "Stage", "acme", "dev", map[string]any{"health": map[string]any{"status": "Healthy"}}); err != nil {
		t.Fatal(err)
	}

	objs, errs := cluster.Read(ctx(t), env.Config, cluster.Options{Label: "cluster:test"})
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	for _, o := range objs {
		if o.Kind == "Stage" && o.Name == "dev" && strings.Contains(o.Value.String(), `"Healthy"`) {
			t.Errorf("Stage acme/dev kept its status without KeepStatus: %s", o.Value)
		}
	}
	objs, errs = cluster.Read(ctx(t), env.Config, cluster.Options{Label: "cluster:test", KeepStatus: true})
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	got := names(objs)
	mustContain(t, got,
		"Application argocd/dev", "Application argocd/qa", "ApplicationSet argocd/envs",
		"Stage acme/dev", "Stage acme/qa", "Stage other/prod", "Warehouse acme/app", "PromotionTask acme/deploy",
		"ClusterPromotionTask /shared", "Project /acme", "Project /other")
	if slices.Contains(got, "Application team-apps/elsewhere") {
		t.Error("Applications outside --argocd-namespace were read without -A")
	}
	for _, o := range objs {
		if o.Kind == "ConfigMap" {
			t.Error("read a ConfigMap")
		}
		if o.Path != "cluster:test" || o.Line != 0 {
			t.Errorf("%s/%s: path %q line %d", o.Kind, o.Name, o.Path, o.Line)
		}
		s := o.Value.String()
		if strings.Contains(s, "managedFields") {
			t.Errorf("%s/%s keeps managedFields", o.Kind, o.Name)
		}
		if o.Kind == "Stage" && o.Name == "dev" && !strings.Contains(s, `"Healthy"`) {
			t.Errorf("Stage acme/dev lost its status: %s", s)
		}
	}

	// -n acme: Kargo objects of acme only, and the Project named acme.
	objs, errs = cluster.Read(ctx(t), env.Config, cluster.Options{Namespaces: []string{"acme", "no-such-project"}})
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	got = names(objs)
	mustContain(t, got, "Stage acme/dev", "Project /acme", "Application argocd/dev", "ClusterPromotionTask /shared")
	for _, bad := range []string{"Stage other/prod", "Project /other"} {
		if slices.Contains(got, bad) {
			t.Errorf("-n acme read %s", bad)
		}
	}

	// -A: Applications from every namespace; several Argo CD namespaces.
	objs, _ = cluster.Read(ctx(t), env.Config, cluster.Options{AllNamespaces: true})
	mustContain(t, names(objs), "Application team-apps/elsewhere", "Application argocd/dev")
	objs, _ = cluster.Read(ctx(t), env.Config, cluster.Options{ArgoCDNamespaces: []string{"team-apps", "argocd"}})
	mustContain(t, names(objs), "Application team-apps/elsewhere", "Application argocd/dev")
}

// countingTransport counts list requests for one resource path and can hold
// the pages after the first until the request's deadline.
type countingTransport struct {
	next       http.RoundTripper
	path       string
	lists      atomic.Int32
	stallPages bool
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path == c.path {
		c.lists.Add(1)
		if c.stallPages && req.URL.Query().Get("continue") != "" {
			<-req.Context().Done()
			return nil, req.Context().Err()
		}
	}
	return c.next.RoundTrip(req)
}

func withTransport(cfg *rest.Config, ct *countingTransport) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { ct.next = rt; return ct })
	return cfg
}

func manyStages(t *testing.T, env *kubetest.Env, ns string, n int) {
	t.Helper()
	var objs []*unstructured.Unstructured
	for i := range n {
		objs = append(objs, obj("kargo.akuity.io/v1alpha1", "Stage", ns, fmt.Sprintf("s%02d", i), map[string]any{"spec": stageSpec()}))
	}
	apply(t, env, objs...)
}

// More objects than one page: every page is read.
func TestPagination(t *testing.T) {
	env := kube.Env(t)
	manyStages(t, env, "paged", 25)
	ct := &countingTransport{path: "/apis/kargo.akuity.io/v1alpha1/namespaces/paged/stages"}
	objs, errs := cluster.Read(ctx(t), withTransport(env.Config, ct), cluster.Options{Namespaces: []string{"paged"}, ChunkSize: 10})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	n := 0
	for _, o := range objs {
		if o.Kind == "Stage" {
			n++
		}
	}
	if n != 25 || ct.lists.Load() != 3 {
		t.Errorf("read %d Stages in %d requests, want 25 in 3", n, ct.lists.Load())
	}
}

// A timeout on the second page: the first page is kept, and the error says
// what was cut short.
func TestTimeoutMidList(t *testing.T) {
	env := kube.Env(t)
	manyStages(t, env, "slow", 25)
	ct := &countingTransport{path: "/apis/kargo.akuity.io/v1alpha1/namespaces/slow/stages", stallPages: true}
	cfg := withTransport(env.Config, ct)
	cfg.Timeout = 500 * time.Millisecond
	objs, errs := cluster.Read(ctx(t), cfg, cluster.Options{Namespaces: []string{"slow"}, ChunkSize: 10})
	if len(errs) != 1 {
		t.Fatalf("errors: %v", errs)
	}
	e := errs[0]
	if e.Path != "cluster: stages.kargo.akuity.io in namespace slow" || !strings.Contains(e.Message, "timed out") ||
		!strings.Contains(e.Message, "after 1 page(s), 10 object(s)") || !strings.Contains(e.Message, "--request-timeout") {
		t.Errorf("error: %v", e)
	}
	n := 0
	for _, o := range objs {
		if o.Kind == "Stage" {
			n++
		}
	}
	if n != 10 {
		t.Errorf("kept %d Stages of the first page, want 10", n)
	}
}

func clusterRole(name string, rules ...map[string]any) *unstructured.Unstructured {
	var rs []any
	for _, r := range rules {
		rs = append(rs, r)
	}
	return obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", name, map[string]any{"rules": rs})
}

func bindUser(role, user string) *unstructured.Unstructured {
	return obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", role+"-"+user, map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	})
}

func userConfig(t *testing.T, env *kubetest.Env, name string) *rest.Config {
	t.Helper()
	kc, err := env.AddUser(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := cluster.Config(cluster.ConfigOptions{Kubeconfig: kc})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A user whose RBAC forbids Stages gets a real 403: one error naming Stages,
// and everything else is read.
func TestForbiddenStages(t *testing.T) {
	env := kube.Env(t)
	applyFiles(t, env, "../../examples/contradiction/argocd.yaml", "../../examples/contradiction/kargo.yaml")
	apply(t, env,
		clusterRole("no-stages",
			map[string]any{"apiGroups": []any{"argoproj.io"}, "resources": []any{"applications", "applicationsets"}, "verbs": []any{"get", "list"}},
			map[string]any{"apiGroups": []any{"kargo.akuity.io"}, "resources": []any{"promotiontasks", "clusterpromotiontasks", "warehouses", "projects"}, "verbs": []any{"get", "list"}}),
		bindUser("no-stages", "nostages"))
	cfg := userConfig(t, env, "nostages")
	objs, errs := cluster.Read(ctx(t), cfg, cluster.Options{})
	if len(errs) != 1 {
		t.Fatalf("errors: %v", errs)
	}
	e := errs[0]
	if e.Path != "cluster: stages.kargo.akuity.io in all namespaces" || !strings.Contains(e.Message, "forbidden (403)") ||
		!strings.Contains(e.Message, `"nostages"`) || !strings.Contains(e.Message, "Stages were not read") || !strings.Contains(e.Message, "-n") {
		t.Errorf("error: %v", e)
	}
	got := names(objs)
	mustContain(t, got, "Application argocd/dev", "Warehouse acme/app")
	for _, n := range got {
		if strings.HasPrefix(n, "Stage ") {
			t.Errorf("read %s", n)
		}
	}
	// -n: the same, per namespace.
	_, errs = cluster.Read(ctx(t), cfg, cluster.Options{Namespaces: []string{"acme"}})
	if len(errs) != 1 || errs[0].Path != "cluster: stages.kargo.akuity.io in namespace acme" {
		t.Errorf("errors: %v", errs)
	}
}

// The shipped ClusterRole is enough for everything flipflop reads, and grants
// nothing more (not even Secrets).
func TestShippedRBAC(t *testing.T) {
	env := kube.Env(t)
	b, err := os.ReadFile("../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := kubetest.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var role *unstructured.Unstructured
	for _, d := range docs {
		if d.GetKind() == "ClusterRole" && d.GetName() == "flipflop-reader" {
			role = d
		}
	}
	if role == nil {
		t.Fatal("deploy/rbac.yaml has no ClusterRole flipflop-reader")
	}
	apply(t, env, role, bindUser(role.GetName(), "reader"))
	applyFiles(t, env, "../../deploy/rbac.yaml") // the ServiceAccount, Namespace and binding apply too
	cfg := userConfig(t, env, "reader")
	objs, errs := cluster.Read(ctx(t), cfg, cluster.Options{AllNamespaces: true})
	if len(errs) > 0 {
		t.Fatalf("the shipped ClusterRole is not enough: %v", errs)
	}
	if len(objs) == 0 {
		t.Error("read nothing")
	}
	// Exactly the kinds flipflop reads, get and list only.
	want := map[string]bool{}
	for _, r := range cluster.Resources {
		want[r.Group+"/"+r.Resource] = true
	}
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	got := map[string]bool{}
	for _, r := range rules {
		rm := r.(map[string]any)
		verbs, _, _ := unstructured.NestedStringSlice(rm, "verbs")
		if slices.Sort(verbs); !slices.Equal(verbs, []string{"get", "list"}) {
			t.Errorf("verbs %v, want get and list", verbs)
		}
		groups, _, _ := unstructured.NestedStringSlice(rm, "apiGroups")
		resources, _, _ := unstructured.NestedStringSlice(rm, "resources")
		for _, g := range groups {
			for _, res := range resources {
				got[g+"/"+res] = true
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ClusterRole grants %v, want %v", got, want)
	}
	// And a real check: Secrets stay forbidden.
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("flipflop").List(ctx(t), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets as the reader: %v, want forbidden", err)
	}
}

// No Kargo in the cluster: one error naming the missing API and what it
// means; Applications are still read.
func TestKargoNotInstalled(t *testing.T) {
	env := noKargo.Env(t)
	applyFiles(t, env, "../../examples/contradiction/argocd.yaml")
	objs, errs := cluster.Read(ctx(t), env.Config, cluster.Options{})
	if len(errs) != 1 {
		t.Fatalf("errors: %v", errs)
	}
	e := errs[0]
	if e.Path != "cluster: kargo.akuity.io/v1alpha1" || !strings.Contains(e.Message, "Kargo's CRDs are not installed") ||
		!strings.Contains(e.Message, "Stages") {
		t.Errorf("error: %v", e)
	}
	mustContain(t, names(objs), "Application argocd/dev", "Application argocd/qa")
}

const secretToken = "flipflop-test-SECRET-token-0123456789abcdef"

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// An unreachable server is one error, and no credential leaks into it.
func TestUnreachable(t *testing.T) {
	kc := kubetest.TokenKubeconfig(t, "https://"+closedPort(t), nil, "ctx", secretToken)
	cfg, label, err := cluster.Config(cluster.ConfigOptions{Kubeconfig: kc, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if label != "cluster:ctx" {
		t.Errorf("label %q", label)
	}
	objs, errs := cluster.Read(ctx(t), cfg, cluster.Options{Label: label})
	if len(objs) != 0 || len(errs) != 1 {
		t.Fatalf("objects %v, errors %v", objs, errs)
	}
	msg := errs[0].Error()
	if !strings.Contains(msg, "cannot reach the API server at https://127.0.0.1:") || !strings.Contains(msg, "nothing was read from the cluster") {
		t.Errorf("error: %s", msg)
	}
	if strings.Contains(msg, secretToken) {
		t.Errorf("the token leaked: %s", msg)
	}
}

// A bearer token the server rejects: one 401 error, without the token.
func TestRejectedToken(t *testing.T) {
	env := kube.Env(t)
	kc := kubetest.TokenKubeconfig(t, env.Config.Host, env.Config.CAData, "ctx", secretToken)
	cfg, _, err := cluster.Config(cluster.ConfigOptions{Kubeconfig: kc})
	if err != nil {
		t.Fatal(err)
	}
	_, errs := cluster.Read(ctx(t), cfg, cluster.Options{})
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "401 Unauthorized") {
		t.Fatalf("errors: %v", errs)
	}
	if strings.Contains(errs[0].Error(), secretToken) {
		t.Errorf("the token leaked: %v", errs[0])
	}
	// A broken context name: an error without the token either.
	_, _, err = cluster.Config(cluster.ConfigOptions{Kubeconfig: kc, Context: "nope"})
	if err == nil || strings.Contains(err.Error(), secretToken) {
		t.Errorf("context error: %v", err)
	}
}
