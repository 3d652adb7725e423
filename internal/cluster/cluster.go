// Package cluster reads the objects flipflop checks from a live Kubernetes API
// server: Argo CD Applications and ApplicationSets, and Kargo Stages,
// PromotionTasks, ClusterPromotionTasks, Warehouses and Projects. It only ever
// gets and lists those kinds (never Secrets or anything else), in pages, and
// turns whatever it cannot read into evaluator.LoadError values that say what
// is missing from the result; everything that was read is still returned. The
// API server is not trusted either: lists are bounded in pages, and every
// response body in bytes after decompression (Options.MaxResponseBytes).
package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Resource is one kind flipflop reads.
type Resource struct {
	Group, Version, Resource, Kind string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool
	// ArgoCD marks the kinds read from Argo CD's namespaces (--argocd-namespace)
	// rather than from Kargo project namespaces (-n).
	ArgoCD bool
}

// GroupVersion is the resource's API group and version.
func (r Resource) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}
}

// String names the resource as kubectl does: "stages.kargo.akuity.io".
func (r Resource) String() string { return r.Resource + "." + r.Group }

// API groups flipflop reads.
const (
	ArgoCDGroup = "argoproj.io"
	KargoGroup  = "kargo.akuity.io"
)

// Resources lists every kind flipflop reads: the only resources it ever
// requests, and exactly what deploy/rbac.yaml grants.
var Resources = []Resource{
	{ArgoCDGroup, "v1alpha1", "applications", "Application", true, true},
	{ArgoCDGroup, "v1alpha1", "applicationsets", "ApplicationSet", true, true},
	{KargoGroup, "v1alpha1", "projects", "Project", false, false},
	{KargoGroup, "v1alpha1", "warehouses", "Warehouse", true, false},
	{KargoGroup, "v1alpha1", "stages", "Stage", true, false},
	{KargoGroup, "v1alpha1", "promotiontasks", "PromotionTask", true, false},
	{KargoGroup, "v1alpha1", "clusterpromotiontasks", "ClusterPromotionTask", false, false},
}

// DefaultArgoCDNamespace is where Applications are read when no Argo CD
// namespace is named.
const DefaultArgoCDNamespace = "argocd"

// DefaultChunkSize is the page size of list requests (kubectl's default).
const DefaultChunkSize = 500

// Options select what Read reads.
type Options struct {
	// Label names the source in Object.Path and LoadError.Path: "cluster" or
	// "cluster:<context>". Empty means "cluster".
	Label string
	// Namespaces are the Kargo project namespaces to read Stages, Warehouses,
	// PromotionTasks and Projects from; empty means every namespace.
	Namespaces []string
	// ArgoCDNamespaces are where Applications and ApplicationSets are read;
	// empty means DefaultArgoCDNamespace.
	ArgoCDNamespaces []string
	// AllNamespaces reads Applications and ApplicationSets from every namespace.
	AllNamespaces bool
	// ChunkSize is the page size of list requests; 0 lists in one request.
	ChunkSize int64
	// MaxPages bounds the pages of one list; 0 means DefaultMaxPages. A list
	// that goes on longer, or whose server hands back a continue token it gave
	// before, is stopped and reported as a load error.
	MaxPages int
	// MaxResponseBytes bounds every response body of the API server, in
	// bytes after decompression; 0 means DefaultMaxResponseBytes. A longer
	// response is cut there and reported as a load error naming what it was
	// for; the other resources are still read.
	MaxResponseBytes int64
	// KeepStatus keeps each object's status, for what reads what the cluster
	// observed (flipflop diagnose). Without it the status is dropped as the
	// object is read, before it is converted: the policies never read it
	// (TestPoliciesReadOnlyTheModelView), and a live Application's status
	// (its resources, history and last operation) is often larger than the
	// rest of it.
	KeepStatus bool
}

// DefaultMaxPages is the most pages one list may take: 10,000 pages of
// DefaultChunkSize objects, five million objects of one kind in one scope.
const DefaultMaxPages = 10000

func (o Options) maxPages() int {
	if o.MaxPages > 0 {
		return o.MaxPages
	}
	return DefaultMaxPages
}

func (o Options) label() string {
	if o.Label == "" {
		return "cluster"
	}
	return o.Label
}

// IsLive reports whether o was read from a cluster rather than a file.
func IsLive(o evaluator.Object) bool {
	return o.Path == "cluster" || strings.HasPrefix(o.Path, "cluster:")
}

// task is one get or list of one resource in one scope.
type task struct {
	res       Resource
	namespace string // "" for all namespaces or a cluster-scoped kind
	name      string // set for a get of one object (a Project named after a -n namespace)
}

