// Command gatekeeper times one Gatekeeper admission review of a Kargo Stage
// against a synced inventory of generated Applications, Stages,
// ApplicationSets and PromotionTasks, through the driver path gator uses: the
// frameworks constraint client with the Rego driver (gator.NewOPAClient), the
// template and constraint added, the inventory added as data, then Review.
// The same review with a template that only reads data.inventory and counts
// the Applications is the floor: what reading the inventory costs.
//
// It lives in its own Go module so that Gatekeeper never becomes a dependency
// of flipflop; it reads the estate from files (written by hack/bench) and
// depends on nothing of flipflop's.
//
//	gatekeeper -dir ESTATE -template T.yaml -constraint C.yaml -apps 2000,10000 -runs 5
//
// prints one JSON object per inventory size on standard output.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/open-policy-agent/frameworks/constraint/pkg/apis"
	constraintclient "github.com/open-policy-agent/frameworks/constraint/pkg/client"
	"github.com/open-policy-agent/frameworks/constraint/pkg/client/reviews"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/reader"
	mutationtypes "github.com/open-policy-agent/gatekeeper/v3/pkg/mutation/types"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/target"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/util"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

// Result is what one inventory size measured; hack/bench reads it.
type Result struct {
	Applications int    `json:"applications"` // Applications in the inventory
	Objects      int    `json:"objects"`      // every object in the inventory
	Stage        string `json:"stage"`        // namespace/name of the reviewed Stage
	Violations   int    `json:"violations"`   // the template's violations for that Stage
	FloorCount   string `json:"floor_count"`  // the floor template's message (the Applications it counted)
	// ReviewMS and FloorMS are the review times of each run, in milliseconds,
	// the two measured back to back in the same run; Ratios is ReviewMS/FloorMS per run.
	ReviewMS []float64 `json:"review_ms"`
	// ReviewCPUMS is the CPU time the process used during each of those
	// reviews (user and system, the collector's included): on a shared,
	// loaded machine a steadier measure of a review than its wall time.
	ReviewCPUMS []float64 `json:"review_cpu_ms"`
	FloorMS     []float64 `json:"floor_ms"`
	Ratios      []float64 `json:"ratios"`
	// AddDataMS is the time to add the whole inventory to one client.
	AddDataMS float64 `json:"add_data_ms"`
	// TimedOut is set when a review took longer than -timeout: the runs stop
	// there. Fewer runs than asked also means the -budget was spent.
	TimedOut bool `json:"timed_out,omitempty"`
}

func main() {
	dir := flag.String("dir", "", "estate directory (YAML files, read in sorted order)")
	templ := flag.String("template", "bundles/gatekeeper/template.yaml", "ConstraintTemplate files, comma-separated")
	constraint := flag.String("constraint", "bundles/gatekeeper/constraint.yaml", "constraint files, comma-separated (reviewed together)")
	floor := flag.String("floor", "hack/bench/gatekeeper/floor-template.yaml", "floor ConstraintTemplate and constraint file (none: no floor)")
	apps := flag.String("apps", "2000,10000", "inventory sizes, in Applications")
	runs := flag.Int("runs", 5, "timed reviews per inventory size (after one warm-up review)")
	timeout := flag.Duration("timeout", 3*time.Minute, "stop the runs of a size after a review slower than this")
	budget := flag.Duration("budget", time.Minute, "after the first run, do only as many runs as fit in this time per size (at least one)")
	version := flag.Bool("version", false, "print the Gatekeeper, frameworks and OPA module versions and exit")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file at its end (go tool pprof -sample_index=alloc_space)")
	flag.IntVar(&statusEntries, "status", 0, "give every inventory object a status of this many entries, as live objects carry (a Stage's freight history, an Application's resource list); 0: none, as the files have")
	flag.StringVar(&form, "form", form, "how the Stage is reviewed: audit (the object alone), status (an UPDATE of status only), update (an UPDATE adding a label)")
	flag.Parse()
	if *version {
		fmt.Println(versions())
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gatekeeper bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*dir, *templ, *constraint, *floor, *apps, *runs, *timeout, *budget); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "gatekeeper bench:", err)
		os.Exit(1)
	}
	if *memprofile != "" {
		err := writeProfile(*memprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gatekeeper bench:", err)
			os.Exit(1)
		}
	}
}

