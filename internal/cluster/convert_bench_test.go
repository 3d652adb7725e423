package cluster

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// liveApplication is an Argo CD Application as the API server returns it,
// with a status of the usual shape: every managed resource (resources and
// the last sync's result), a sync history and the health.
func liveApplication(resources int) *unstructured.Unstructured {
	res := make([]any, 0, resources)
	synced := make([]any, 0, resources)
	for i := range resources {
		name := fmt.Sprintf("web-%03d", i)
		res = append(res, map[string]any{
			"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "web", "name": name,
			"status": "Synced", "health": map[string]any{"status": "Healthy"},
		})
		synced = append(synced, map[string]any{
			"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "web", "name": name,
			"status": "Synced", "message": "deployment.apps/" + name + " configured", "hookPhase": "Running", "syncPhase": "Sync",
		})
	}
	history := make([]any, 0, 10)
	for i := range 10 {
		history = append(history, map[string]any{
			"id": int64(i), "revision": fmt.Sprintf("%040d", i), "deployedAt": "2026-12-01T10:00:00Z",
			"source": map[string]any{"repoURL": "https://github.com/acme/deploy.git", "path": "web", "targetRevision": "main"},
		})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "web", "namespace": "argocd", "resourceVersion": "12345", "uid": "5f6c"},
		"spec": map[string]any{
			"project":     "default",
			"source":      map[string]any{"repoURL": "https://github.com/acme/deploy.git", "path": "web", "targetRevision": "main"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "web"},
			"syncPolicy":  map[string]any{"automated": map[string]any{}},
		},
		"status": map[string]any{
			"resources": res,
			"sync":      map[string]any{"status": "Synced", "revision": fmt.Sprintf("%040d", 9)},
			"health":    map[string]any{"status": "Healthy"},
			"history":   history,
			"operationState": map[string]any{
				"phase": "Succeeded", "message": "successfully synced (all tasks run)",
				"syncResult": map[string]any{"resources": synced, "revision": fmt.Sprintf("%040d", 9)},
			},
		},
	}}
}

// BenchmarkToObject converts a live Application with a 50-resource status,
// as every command but diagnose reads it (status dropped) and as diagnose
// does (status kept).
func BenchmarkToObject(b *testing.B) {
	u := liveApplication(50)
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("keepStatus=%v", keep), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := toObject(u, "cluster", keep); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
