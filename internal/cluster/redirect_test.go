package cluster_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
)

// A redirect from the API server to another origin is not followed: the
// other server gets no request (client-go would send it the bearer token,
// though net/http drops the Authorization header of a request redirected to
// another domain: client-go adds it again below the redirect), the list is a
// load error that says so, and the rest is read. A redirect to the API server
// itself is followed.
func TestRedirectToOtherOriginRefused(t *testing.T) {
	const token = "flipflop-test-token-1234"
	var mu sync.Mutex
	var elsewhere []string // the Authorization headers the other server got
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, req.Header.Get("Authorization"))
		mu.Unlock()
		serveAPI(w, req)
	}))
	t.Cleanup(other.Close)
	// Another domain name for the other server, as net/http compares them.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	const stages = "/apis/kargo.akuity.io/v1alpha1/stages"
	const apps = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications"
	srv := fakeAPIServer(t, map[string]http.HandlerFunc{
		stages: func(w http.ResponseWriter, req *http.Request) {
			http.Redirect(w, req, otherURL+req.URL.RequestURI(), http.StatusFound)
		},
		apps: func(w http.ResponseWriter, req *http.Request) {
			if q := req.URL.Query(); q.Get("moved") == "" {
				q.Set("moved", "1")
				http.Redirect(w, req, req.URL.Path+"?"+q.Encode(), http.StatusTemporaryRedirect)
				return
			}
			serveAPI(w, req)
		},
	})
	objs, errs := cluster.Read(ctx(t), &rest.Config{Host: srv.URL, BearerToken: token}, cluster.Options{})

	if len(elsewhere) > 0 {
		t.Errorf("the other origin got %d requests, with Authorization %q", len(elsewhere), elsewhere)
	}
	if len(errs) != 1 || errs[0].Path != "cluster: stages.kargo.akuity.io in all namespaces" ||
		!strings.Contains(errs[0].Message, "redirected to "+otherURL+", another origin") ||
		strings.Contains(errs[0].Message, token) {
		t.Errorf("errors %v, want one for the Stage list naming the redirect to %s", errs, otherURL)
	}
	if !slices.ContainsFunc(objs, func(o evaluator.Object) bool { return o.Kind == "Application" && o.Name == "dev" }) {
		t.Errorf("the Application behind a redirect to the API server itself was not read: %v", names(objs))
	}
}
