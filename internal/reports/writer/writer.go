// Package writer writes flipflop's policy reports (package reports) to a
// cluster and keeps them current: each run creates or updates them in place
// (server-side apply, field manager "flipflop"), leaves alone those whose
// results did not change (a result that is still there keeps the timestamp
// of the run that first found it), and deletes the reports flipflop wrote
// before that this run does not write (stale results disappear when their
// finding does). It only touches reports labelled
// app.kubernetes.io/managed-by=flipflop and named flipflop or flipflop-N:
// those of Kyverno or any other source are never read, changed or deleted.
//
// It writes the kinds of every report API the API server serves
// (wgpolicyk8s.io/v1alpha2 PolicyReports, openreports.io/v1alpha1 Reports),
// or those asked for, and never installs or changes a CRD: Kyverno and Policy
// Reporter install their own copy of the same CRDs, and a second owner would
// fight over it. Installing one where none is is left to the person or
// the chart that installs flipflop (charts/flipflop installs the released
// CRDs only where they are absent).
package writer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/flipflop-dev/flipflop/internal/cluster"
	"github.com/flipflop-dev/flipflop/internal/reports"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// FieldManager is the field manager of flipflop's server-side applies.
const FieldManager = "flipflop"

// DefaultConcurrency bounds the writes and deletes in flight.
const DefaultConcurrency = 8

// QPS and Burst bound the writer's requests per second on the client side.
// The first run on a large estate writes a report per namespace with
// findings (1,500 namespaces at 10,000 Applications of the benchmark estate,
// twice with both APIs): at the 50 a second flipflop's reads use, that alone
// would take a minute. The API server's priority and fairness still applies.
const (
	QPS   = 200
	Burst = 400
)

// Options say what Write writes.
type Options struct {
	// APIs are the report APIs to write; empty means every one the API
	// server serves (an error when it serves none).
	APIs []reports.API
	// DeleteStale deletes flipflop's reports that this run does not write.
	// Leave it false when the reports do not cover the whole estate (some
	// input could not be read): a report whose namespace was not read is then
	// kept rather than taken for clean.
	DeleteStale bool
	// Concurrency bounds the requests in flight; 0 means DefaultConcurrency.
	Concurrency int
	// MaxResponseBytes bounds every response of the API server, as
	// cluster.Options.MaxResponseBytes; 0 means cluster.DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// ChunkSize is the page size of the lists of existing reports; 0 means
	// cluster.DefaultChunkSize.
	ChunkSize int64
}

// Outcome says what Write did with one API's reports.
type Outcome struct {
	API reports.API
	// Written counts the reports created or updated, Unchanged those left
	// as they were, Deleted the stale ones removed.
	Written, Unchanged, Deleted int
}

// Error is a failure to write reports: what failed, with the API server's
// message.
type Error struct {
	// Problems lists what failed, each once, in a stable order.
	Problems []string
}

func (e *Error) Error() string {
	const most = 5
	msg := "writing the reports failed: " + strings.Join(e.Problems[:min(len(e.Problems), most)], "; ")
	if n := len(e.Problems) - most; n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	return msg
}

// Write writes rs as the reports of every selected API the API server at cfg
// serves, and says what it did per API. Nothing is written when the API
// server cannot be reached or serves none of the selected APIs.
func Write(ctx context.Context, cfg *rest.Config, rs []reports.Report, opts Options) ([]Outcome, error) {
	gcfg := cluster.Guard(cfg, opts.MaxResponseBytes)
	gcfg.QPS, gcfg.Burst = QPS, Burst
	disc, err := discovery.NewDiscoveryClientForConfig(gcfg)
	if err != nil {
		return nil, &Error{Problems: []string{"cannot build a client for the API server: " + cluster.Redact(cfg, err.Error())}}
	}
	dyn, err := dynamic.NewForConfig(gcfg)
	if err != nil {
		return nil, &Error{Problems: []string{"cannot build a client for the API server: " + cluster.Redact(cfg, err.Error())}}
	}
	apis, err := selectAPIs(disc, cfg.Host, opts.APIs)
	if err != nil {
		return nil, &Error{Problems: []string{cluster.Redact(cfg, err.Error())}}
	}
	w := &writer{dyn: dyn, opts: opts, cfg: cfg}
	var outs []Outcome
	for _, api := range apis {
		out := w.write(ctx, api, rs)
		outs = append(outs, out)
	}
	if len(w.problems) > 0 {
		sort.Strings(w.problems)
		return outs, &Error{Problems: w.problems}
	}
	return outs, nil
}

