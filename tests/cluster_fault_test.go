package tests

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
)

// cuttingProxy forwards TCP to target until budget bytes have come back from
// it, then closes every connection and refuses new ones: an API server that
// goes away in the middle of a run. budget < 0 means no limit.
type cuttingProxy struct {
	l      net.Listener
	target string
	budget int64
	sent   atomic.Int64
	cut    atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newCuttingProxy(t *testing.T, target string, budget int64) *cuttingProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttingProxy{l: l, target: target, budget: budget}
	t.Cleanup(func() { l.Close(); p.closeAll() })
	go p.serve()
	return p
}

func (p *cuttingProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		if p.cut.Load() {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }()
		go p.back(c, s)
	}
}

// back copies server → client, counting bytes, and cuts when over budget.
func (p *cuttingProxy) back(c, s net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if sent := p.sent.Add(int64(n)); p.budget >= 0 && sent > p.budget {
				p.cut.Store(true)
				p.closeAll()
				return
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			c.Close()
			return
		}
	}
}

func (p *cuttingProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// The API server goes away in the middle of a run (connections closed, new ones
// refused): the result is reported incomplete (exit 2) with the cluster named,
// nothing panics, and the findings from the files are still printed.
func TestClusterServerGoneMidRun(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	env := kube.Env(t)
	var objs []*unstructured.Unstructured
	for i := range 120 {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
			"metadata": map[string]any{"name": fmt.Sprintf("s%03d", i), "namespace": "cutoff"},
			"spec": map[string]any{
				"requestedFreight":  []any{map[string]any{"origin": map[string]any{"kind": "Warehouse", "name": "app"}, "sources": map[string]any{"direct": true}}},
				"promotionTemplate": map[string]any{"spec": map[string]any{"steps": []any{map[string]any{"uses": "git-clone", "config": map[string]any{"repoURL": "https://git.example/x.git", "checkout": []any{map[string]any{"branch": "main", "path": "./r"}}}}}}},
			},
		}})
	}
	applyObjs(t, env, objs...)

	u, err := url.Parse(env.Config.Host)
	if err != nil || u.Host == "" {
		u, err = url.Parse("https://" + env.Config.Host)
	}
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	kubeconfigVia := func(p *cuttingProxy) string {
		cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cfg.Clusters {
			c.Server = "https://" + p.l.Addr().String()
			c.TLSServerName = "127.0.0.1"
		}
		path := t.TempDir() + "/kubeconfig"
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	args := func(kc string) []string {
		return []string{"check", "-o", "json", "--fail-on", "never", "--cluster", "--kubeconfig", kc,
			"-n", "cutoff", "--chunk-size", "5", "--request-timeout", "10s", "examples/contradiction"}
	}

	// A full run through an unlimited proxy: how many bytes the server sends.
	full := newCuttingProxy(t, host, -1)
	stdout, stderr, code := runCmd(t, "..", bin, args(kubeconfigVia(full))...)
	if code != 0 {
		t.Fatalf("through the proxy: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if r := parseReport(t, stdout); r.Summary.Objects < 120 {
		t.Fatalf("through the proxy: read %d objects", r.Summary.Objects)
	}
	total := full.sent.Load()

	// Cut at half of that: somewhere in the middle of discovery or the lists.
	for _, frac := range []int64{3, 2} {
		cut := newCuttingProxy(t, host, total/frac)
		stdout, stderr, code = runCmd(t, "..", bin, args(kubeconfigVia(cut))...)
		if code != 2 {
			t.Fatalf("cut at 1/%d: exit %d, want 2\n%s\n%s", frac, code, stdout, stderr)
		}
		if strings.Contains(stderr, "panic") || !strings.Contains(stdout, "cluster:envtest") {
			t.Errorf("cut at 1/%d: no clear error naming the cluster\n%s\n%s", frac, stdout, stderr)
		}
		if r := parseReport(t, stdout); len(where(r, "shared-branch-contradiction")) == 0 {
			t.Errorf("cut at 1/%d: the finding from the files was lost\n%s", frac, stdout)
		}
	}
}
