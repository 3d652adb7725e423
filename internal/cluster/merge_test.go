package cluster

import (
	"fmt"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flipflop-dev/flipflop/evaluator"
)

func object(t *testing.T, path, apiVersion, kind, ns, name string, owner string) evaluator.Object {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if owner != "" {
		u.Object["metadata"].(map[string]any)["ownerReferences"] = []any{
			map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": owner, "controller": true},
		}
	}
	o, err := toObject(u, path, true)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func summarize(objs []evaluator.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s %s/%s@%s", o.Kind, o.Namespace, o.Name, o.Path))
	}
	return out
}

func TestMerge(t *testing.T) {
	const app, kargo = "argoproj.io/v1alpha1", "kargo.akuity.io/v1alpha1"
	in := []evaluator.Object{
		// files
		object(t, "repo/stages.yaml", kargo, "Stage", "acme", "dev", ""),
		object(t, "repo/apps.yaml", app, "Application", "", "dev", ""), // no namespace: the Argo CD namespace
		object(t, "repo/appset.yaml", app, "ApplicationSet", "argocd", "from-file", ""),
		object(t, "repo/tasks.yaml", kargo, "ClusterPromotionTask", "", "shared", ""),
		// cluster
		object(t, "cluster:prod", kargo, "Stage", "acme", "dev", ""),       // replaced by the file
		object(t, "cluster:prod", kargo, "Stage", "acme", "qa", ""),        // only live: kept
		object(t, "cluster:prod", app, "Application", "argocd", "dev", ""), // replaced by the file
		object(t, "cluster:prod", app, "Application", "argocd", "qa", ""),  // kept
		object(t, "cluster:prod", app, "Application", "other", "dev", ""),  // another namespace: kept
		object(t, "cluster:prod", kargo, "ClusterPromotionTask", "", "shared", ""),
		object(t, "cluster:prod", app, "ApplicationSet", "argocd", "from-file", ""),
		object(t, "cluster:prod", app, "Application", "argocd", "gen-1", "from-file"), // the file's ApplicationSet generates it anew
		object(t, "cluster:prod", app, "ApplicationSet", "argocd", "live", ""),        // represented by its live Applications
		object(t, "cluster:prod", app, "Application", "argocd", "live-1", "live"),
		object(t, "cluster:prod", app, "ApplicationSet", "argocd", "empty", ""), // generated nothing yet: kept
	}
	got := summarize(Merge(in, ""))
	want := []string{
		"Stage acme/dev@repo/stages.yaml",
		"Application /dev@repo/apps.yaml",
		"ApplicationSet argocd/from-file@repo/appset.yaml",
		"ClusterPromotionTask /shared@repo/tasks.yaml",
		"Stage acme/qa@cluster:prod",
		"Application argocd/qa@cluster:prod",
		"Application other/dev@cluster:prod",
		"Application argocd/live-1@cluster:prod",
		"ApplicationSet argocd/empty@cluster:prod",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}

	// With another Argo CD namespace, the file's namespace-less Application
	// is that namespace's, and argocd/dev from the cluster stays.
	got = summarize(Merge(in[:7], "gitops"))
	if !slices.Contains(got, "Application argocd/dev@cluster:prod") {
		t.Errorf("argocd/dev dropped with --argocd-namespace gitops: %q", got)
	}

	// Files only, or cluster only without ApplicationSets: unchanged.
	if got := Merge(in[:4], ""); len(got) != 4 {
		t.Errorf("files only: %d objects", len(got))
	}
}

