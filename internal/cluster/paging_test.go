package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
)

// loopingTransport makes the list of one resource path never end: every page
// it returns carries a continue token, the same one (repeat) or a new one each
// time, and a request with such a token is sent to the server as a request for
// the first page again.
type loopingTransport struct {
	next   http.RoundTripper
	path   string
	repeat bool
	pages  atomic.Int32
}

func (l *loopingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path != l.path {
		return l.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	q := req.URL.Query()
	q.Del("continue")
	req.URL.RawQuery = q.Encode()
	resp, err := l.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var list map[string]any
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	n := l.pages.Add(1)
	token := "again"
	if !l.repeat {
		token = fmt.Sprintf("page-%d", n)
	}
	list["metadata"].(map[string]any)["continue"] = token
	body, _ = json.Marshal(list)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// A server whose Stage list never ends (a repeated continue token, or new
// tokens forever) costs a bounded number of requests and is reported as a
// load error naming the list; the contradiction in the other namespace is
// still read whole, and found.
func TestPaginationBounded(t *testing.T) {
	env := kube.Env(t)
	applyFiles(t, env, "../../examples/contradiction/argocd.yaml", "../../examples/contradiction/kargo.yaml")
	manyStages(t, env, "endless", 3)
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, repeat := range []bool{true, false} {
		lt := &loopingTransport{path: "/apis/kargo.akuity.io/v1alpha1/namespaces/endless/stages", repeat: repeat}
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { lt.next = rt; return lt })
		objs, errs := cluster.Read(ctx(t), cfg, cluster.Options{Namespaces: []string{"acme", "endless"}, ChunkSize: 2, MaxPages: 20})
		want := "the list did not end after 20 pages"
		if repeat {
			want = "handed back a continue token it had already given"
		}
		if len(errs) != 1 || errs[0].Path != "cluster: stages.kargo.akuity.io in namespace endless" || !strings.Contains(errs[0].Message, want) {
			t.Errorf("repeat=%v: errors %v, want one saying %q", repeat, errs, want)
		}
		if n := lt.pages.Load(); (repeat && n != 2) || (!repeat && n != 20) {
			t.Errorf("repeat=%v: %d requests", repeat, n)
		}
		report, err := ev.Evaluate(context.Background(), objs)
		if err != nil {
			t.Fatal(err)
		}
		found := slices.ContainsFunc(report.Findings, func(f evaluator.Finding) bool { return f.Rule == "shared-branch-contradiction" })
		if !found {
			t.Errorf("repeat=%v: the contradiction is not found in what was read: %v", repeat, report.Findings)
		}
	}
}
