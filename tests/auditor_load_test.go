package tests

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/kubetest"
)

// A measurement, not a test (it asserts only that the passes succeed, and is
// skipped unless FLIPFLOP_AUDITOR_LOAD names sizes in Applications): one
// auditor pass, `flipflop check --cluster --write-reports` as the CronJob
// runs it, against a real API server holding an estate of that many
// Applications, for docs/hosts.md's Auditor section. Per size and shape it
// starts an API server of its own, loads the estate, and runs the binary
// twice: the first pass writes every report, the second finds them current.
// It logs each pass's wall time, the process's peak resident memory
// (getrusage), the API requests it made (the API server's
// apiserver_request_total, before and after) and the reports written.
//
//	FLIPFLOP_AUDITOR_LOAD=2000,10000 go test -run AuditorLoad -v -timeout 90m ./tests/
//
// FLIPFLOP_AUDITOR_MEMLIMIT, say 921MiB, runs the first two passes with
// GOMEMLIMIT set to it: what flipflop sets itself in a container limited to
// 1 GiB (90% of the cgroup's limit); a third pass runs without it.
//
// FLIPFLOP_AUDITOR_BASELINE names another flipflop binary (say, one built from
// main) to measure side by side: after the first pass, each further pass is
// run by both, in turn (the baseline first on odd passes, second on even
// ones), on the same API server and estate, and each line says which ran.
// FLIPFLOP_AUDITOR_PASSES sets how many passes follow the first (default 1,
// or 2 with FLIPFLOP_AUDITOR_MEMLIMIT: the last without the limit); when it is
// set, FLIPFLOP_AUDITOR_MEMLIMIT holds for every pass.
//
// FLIPFLOP_AUDITOR_SHAPES picks the estates (comma-separated, default
// monorepo,benchmark): monorepo is internal/estate's monorepo shape (every
// Application in one repository, every Stage on a branch of its own: clean),
// benchmark the benchmark estate (seed 1) of the same number of Applications,
// whose findings spread over hundreds of Kargo projects.
func TestAuditorLoad(t *testing.T) {
	var sizes []int
	for _, s := range strings.Split(os.Getenv("FLIPFLOP_AUDITOR_LOAD"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			sizes = append(sizes, n)
		}
	}
	if len(sizes) == 0 {
		t.Skip("set FLIPFLOP_AUDITOR_LOAD to numbers of Applications to measure")
	}
	shapes := []string{"monorepo", "benchmark"}
	if s := os.Getenv("FLIPFLOP_AUDITOR_SHAPES"); s != "" {
		shapes = strings.Split(s, ",")
	}
	bin := tool(t, "FLIPFLOP_BIN")
	for _, shape := range shapes {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s-%d", shape, n), func(t *testing.T) { measureAuditor(t, bin, shape, n) })
		}
	}
}

func estateFiles(t *testing.T, shape string, apps int) []estate.File {
	t.Helper()
	switch shape {
	case "monorepo":
		files, err := estate.Shape("monorepo", apps)
		if err != nil {
			t.Fatal(err)
		}
		return files
	case "benchmark":
		// 2,000 Applications come with 4,485 objects, 10,000 with 22,160.
		files, _ := estate.Generate(estate.Options{Objects: apps * 2216 / 1000, Seed: 1})
		return files
	}
	t.Fatalf("unknown shape %q", shape)
	return nil
}

