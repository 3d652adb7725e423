package cluster_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
)

// fakeAPIServer serves, on loopback, what serveAPI does, except for the
// paths that have a handler of their own.
func fakeAPIServer(t *testing.T, handlers map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if h, ok := handlers[req.URL.Path]; ok {
			h(w, req)
			return
		}
		serveAPI(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// serveAPI answers as an API server with Argo CD's and Kargo's API groups
// would: their discovery documents, and a list of each resource flipflop
// reads, with one Application (argocd/dev) and nothing else.
func serveAPI(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var resources []map[string]any
	gv := strings.TrimPrefix(req.URL.Path, "/apis/")
	for _, r := range cluster.Resources {
		if r.Group+"/"+r.Version == gv {
			resources = append(resources, map[string]any{
				"name": r.Resource, "singularName": strings.ToLower(r.Kind), "namespaced": r.Namespaced,
				"kind": r.Kind, "verbs": []string{"get", "list"},
			})
		}
	}
	if resources != nil {
		json.NewEncoder(w).Encode(map[string]any{
			"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources,
		})
		return
	}
	for _, r := range cluster.Resources {
		prefix := "/apis/" + r.Group + "/" + r.Version + "/"
		if !strings.HasPrefix(req.URL.Path, prefix) || !strings.HasSuffix(req.URL.Path, "/"+r.Resource) {
			continue
		}
		var items []any
		if req.URL.Path == "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications" {
			items = append(items, map[string]any{
				"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
				"metadata": map[string]any{"name": "dev", "namespace": "argocd"},
				"spec":     map[string]any{"project": "default", "source": map[string]any{"repoURL": "https://github.com/acme/deploy", "targetRevision": "main"}},
			})
		}
		json.NewEncoder(w).Encode(map[string]any{
			"apiVersion": r.Group + "/" + r.Version, "kind": r.Kind + "List",
			"metadata": map[string]any{"resourceVersion": "1"}, "items": items,
		})
		return
	}
	http.NotFound(w, req)
}

// gzipBomb answers with a Stage list that is valid JSON of 1 GiB (its items
// array padded with spaces), sent gzip-compressed as the API server compresses
// large responses: about 1 MiB on the wire. It is compressed as it is sent,
// so a client that stops reading costs only what it read.
func gzipBomb(w http.ResponseWriter, req *http.Request) {
	if !strings.Contains(req.Header.Get("Accept-Encoding"), "gzip") {
		http.Error(w, "this test serves gzip only", http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Encoding", "gzip")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	io.WriteString(zw, `{"apiVersion":"kargo.akuity.io/v1alpha1","kind":"StageList","metadata":{"resourceVersion":"1"},"items":[`)
	spaces := bytes.Repeat([]byte{' '}, 1<<20)
	for range 1 << 10 { // 1 GiB
		if _, err := zw.Write(spaces); err != nil {
			return // the client hung up
		}
	}
	io.WriteString(zw, `]}`)
	zw.Close()
}

// bodyCounter counts the bytes read from the response bodies of one path, as
// the bound above it reads them from the transport.
type bodyCounter struct {
	next http.RoundTripper
	path string
	read atomic.Int64
	// uncompressed records that Go's transport decompressed the body.
	uncompressed atomic.Bool
}

func (c *bodyCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil && req.URL.Path == c.path {
		c.uncompressed.Store(resp.Uncompressed)
		resp.Body = &countedBody{ReadCloser: resp.Body, n: &c.read}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// A gzip response that inflates 1 MiB into 1 GiB is read up to the bound,
// counted after decompression, and no further; it is reported as a load error
// naming the list, and the other resources are still read.
func TestResponseBodyBounded(t *testing.T) {
	const stages = "/apis/kargo.akuity.io/v1alpha1/stages"
	srv := fakeAPIServer(t, map[string]http.HandlerFunc{stages: gzipBomb})
	for _, bound := range []int64{1 << 20, cluster.DefaultMaxResponseBytes} {
		ct := &bodyCounter{path: stages}
		opts := cluster.Options{}
		if bound != cluster.DefaultMaxResponseBytes {
			opts.MaxResponseBytes = bound
		}
		objs, errs, stderr := readCounted(t, srv, ct, opts)

		if !ct.uncompressed.Load() {
			t.Errorf("bound %d: the Stage list was not decompressed by the transport: the test does not test the bound after decompression", bound)
		}
		// One byte past the bound tells that there is more; nothing else is read.
		if n := ct.read.Load(); n < bound || n > bound+1 {
			t.Errorf("bound %d: %d bytes of the 1 GiB Stage list were read", bound, n)
		}
		want := fmt.Sprintf("longer than %d MiB (after decompression)", bound>>20)
		if len(errs) != 1 || errs[0].Path != "cluster: stages.kargo.akuity.io in all namespaces" ||
			!strings.Contains(errs[0].Message, want) || !strings.Contains(errs[0].Message, "--chunk-size") {
			t.Errorf("bound %d: errors %v, want one for the Stage list saying %q", bound, errs, want)
		}
		if !slices.ContainsFunc(objs, isDevApp) {
			t.Errorf("bound %d: the Application was not read: %v", bound, names(objs))
		}
		// client-go says nothing of its own on standard error: the load
		// error is the report.
		if stderr != "" {
			t.Errorf("bound %d: standard error got %q", bound, stderr)
		}
	}
}

// A response whose Content-Length is above the bound is refused unread, and a
// discovery document above it costs only its group.
func TestResponseBodyBoundedUnread(t *testing.T) {
	const bound = 1 << 20
	const appsets = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applicationsets"
	const kargo = "/apis/kargo.akuity.io/v1alpha1"
	long := `{"apiVersion":"argoproj.io/v1alpha1","kind":"ApplicationSetList","metadata":{},"items":[` + strings.Repeat(" ", bound) + `]}`
	srv := fakeAPIServer(t, map[string]http.HandlerFunc{
		appsets: func(w http.ResponseWriter, req *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(long)))
			io.WriteString(w, long)
		},
		kargo: gzipBomb,
	})
	ct := &bodyCounter{path: appsets}
	objs, errs, _ := readCounted(t, srv, ct, cluster.Options{MaxResponseBytes: bound})
	if n := ct.read.Load(); n != 0 {
		t.Errorf("%d bytes of a response announced longer than the bound were read", n)
	}
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
		if !strings.Contains(e.Message, "longer than 1 MiB") {
			t.Errorf("error %v does not name the bound", e)
		}
	}
	want := []string{"cluster: applicationsets.argoproj.io in namespace argocd", "cluster: kargo.akuity.io/v1alpha1"}
	if slices.Sort(paths); !slices.Equal(paths, want) {
		t.Errorf("errors for %v, want %v", paths, want)
	}
	if !slices.ContainsFunc(objs, isDevApp) {
		t.Errorf("the Application was not read: %v", names(objs))
	}
}

func isDevApp(o evaluator.Object) bool { return o.Kind == "Application" && o.Name == "dev" }

// readCounted reads srv with ct under the bound, and returns what Read
// returns and what was written to standard error meanwhile.
func readCounted(t *testing.T, srv *httptest.Server, ct *bodyCounter, opts cluster.Options) ([]evaluator.Object, []evaluator.LoadError, string) {
	t.Helper()
	cfg := &rest.Config{Host: srv.URL}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { ct.next = rt; return ct })
	var objs []evaluator.Object
	var errs []evaluator.LoadError
	stderr := captureStderr(t, func() { objs, errs = cluster.Read(ctx(t), cfg, opts) })
	return objs, errs, stderr
}

// captureStderr runs f and returns what was written to standard error
// meanwhile.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	saved := os.Stderr
	os.Stderr = w
	func() {
		defer func() { os.Stderr = saved; w.Close() }()
		f()
	}()
	return <-got
}