// served reports whether the API server serves both kinds of an API.
func served(disc discovery.DiscoveryInterface, api reports.API) (bool, error) {
	list, err := disc.ServerResourcesForGroupVersion(api.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var ns, cl bool
	for _, r := range list.APIResources {
		ns = ns || r.Name == api.Resource
		cl = cl || r.Name == api.ClusterResource
	}
	return ns && cl, nil
}

// notServed says that the API server does not serve an API and what to do.
func notServed(api reports.API) string {
	return fmt.Sprintf("the API server does not serve %s (%s.%s): its CRDs are not installed; flipflop never installs CRDs: "+
		"install them (Kyverno and Policy Reporter ship them, and so does flipflop's Helm chart, only where they are absent; or kubectl create %s)",
		api, api.Resource, api.Group, createArgs(api))
}

// createArgs are the kubectl create arguments that install an API's CRDs as
// released (the versions flipflop's tests install: internal/upstream).
func createArgs(api reports.API) string {
	base := "https://raw.githubusercontent.com/" + strings.TrimPrefix(upstream.KyvernoModule, "github.com/") + "/" + upstream.KyvernoVersion + "/config/crds/policyreport/"
	if api == reports.OpenReports {
		base = "https://raw.githubusercontent.com/" + strings.TrimPrefix(upstream.OpenReportsModule, "github.com/") + "/" + upstream.OpenReportsVersion + "/config/crd/"
	}
	return fmt.Sprintf("-f %s%s_%s.yaml -f %s%s_%s.yaml", base, api.Group, api.Resource, base, api.Group, api.ClusterResource)
}

// selectAPIs is the APIs to write: those asked for, each of which must be
// served, or every served one (at least one).
func selectAPIs(disc discovery.DiscoveryInterface, host string, want []reports.API) ([]reports.API, error) {
	candidates := want
	if len(candidates) == 0 {
		candidates = reports.APIs()
	}
	var out []reports.API
	for _, api := range candidates {
		ok, err := served(disc, api)
		if err != nil {
			if p := cluster.ConnectionProblem(err, host); p != "" {
				return nil, errors.New(p + "; no report was written")
			}
			return nil, fmt.Errorf("API discovery of %s failed: %v; no report was written", api.GroupVersion(), err)
		}
		switch {
		case ok:
			out = append(out, api)
		case len(want) > 0:
			return nil, errors.New(notServed(api) + "; no report was written")
		}
	}
	if len(out) == 0 {
		var names []string
		for _, api := range candidates {
			names = append(names, api.String())
		}
		return nil, fmt.Errorf("the API server serves neither %s: no report CRD is installed; flipflop never installs CRDs: "+
			"install one (Kyverno and Policy Reporter ship the first, and so does flipflop's Helm chart, only where it is absent; or kubectl create %s); no report was written",
			strings.Join(names, " nor "), createArgs(reports.PolicyReports))
	}
	return out, nil
}

type writer struct {
	dyn  dynamic.Interface
	opts Options
	cfg  *rest.Config

	mu       sync.Mutex
	problems []string
}

func (w *writer) fail(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.problems = append(w.problems, cluster.Redact(w.cfg, msg))
}

// managedName matches the names flipflop gives its reports.
var managedName = regexp.MustCompile(`^` + reports.Name + `(-[2-9]|-[1-9][0-9]+)?$`)

// key is a report's namespace and name.
type key struct{ namespace, name string }

// write brings one API's reports in line with rs.
func (w *writer) write(ctx context.Context, api reports.API, rs []reports.Report) Outcome {
	out := Outcome{API: api}
	existing, ok := w.existing(ctx, api)
	if !ok {
		return out // listing failed: writing blind could not tell stale from current
	}
	// The timestamps of the results already reported, by namespace and
	// content: a result still there keeps the time it was first found.
	seen := map[string]any{}
	for k, u := range existing {
		for _, r := range results(u) {
			if ts, ok := r["timestamp"]; ok {
				seen[k.namespace+"\x00"+resultKey(r)] = ts
			}
		}
	}

	var todo []*unstructured.Unstructured
	desired := map[key]bool{}
	for _, r := range rs {
		u, err := api.Unstructured(r)
		if err != nil {
			w.fail(err.Error())
			continue
		}
		for _, res := range results(u) {
			if ts, ok := seen[r.Namespace+"\x00"+resultKey(res)]; ok {
				res["timestamp"] = ts
			}
		}
		k := key{r.Namespace, r.Name}
		desired[k] = true
		if old, ok := existing[k]; ok && same(old, u) {
			out.Unchanged++
			continue
		}
		todo = append(todo, u)
	}
	var stale []*unstructured.Unstructured
	if w.opts.DeleteStale {
		for k, u := range existing {
			if !desired[k] {
				stale = append(stale, u)
			}
		}
	}

	var mu sync.Mutex
	w.each(todo, func(u *unstructured.Unstructured) {
		ri := w.resource(api, u.GetNamespace())
		_, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if err != nil {
			w.fail(describe(api, "write", u, err))
			return
		}
		mu.Lock()
		out.Written++
		mu.Unlock()
	})
	w.each(stale, func(u *unstructured.Unstructured) {
		ri := w.resource(api, u.GetNamespace())
		uid := u.GetUID()
		err := ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			w.fail(describe(api, "delete", u, err))
			return
		}
		mu.Lock()
		out.Deleted++
		mu.Unlock()
	})
	return out
}