// kinds flipflop reads, for loading an estate without discovery.
var loadKinds = map[string]schema.GroupVersionResource{
	"Application":          {Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"},
	"ApplicationSet":       {Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets"},
	"Stage":                {Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "stages"},
	"Warehouse":            {Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "warehouses"},
	"PromotionTask":        {Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "promotiontasks"},
	"ClusterPromotionTask": {Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "clusterpromotiontasks"},
	"Project":              {Group: "kargo.akuity.io", Version: "v1alpha1", Resource: "projects"},
}

// loadAuditorEstate creates the estate's objects (and their namespaces), 16 at a
// time; it returns the Applications created and the objects the API server
// refused (the estate holds some documents the released CRDs reject).
func loadAuditorEstate(t *testing.T, env *kubetest.Env, files []estate.File) (apps, objects, rejected int) {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 2000, 4000
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var objs []*unstructured.Unstructured
	nss := map[string]bool{}
	for _, f := range files {
		docs, err := kubetest.Decode(f.Content)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range docs {
			if _, ok := loadKinds[o.GetKind()]; !ok {
				continue
			}
			objs = append(objs, o)
			if ns := o.GetNamespace(); ns != "" {
				nss[ns] = true
			}
		}
	}
	nsRes := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	for ns := range nss {
		_, err := nsRes.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	var nApps, nRejected atomic.Int64
	work := make(chan *unstructured.Unstructured)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				var ri dynamic.ResourceInterface = dyn.Resource(loadKinds[o.GetKind()])
				if ns := o.GetNamespace(); ns != "" {
					ri = dyn.Resource(loadKinds[o.GetKind()]).Namespace(ns)
				}
				if _, err := ri.Create(ctx, o, metav1.CreateOptions{}); err != nil {
					nRejected.Add(1)
					continue
				}
				if o.GetKind() == "Application" {
					nApps.Add(1)
				}
			}
		}()
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	return int(nApps.Load()), len(objs), int(nRejected.Load())
}

var requestTotal = regexp.MustCompile(`^apiserver_request_total\{(.*)\} ([0-9.e+]+)$`)
var labelValue = regexp.MustCompile(`(\w+)="([^"]*)"`)

// requestCounts reads the API server's request counters by "verb resource".
func requestCounts(t *testing.T, env *kubetest.Env) map[string]float64 {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(strings.TrimSuffix(env.Config.Host, "/") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 16<<20)
	for s.Scan() {
		m := requestTotal.FindStringSubmatch(s.Text())
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range labelValue.FindAllStringSubmatch(m[1], -1) {
			labels[l[1]] = l[2]
		}
		v, _ := strconv.ParseFloat(m[2], 64)
		out[labels["verb"]+" "+labels["resource"]] += v
	}
	return out
}

// flipflopResources are the resources flipflop requests (the Kargo
// controller's Deployments for its version): the API server's own requests
// (leases, services) are left out of the counts, and so is discovery, which
// apiserver_request_total does not count by resource.
var flipflopResources = []string{"applications", "applicationsets", "stages", "warehouses", "promotiontasks",
	"clusterpromotiontasks", "projects", "deployments", "policyreports", "clusterpolicyreports", "reports", "clusterreports"}

// requestDelta is what changed between two counts of flipflop's resources,
// "VERB resource n" sorted, and the total.
func requestDelta(before, after map[string]float64) (string, int) {
	var parts []string
	total := 0
	for k, v := range after {
		d := int(v - before[k])
		if _, res, _ := strings.Cut(k, " "); d <= 0 || !slices.Contains(flipflopResources, res) {
			continue
		}
		total += d
		parts = append(parts, fmt.Sprintf("%s %d", k, d))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", "), total
}

func measureAuditor(t *testing.T, bin, shape string, n int) {
	env := reportsCluster(t)
	start := time.Now()
	apps, objects, rejected := loadAuditorEstate(t, env, estateFiles(t, shape, n))
	t.Logf("%s, %d Applications: %d objects loaded (%d refused by the CRDs) in %s", shape, apps, objects-rejected, rejected, time.Since(start).Round(time.Second))

	out := filepath.Join(t.TempDir(), "report.json")
	limit := os.Getenv("FLIPFLOP_AUDITOR_MEMLIMIT")
	again, unlimitedLast := 1, false
	if limit != "" {
		again, unlimitedLast = 2, true
	}
	if s := os.Getenv("FLIPFLOP_AUDITOR_PASSES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("FLIPFLOP_AUDITOR_PASSES=%q: want a number of passes", s)
		}
		again, unlimitedLast = n, false
	}
	baseline := os.Getenv("FLIPFLOP_AUDITOR_BASELINE")
	for pass := 0; pass <= again; pass++ {
		gomemlimit := limit
		if unlimitedLast && pass == again {
			gomemlimit = ""
		}
		bins := []string{bin}
		switch {
		case baseline == "" || pass == 0:
		case pass%2 == 1:
			bins = []string{baseline, bin}
		default:
			bins = []string{bin, baseline}
		}
		for _, b := range bins {
			which := "new"
			if b == baseline {
				which = "baseline"
			}
			auditorPass(t, env, b, which, shape, apps, pass+1, gomemlimit, out)
		}
	}
	l, err := env.Dynamic().Resource(policyReports).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, u := range l.Items {
		rs, _, _ := unstructured.NestedSlice(u.Object, "results")
		results += len(rs)
	}
	t.Logf("%s, %d Applications: %d PolicyReports holding %d results", shape, apps, len(l.Items), results)
}

// auditorPass runs one pass of the binary bin (which: "new" or "baseline")
// and logs what it took.
func auditorPass(t *testing.T, env *kubetest.Env, bin, which, shape string, apps, pass int, limit, out string) {
	t.Helper()
	before := requestCounts(t, env)
	cmd := exec.Command(bin, "check", "--cluster", "--kubeconfig", env.Kubeconfig, "--write-reports", "-o", "json", "--out", out, "--progress", "never")
	gomemlimit := "default"
	if limit != "" {
		cmd.Env = append(os.Environ(), "GOMEMLIMIT="+limit)
		gomemlimit = limit
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	began := time.Now()
	err := cmd.Run()
	wall := time.Since(began)
	code := cmd.ProcessState.ExitCode()
	if code != 0 && code != 1 {
		t.Fatalf("%s, pass %d: exit %d (%v)\n%s", which, pass, code, err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	after := requestCounts(t, env)
	delta, total := requestDelta(before, after)
	findings := 0
	if b, err := os.ReadFile(out); err == nil {
		findings = len(parseReport(t, string(b)).Findings)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("%s, %d Applications, pass %d, %s (GOMEMLIMIT %s, load average %s): exit %d, %d findings, wall %.1f s, user+sys CPU %.1f s, peak RSS %d MiB, %d API requests (%s)\n%s",
		shape, apps, pass, which, gomemlimit, strings.Join(strings.Fields(string(load))[:3], " "), code, findings, wall.Seconds(),
		time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds(), ru.Maxrss/1024, total, delta, strings.TrimSpace(stderr.String()))
}