// String names what the task reads, for error paths.
func (t task) String() string {
	switch {
	case t.name != "":
		return fmt.Sprintf("%s named %s", t.res, t.name)
	case !t.res.Namespaced:
		return t.res.String()
	case t.namespace == "":
		return t.res.String() + " in all namespaces"
	}
	return fmt.Sprintf("%s in namespace %s", t.res, t.namespace)
}

// plural is the kind as people say it: "Stages".
func (r Resource) plural() string { return r.Kind + "s" }

// concurrency bounds the requests in flight.
const concurrency = 4

// Read lists every selected resource through cfg and returns the objects read,
// and one LoadError for each thing that could not be read. When the API server
// cannot be reached or rejects the credentials, that is the only error and no
// object is returned.
func Read(ctx context.Context, cfg *rest.Config, opts Options) ([]evaluator.Object, []evaluator.LoadError) {
	label := opts.label()
	red := newRedactor(cfg)
	cfg = Guard(cfg, opts.maxResponseBytes())
	// client-go logs what it cannot read (a body cut at the bound, a
	// connection lost mid-body) to standard error on its own, raw; every
	// such error is reported here as a load error instead.
	ctx = klog.NewContext(ctx, logr.Discard())
	fail := func(what string, msg string) []evaluator.LoadError {
		return []evaluator.LoadError{{Path: label + what, Message: red.clean(msg)}}
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fail("", "cannot build a client for the API server: "+err.Error()+nothingRead)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fail("", "cannot build a client for the API server: "+err.Error()+nothingRead)
	}

	// Discovery first: it tells whether the server is reachable, accepts the
	// credentials, and serves Argo CD's and Kargo's APIs.
	var errs []evaluator.LoadError
	served := map[schema.GroupVersionResource]bool{}
	for _, gv := range groupVersions() {
		list, err := disc.ServerResourcesForGroupVersion(gv.String())
		if err != nil {
			if p := guardProblem(err); p != "" {
				errs = append(errs, evaluator.LoadError{Path: label + ": " + gv.String(), Message: red.clean("API discovery failed: " + p + "; " + kindsOf(gv) + " were not read: findings that involve them may be missing")})
				continue
			}
			if fatal := connectionProblem(err, cfg.Host); fatal != "" {
				return nil, fail("", fatal+nothingRead)
			}
			if apierrors.IsNotFound(err) {
				errs = append(errs, evaluator.LoadError{Path: label + ": " + gv.String(), Message: notServed(gv)})
			} else {
				errs = append(errs, evaluator.LoadError{Path: label + ": " + gv.String(), Message: red.clean("API discovery failed: " + err.Error() + "; " + kindsOf(gv) + " were not read: findings that involve them may be missing")})
			}
			continue
		}
		for _, r := range list.APIResources {
			served[gv.WithResource(r.Name)] = true
		}
	}

	var tasks []task
	for _, r := range Resources {
		// A kind missing from a served group is not installed in this version
		// (PromotionTasks came with Kargo v1.2): there are none to read.
		if !served[r.GroupVersion().WithResource(r.Resource)] {
			continue
		}
		tasks = append(tasks, tasksFor(r, opts)...)
	}

	// Each page is converted as it arrives, by the worker that read it, and
	// dropped: the client's decoded copy of the estate never exists whole
	// beside the one the evaluator reads.
	conv := func(u *unstructured.Unstructured) (evaluator.Object, error) {
		return toObject(u, label, opts.KeepStatus)
	}
	results := make([]result, len(tasks))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = run(ctx, dyn, t, conv, opts.ChunkSize, opts.maxPages())
		}()
	}
	wg.Wait()

	n := 0
	for _, res := range results {
		n += len(res.objs)
	}
	objs := make([]evaluator.Object, 0, n)
	for i := range results {
		res := &results[i]
		objs = append(objs, res.objs...)
		res.objs = nil
		for _, msg := range res.bad {
			errs = append(errs, evaluator.LoadError{Path: label + ": " + tasks[i].String(), Message: msg})
		}
		if res.err != nil {
			errs = append(errs, evaluator.LoadError{
				Path:    label + ": " + tasks[i].String(),
				Message: red.clean(describe(tasks[i], *res, cfg.Host)),
			})
		}
	}
	return objs, errs
}

const nothingRead = "; nothing was read from the cluster: the result covers only the files given, if any"

func groupVersions() []schema.GroupVersion {
	var gvs []schema.GroupVersion
	for _, r := range Resources {
		if !slices.Contains(gvs, r.GroupVersion()) {
			gvs = append(gvs, r.GroupVersion())
		}
	}
	return gvs
}