func versions() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	names := map[string]string{
		"github.com/open-policy-agent/gatekeeper/v3":         "Gatekeeper",
		"github.com/open-policy-agent/frameworks/constraint": "frameworks/constraint",
		"github.com/open-policy-agent/opa":                   "OPA",
	}
	var out []string
	for _, d := range bi.Deps {
		if n, ok := names[d.Path]; ok {
			out = append(out, n+" "+d.Version)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func run(dir, templ, constraint, floor, appsFlag string, runs int, timeout, budget time.Duration) error {
	if dir == "" {
		return errors.New("-dir is required")
	}
	var sizes []int
	for _, s := range strings.Split(appsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-apps: bad size %q", s)
		}
		sizes = append(sizes, n)
	}
	estate, err := readDir(dir)
	if err != nil {
		return err
	}
	// -template and -constraint may each list several files (comma-separated):
	// every constraint is then reviewed together, as Gatekeeper does.
	policy, err := readFiles(append(strings.Split(templ, ","), strings.Split(constraint, ",")...)...)
	if err != nil {
		return err
	}
	// -floor none measures the review alone (no second client holding the
	// inventory: what a Gatekeeper pod holds, for its peak memory).
	var floorPolicy []*unstructured.Unstructured
	if floor != "none" {
		if floorPolicy, err = readFiles(floor); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(os.Stdout)
	for _, n := range sizes {
		inv, ok := inventory(estate, n)
		if !ok {
			return fmt.Errorf("%s holds fewer than %d Applications", dir, n)
		}
		res, err := measure(inv, policy, floorPolicy, runs, timeout, budget)
		if err != nil {
			return fmt.Errorf("%d Applications: %w", n, err)
		}
		res.Applications = n
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return nil
}

// readDir reads every .yaml, .yml and .json file under dir, in sorted order.
func readDir(dir string) ([]*unstructured.Unstructured, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return readFiles(files...)
}

func readFiles(files ...string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		o, err := reader.ReadK8sResources(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// inventory is the estate's objects up to and including its n-th Application:
// a GitOps repository's first n Applications and what sits beside them.
func inventory(estate []*unstructured.Unstructured, n int) ([]*unstructured.Unstructured, bool) {
	apps := 0
	for i, o := range estate {
		if o.GetKind() == "Application" {
			apps++
			if apps == n {
				return estate[:i+1], true
			}
		}
	}
	return nil, false
}

var scheme = func() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// newClient builds a client the way gator does and adds the templates, then
// the constraints, then the inventory as data.
func newClient(ctx context.Context, policy, inv []*unstructured.Unstructured) (*constraintclient.Client, time.Duration, error) {
	c, err := opaClient()
	if err != nil {
		return nil, 0, err
	}
	client := c.(*constraintclient.Client)
	for _, o := range policy {
		if !reader.IsTemplate(o) {
			continue
		}
		t, err := reader.ToTemplate(scheme, o)
		if err != nil {
			return nil, 0, fmt.Errorf("template %s: %w", o.GetName(), err)
		}
		if _, err := client.AddTemplate(ctx, t); err != nil {
			return nil, 0, fmt.Errorf("adding template %s: %w", o.GetName(), err)
		}
	}
	for _, o := range policy {
		if reader.IsConstraint(o) {
			if _, err := client.AddConstraint(ctx, o); err != nil {
				return nil, 0, fmt.Errorf("adding constraint %s: %w", o.GetName(), err)
			}
		}
	}
	start := time.Now()
	for _, o := range inv {
		if statusEntries > 0 {
			o = o.DeepCopy()
			o.Object["status"] = liveStatus(statusEntries)
		}
		if _, err := client.AddData(ctx, o); err != nil {
			return nil, 0, fmt.Errorf("adding %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	return client, time.Since(start), nil
}

// statusEntries is the size of the status every inventory object gets (-status).
var statusEntries int

// liveStatus is a status of n entries, shaped like a live Stage's freight
// history (an Application's resource list is as deep): what the synced
// objects of a cluster carry and the files do not.
func liveStatus(n int) map[string]any {
	history := make([]any, 0, n)
	for i := range n {
		history = append(history, map[string]any{
			"name":   fmt.Sprintf("freight-%04d", i),
			"origin": map[string]any{"kind": "Warehouse", "name": "main"},
			"commits": []any{map[string]any{
				"repoURL": "https://git.example.com/platform/other.git",
				"id":      fmt.Sprintf("%040d", i),
				"branch":  "main",
			}},
		})
	}
	return map[string]any{"phase": "Steady", "freightHistory": history}
}

// form is how the reviewed Stage is reviewed (-form): "audit" (the object
// alone, as audit and gator test review it), "status" (an admission UPDATE
// whose old object differs in status only: Argo CD's and Kargo's status
// writes), "update" (an admission UPDATE that adds a label: a change the
// model reads, so the rules run, on the estate before the change too when a
// finding involves the Stage).
var form = "audit"

func review(ctx context.Context, c *constraintclient.Client, o *unstructured.Unstructured) (time.Duration, []string, error) {
	d, _, msgs, err := reviewCPU(ctx, c, o)
	return d, msgs, err
}

// reviewCPU is review, with the CPU time the process used during it.
func reviewCPU(ctx context.Context, c *constraintclient.Client, o *unstructured.Unstructured) (time.Duration, time.Duration, []string, error) {
	var obj any = target.AugmentedUnstructured{Object: *o, Source: mutationtypes.SourceTypeOriginal}
	if form != "audit" {
		old := o.DeepCopy()
		cur := o.DeepCopy()
		switch form {
		case "status":
			if err := unstructured.SetNestedField(old.Object, "Steady", "status", "phase"); err != nil {
				return 0, 0, nil, err
			}
		case "update":
			labels := cur.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels["flipflop.dev/bench"] = "changed"
			cur.SetLabels(labels)
		default:
			return 0, 0, nil, fmt.Errorf("-form %q: want audit, status or update", form)
		}
		newRaw, err := cur.MarshalJSON()
		if err != nil {
			return 0, 0, nil, err
		}
		oldRaw, err := old.MarshalJSON()
		if err != nil {
			return 0, 0, nil, err
		}
		gvk := o.GroupVersionKind()
		obj = &target.AugmentedReview{
			AdmissionRequest: &admissionv1.AdmissionRequest{
				UID:       "bench",
				Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
				Name:      o.GetName(),
				Namespace: o.GetNamespace(),
				Operation: admissionv1.Update,
				Object:    k8sruntime.RawExtension{Raw: newRaw},
				OldObject: k8sruntime.RawExtension{Raw: oldRaw},
			},
			Source:      mutationtypes.SourceTypeOriginal,
			IsAdmission: true,
		}
	}
	start, startCPU := time.Now(), cpuTime()
	resp, err := c.Review(ctx, obj, reviews.EnforcementPoint(util.GatorEnforcementPoint))
	d, cpu := time.Since(start), cpuTime()-startCPU
	if err != nil {
		return d, cpu, nil, err
	}
	var msgs []string
	for _, r := range resp.Results() {
		msgs = append(msgs, r.Msg)
	}
	return d, cpu, msgs, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func measure(inv, policy, floorPolicy []*unstructured.Unstructured, runs int, timeout, budget time.Duration) (*Result, error) {
	ctx := context.Background()
	res := &Result{Objects: len(inv), ReviewMS: []float64{}, ReviewCPUMS: []float64{}, FloorMS: []float64{}, Ratios: []float64{}}
	client, addData, err := newClient(ctx, policy, inv)
	if err != nil {
		return nil, err
	}
	res.AddDataMS = ms(addData)
	var floorClient *constraintclient.Client
	if floorPolicy != nil {
		if floorClient, _, err = newClient(ctx, floorPolicy, inv); err != nil {
			return nil, err
		}
	}

	// The reviewed Stage: the first of the inventory the template reports
	// (a Stage of a contradiction), else the first Stage. These reviews are
	// also the warm-up.
	var stage *unstructured.Unstructured
	tried := 0
	for _, o := range inv {
		if o.GetKind() != "Stage" {
			continue
		}
		if stage == nil {
			stage = o
		}
		d, msgs, err := review(ctx, client, o)
		if err != nil {
			return nil, err
		}
		if len(msgs) > 0 {
			stage = o
			break
		}
		if tried++; tried == 10 || d > timeout {
			break
		}
	}
	if stage == nil {
		return nil, errors.New("no Stage in the inventory")
	}
	res.Stage = stage.GetNamespace() + "/" + stage.GetName()
	if floorClient != nil {
		if _, _, err := review(ctx, floorClient, stage); err != nil {
			return nil, err
		}
	}

	for i := 0; i < runs; i++ {
		runtime.GC()
		d, cpu, msgs, err := reviewCPU(ctx, client, stage)
		if err != nil {
			return nil, err
		}
		var f time.Duration
		var floorMsgs []string
		if floorClient != nil {
			runtime.GC()
			if f, floorMsgs, err = review(ctx, floorClient, stage); err != nil {
				return nil, err
			}
		}
		res.Violations = len(msgs)
		if len(floorMsgs) == 1 {
			res.FloorCount = floorMsgs[0]
		}
		res.ReviewMS = append(res.ReviewMS, ms(d))
		res.ReviewCPUMS = append(res.ReviewCPUMS, ms(cpu))
		if floorClient != nil {
			res.FloorMS = append(res.FloorMS, ms(f))
			res.Ratios = append(res.Ratios, ms(d)/ms(f))
		}
		if d > timeout {
			res.TimedOut = true
			break
		}
		if i == 0 && d+f > 0 {
			runs = min(runs, max(1, int(budget/(d+f))))
		}
	}
	return res, nil
}

// writeProfile writes the allocation profile to path, never through a
// symbolic link (this module cannot import flipflop's internal/safefile).
func writeProfile(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: give a path that is not one", path)
	}
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