func TestToObjectDropsNoise(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": map[string]any{
			"name": "dev", "namespace": "acme", "uid": "5f6c",
			"managedFields":   []any{map[string]any{"manager": "kubectl"}},
			"annotations":     map[string]any{lastApplied: "{...}", "keep": "me"},
			"resourceVersion": "42", "generation": int64(7), "creationTimestamp": "2026-01-01T00:00:00Z",
			"finalizers":      []any{"kargo.akuity.io/finalizer"},
			"ownerReferences": []any{map[string]any{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Project", "name": "acme", "uid": "1"}},
		},
		"spec":      map[string]any{"shard": "a", "n": int64(3), "f": 1.5},
		"status":    map[string]any{"health": map[string]any{"status": "Healthy"}},
		"operation": map[string]any{"sync": map[string]any{"revision": "main"}},
	}}
	o, err := toObject(u, "cluster", true)
	if err != nil {
		t.Fatal(err)
	}
	// What the API server and the controllers set, and no policy reads, is
	// dropped; the UID (for the reports) and the owners (for Merge) are kept.
	want := ast.MustParseTerm(`{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": {"name": "dev", "namespace": "acme", "uid": "5f6c", "annotations": {"keep": "me"},
			"ownerReferences": [{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Project", "name": "acme", "uid": "1"}]},
		"spec": {"shard": "a", "n": 3, "f": 1.5}, "status": {"health": {"status": "Healthy"}},
		"operation": {"sync": {"revision": "main"}}}`).Value
	if o.Value.Compare(want) != 0 || o.Kind != "Stage" || o.Namespace != "acme" || o.Path != "cluster" || o.Line != 0 {
		t.Errorf("got %+v", o)
	}
	// Without keepStatus (every command but diagnose) the status and the
	// operation are dropped too, and the rest is the same.
	o, err = toObject(u, "cluster", false)
	if err != nil {
		t.Fatal(err)
	}
	want = ast.MustParseTerm(`{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": {"name": "dev", "namespace": "acme", "uid": "5f6c", "annotations": {"keep": "me"},
			"ownerReferences": [{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Project", "name": "acme", "uid": "1"}]},
		"spec": {"shard": "a", "n": 3, "f": 1.5}}`).Value
	if o.Value.Compare(want) != 0 {
		t.Errorf("without keepStatus: got %v", o.Value)
	}
	// The input object is not modified.
	if _, ok := u.Object["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Error("toObject modified its input")
	}
	if _, ok := u.Object["status"]; !ok {
		t.Error("toObject dropped the status from its input")
	}
}

func TestTasks(t *testing.T) {
	var stages, projects, apps Resource
	for _, r := range Resources {
		switch r.Resource {
		case "stages":
			stages = r
		case "projects":
			projects = r
		case "applications":
			apps = r
		}
	}
	str := func(ts []task) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.String())
		}
		return out
	}
	cases := []struct {
		r    Resource
		opts Options
		want []string
	}{
		{stages, Options{}, []string{"stages.kargo.akuity.io in all namespaces"}},
		{stages, Options{Namespaces: []string{"a", "b", "a"}}, []string{"stages.kargo.akuity.io in namespace a", "stages.kargo.akuity.io in namespace b"}},
		{projects, Options{}, []string{"projects.kargo.akuity.io"}},
		{projects, Options{Namespaces: []string{"a"}}, []string{"projects.kargo.akuity.io named a"}},
		{apps, Options{}, []string{"applications.argoproj.io in namespace argocd"}},
		{apps, Options{Namespaces: []string{"a"}, ArgoCDNamespaces: []string{"x", "y"}}, []string{"applications.argoproj.io in namespace x", "applications.argoproj.io in namespace y"}},
		{apps, Options{AllNamespaces: true, ArgoCDNamespaces: []string{"x"}}, []string{"applications.argoproj.io in all namespaces"}},
	}
	for _, c := range cases {
		if got := str(tasksFor(c.r, c.opts)); !slices.Equal(got, c.want) {
			t.Errorf("%s %+v: got %q, want %q", c.r, c.opts, got, c.want)
		}
	}
}

// The file's copy wins, but keeps what the cluster observed.
func TestMergeKeepsLiveStatus(t *testing.T) {
	file := object(t, "repo/stages.yaml", "kargo.akuity.io/v1alpha1", "Stage", "acme", "dev", "")
	live := object(t, "cluster", "kargo.akuity.io/v1alpha1", "Stage", "acme", "dev", "")
	live.Value.(ast.Object).Insert(ast.StringTerm("status"), ast.MustParseTerm(`{"health": {"status": "Unhealthy"}}`))
	live.Value.(ast.Object).Insert(ast.StringTerm("spec"), ast.MustParseTerm(`{"from": "cluster"}`))
	file.Value.(ast.Object).Insert(ast.StringTerm("spec"), ast.MustParseTerm(`{"from": "file"}`))
	before := file.Value.String()
	got := Merge([]evaluator.Object{file, live}, "")
	if len(got) != 1 || got[0].Path != "repo/stages.yaml" {
		t.Fatalf("got %q", summarize(got))
	}
	want := ast.MustParseTerm(`{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage", "metadata": {"name": "dev", "namespace": "acme"},
		"spec": {"from": "file"}, "status": {"health": {"status": "Unhealthy"}}}`).Value
	if got[0].Value.Compare(want) != 0 {
		t.Errorf("got %v", got[0].Value)
	}
	if file.Value.String() != before {
		t.Error("Merge modified the file's object")
	}
	// Merging again changes nothing.
	if again := Merge(got, ""); len(again) != 1 || again[0].Value.Compare(want) != 0 {
		t.Errorf("not idempotent: %q", summarize(again))
	}
}