// each runs f on every object, at most Concurrency at a time.
func (w *writer) each(objs []*unstructured.Unstructured, f func(*unstructured.Unstructured)) {
	n := w.opts.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, u := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(u)
		}()
	}
	wg.Wait()
}

func (w *writer) resource(api reports.API, namespace string) dynamic.ResourceInterface {
	if namespace == "" {
		return w.dyn.Resource(api.GVR(false))
	}
	return w.dyn.Resource(api.GVR(true)).Namespace(namespace)
}

// existing lists flipflop's reports of an API, in every namespace and the
// cluster-scoped ones: those labelled as flipflop's and named as it names
// them. false when a list failed (the problem is recorded).
func (w *writer) existing(ctx context.Context, api reports.API) (map[key]*unstructured.Unstructured, bool) {
	out := map[key]*unstructured.Unstructured{}
	chunk := w.opts.ChunkSize
	if chunk == 0 {
		chunk = cluster.DefaultChunkSize
	}
	for _, namespaced := range []bool{true, false} {
		ri := w.dyn.Resource(api.GVR(namespaced))
		opts := metav1.ListOptions{LabelSelector: reports.ManagedByLabel + "=" + reports.ManagedBy, Limit: chunk}
		seen := map[string]bool{}
		for {
			l, err := ri.List(ctx, opts)
			if err != nil {
				res := api.Resource
				if !namespaced {
					res = api.ClusterResource
				}
				w.fail(describeList(api, res, err))
				return nil, false
			}
			for i := range l.Items {
				u := &l.Items[i]
				if managedName.MatchString(u.GetName()) {
					out[key{u.GetNamespace(), u.GetName()}] = u
				}
			}
			next := l.GetContinue()
			if next == "" || seen[next] {
				break
			}
			seen[next] = true
			opts.Continue = next
		}
	}
	return out, true
}

// results are the results of a report object, as maps (nil when malformed).
func results(u *unstructured.Unstructured) []map[string]any {
	list, _ := u.Object["results"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, r := range list {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// resultKey identifies a result by everything but its timestamp.
func resultKey(r map[string]any) string {
	c := make(map[string]any, len(r))
	for k, v := range r {
		if k != "timestamp" {
			c[k] = v
		}
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// same reports whether the report the API server holds says what want says:
// flipflop's label, the results and the summary (and an OpenReports
// report's source).
func same(have, want *unstructured.Unstructured) bool {
	if have.GetLabels()[reports.ManagedByLabel] != reports.ManagedBy {
		return false
	}
	for _, f := range []string{"results", "summary", "source", "scope"} {
		a, _ := json.Marshal(have.Object[f])
		b, _ := json.Marshal(want.Object[f])
		if string(a) != string(b) {
			return false
		}
	}
	return true
}

// describe says what failed for one report, and what to grant on a 403.
func describe(api reports.API, verb string, u *unstructured.Unstructured, err error) string {
	res, what := api.Resource, api.Kind+" "+u.GetNamespace()+"/"+u.GetName()
	if u.GetNamespace() == "" {
		res, what = api.ClusterResource, api.ClusterKind+" "+u.GetName()
	}
	msg := fmt.Sprintf("cannot %s %s (%s): %s", verb, what, api.GroupVersion(), message(err))
	if apierrors.IsForbidden(err) {
		verbs := "create and patch"
		if verb == "delete" {
			verbs = "delete"
		}
		msg += fmt.Sprintf("; grant %s on %s.%s (deploy/rbac.yaml, ClusterRole flipflop-report-writer)", verbs, res, api.Group)
	}
	return msg
}

func describeList(api reports.API, res string, err error) string {
	msg := fmt.Sprintf("cannot list flipflop's %s.%s: %s; no %s was written", res, api.Group, message(err), api)
	if apierrors.IsForbidden(err) {
		msg += fmt.Sprintf("; grant list on %s.%s (deploy/rbac.yaml, ClusterRole flipflop-report-writer)", res, api.Group)
	}
	return msg
}

// message is the API server's message of err, or err itself.
func message(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}