// kindsOf lists the kinds of a group version: "Stages, PromotionTasks and Projects".
func kindsOf(gv schema.GroupVersion) string {
	var names []string
	for _, r := range Resources {
		if r.GroupVersion() == gv {
			names = append(names, r.plural())
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func notServed(gv schema.GroupVersion) string {
	product := "Kargo"
	if gv.Group == ArgoCDGroup {
		product = "Argo CD"
	}
	return fmt.Sprintf("the API server does not serve %s: %s's CRDs are not installed in this cluster; %s were not read, so nothing that involves them could be checked",
		gv, product, kindsOf(gv))
}

// tasksFor expands a resource into the gets and lists the options select.
func tasksFor(r Resource, opts Options) []task {
	switch {
	case r.ArgoCD:
		if opts.AllNamespaces {
			return []task{{res: r}}
		}
		nss := opts.ArgoCDNamespaces
		if len(nss) == 0 {
			nss = []string{DefaultArgoCDNamespace}
		}
		return scoped(r, nss)
	case r.Kind == "Project" && len(opts.Namespaces) > 0:
		// A Project is cluster-scoped and named after its namespace: read only
		// the selected ones.
		var ts []task
		for _, ns := range dedupe(opts.Namespaces) {
			ts = append(ts, task{res: r, name: ns})
		}
		return ts
	case !r.Namespaced || len(opts.Namespaces) == 0:
		return []task{{res: r}}
	}
	return scoped(r, opts.Namespaces)
}

func scoped(r Resource, nss []string) []task {
	var ts []task
	for _, ns := range dedupe(nss) {
		ts = append(ts, task{res: r, namespace: ns})
	}
	return ts
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// result is what one task read: the objects converted, what could not be
// converted, and the error that stopped it.
type result struct {
	objs  []evaluator.Object
	bad   []string // an object that could not be converted, each
	read  int      // objects read, converted or not
	pages int
	err   error
}

// add converts one object read and adds it to the result.
func (r *result) add(u *unstructured.Unstructured, conv converter) {
	r.read++
	o, err := conv(u)
	if err != nil {
		r.bad = append(r.bad, err.Error())
		return
	}
	r.objs = append(r.objs, o)
}

// converter turns an object read into the evaluator's.
type converter func(*unstructured.Unstructured) (evaluator.Object, error)

// run executes one task: a get, or a list page by page. A list whose continue
// token expired mid-way (410 Gone) is restarted once from the beginning.
func run(ctx context.Context, dyn dynamic.Interface, t task, conv converter, chunk int64, maxPages int) result {
	ri := dyn.Resource(t.res.GroupVersion().WithResource(t.res.Resource))
	if t.name != "" {
		u, err := ri.Get(ctx, t.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return result{}
		}
		if err != nil {
			return result{err: err}
		}
		res := result{pages: 1}
		res.add(u, conv)
		return res
	}
	var rc dynamic.ResourceInterface = ri
	if t.res.Namespaced && t.namespace != "" {
		rc = ri.Namespace(t.namespace)
	}
	res := list(ctx, rc, conv, chunk, maxPages)
	if res.err != nil && apierrors.IsResourceExpired(res.err) {
		res = list(ctx, rc, conv, chunk, maxPages)
	}
	return res
}

// pagingError stops a list whose pages do not end: the server handed back a
// continue token it had given before, or the list passed the page cap.
type pagingError struct{ msg string }

func (e *pagingError) Error() string { return e.msg }

// list reads a list page by page, at most maxPages pages, and stops at a
// continue token seen before (a server that would make it loop forever).
// Each page's objects are converted before the next page is read.
func list(ctx context.Context, rc dynamic.ResourceInterface, conv converter, chunk int64, maxPages int) result {
	var res result
	opts := metav1.ListOptions{Limit: chunk}
	seen := map[string]bool{}
	for {
		if res.pages >= maxPages {
			res.err = &pagingError{fmt.Sprintf("the list did not end after %d pages (the most flipflop reads; raise --chunk-size if the list is really that long)", maxPages)}
			return res
		}
		l, err := rc.List(ctx, opts)
		if err != nil {
			res.err = err
			return res
		}
		res.pages++
		for i := range l.Items {
			item := &l.Items[i]
			if item.GetAPIVersion() == "" || item.GetKind() == "" {
				// Items of a list carry them, but do not rely on it.
				item.SetAPIVersion(l.GetAPIVersion())
				item.SetKind(strings.TrimSuffix(l.GetKind(), "List"))
			}
			res.add(item, conv)
		}
		next := l.GetContinue()
		if next == "" {
			return res
		}
		if seen[next] {
			res.err = &pagingError{"the API server handed back a continue token it had already given (a list that would never end); stopped"}
			return res
		}
		seen[next] = true
		opts.Continue = next
	}
}
