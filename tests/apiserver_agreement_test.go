package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/internal/kubetest"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// validatedKinds are the kinds invalid-object validates (the kinds of
// lib.flipflop.schemas), by API group.
var validatedKinds = map[string]bool{
	"argoproj.io/v1alpha1 Application":              true,
	"argoproj.io/v1alpha1 ApplicationSet":           true,
	"kargo.akuity.io/v1alpha1 Stage":                true,
	"kargo.akuity.io/v1alpha1 Warehouse":            true,
	"kargo.akuity.io/v1alpha1 PromotionTask":        true,
	"kargo.akuity.io/v1alpha1 ClusterPromotionTask": true,
}

// agreementCorpus is every corpus the tests read (absent ones are skipped).
var agreementCorpus = []string{"../../shared/corpus/real", "../../shared/corpus/real-world"}

// fuzzedObjects is how many mutants of the examples' and samples' objects the
// agreement test makes.
const fuzzedObjects = 1500

// invalid-object's verdict on an object is the API server's: every object of
// the kinds it validates, from the corpus, the examples, the rule samples and
// a fuzzed set (each a copy of one of theirs with one change: a value of
// another type, a key removed, an unknown key, an empty list, a string or a
// number out of what the schema allows), is created with a dry run on a real
// API server with Kargo's and Argo CD's released CRDs, and flipflop reports
// it exactly when the API server rejects it. The API server judges as it does
// when unknown fields are pruned (field validation Ignore): invalid-object
// says what the CRD's schema says. Where the two cannot agree, the reason is
// listed (apiServerOnly) and the test counts the objects.
func TestInvalidObjectAgreesWithTheAPIServer(t *testing.T) {
	env := kube.Env(t)
	bin := tool(t, "FLIPFLOP_BIN")
	// The API server warns of the finalizer names of Argo CD's examples,
	// thousands of times.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})

	type source struct {
		from string
		obj  *unstructured.Unstructured
	}
	var objs []source
	var bases []*unstructured.Unstructured
	read := func(file, name string, base bool) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := kubetest.Decode(b)
		if err != nil {
			return // not a manifest a cluster reads as it stands (a template)
		}
		for _, o := range reviewedObjects(decoded) {
			if !validatedKinds[o.GetAPIVersion()+" "+o.GetKind()] {
				continue
			}
			objs = append(objs, source{name, o})
			if base {
				bases = append(bases, o)
			}
		}
	}
	for _, pattern := range []string{"../examples/*/*.yaml", "../policies/rules/*/samples/*/*/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if filepath.Base(f) != "suite.yaml" {
				read(f, strings.TrimPrefix(f, "../"), true)
			}
		}
	}
	corpusObjects := 0
	for _, dir := range agreementCorpus {
		if _, err := os.Stat(dir); err != nil {
			t.Logf("corpus %s not present: left out", dir)
			continue
		}
		before := len(objs)
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				read(p, strings.TrimPrefix(p, "../../shared/"), false)
			}
			return nil
		})
		corpusObjects += len(objs) - before
	}
	rng := rand.New(rand.NewPCG(43, 1))
	for i := range fuzzedObjects {
		o, what := mutate(rng, bases[rng.IntN(len(bases))])
		objs = append(objs, source{fmt.Sprintf("fuzz %d (%s)", i, what), o})
	}

	// Every object gets a name of its own in one namespace, so that none meets
	// another in the API server or in flipflop's estate.
	const ns = "agreement"
	var stream strings.Builder
	for i := range objs {
		o := objs[i].obj.DeepCopy()
		o.SetName(fmt.Sprintf("agree-%05d", i))
		if o.GetKind() == "ClusterPromotionTask" {
			o.SetNamespace("")
		} else {
			o.SetNamespace(ns)
		}
		objs[i].obj = o
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		stream.WriteString("---\n")
		stream.Write(b)
	}
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(stream.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	flagged := invalidObjects(t, bin, file)

	// The API server's verdicts, four requests at a time.
	apiErrs := make([]error, len(objs))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				apiErrs[i] = env.DryRunCreateWith(ctx, objs[i].obj, metav1.FieldValidationIgnore)
			}
		}()
	}
	for i := range objs {
		next <- i
	}
	close(next)
	wg.Wait()

	cel := celMessages(t)
	reasons := map[string]int{}
	rejected, agreed := 0, 0
	for i, s := range objs {
		o := s.obj
		key := fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		err := apiErrs[i]
		if err != nil && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
			t.Errorf("%s (%s): the API server did not judge it: %v", s.from, key, err)
			continue
		}
		api, ff := err != nil, len(flagged[key]) > 0
		if api {
			rejected++
		}
		if api == ff {
			agreed++
			continue
		}
		if why := apiServerOnly(err, cel, o); api && why != "" {
			reasons[why]++
			continue
		}
		if api {
			t.Errorf("%s (%s): the API server rejects it and invalid-object says nothing: %v", s.from, key, err)
		} else {
			t.Errorf("%s (%s): invalid-object reports %q, but the API server accepts it", s.from, key, flagged[key])
		}
	}
	t.Logf("%d objects (%d from the corpus, %d fuzzed), %d rejected by the API server; %d verdicts the same", len(objs), corpusObjects, fuzzedObjects, rejected, agreed)
	whys := make([]string, 0, len(reasons))
	for why := range reasons {
		whys = append(whys, why)
	}
	sort.Strings(whys)
	for _, why := range whys {
		t.Logf("cannot agree on %d: %s", reasons[why], why)
	}
	if rejected < fuzzedObjects/4 {
		t.Errorf("only %d objects rejected: the fuzzed set does not exercise the schemas", rejected)
	}
}

// invalidObjects runs invalid-object alone over file and returns its
// messages by object ("Kind namespace/name").
func invalidObjects(t *testing.T, bin, file string) map[string][]string {
	t.Helper()
	stdout, stderr, code := runCmd(t, "..", bin, "check", "-o", "json", "--rule", "invalid-object", "--no-waivers", "--fail-on", "never", "--allow-empty", file)
	if code != 0 && code != 2 {
		t.Fatalf("flipflop check: exit %d: %s", code, stderr)
	}
	var report struct {
		Errors   []struct{ Message string } `json:"errors"`
		Findings []struct {
			Rule      string     `json:"rule"`
			Message   string     `json:"message"`
			Resources []resource `json:"resources"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("flipflop JSON: %v", err)
	}
	for _, e := range report.Errors {
		t.Errorf("flipflop: input error: %s", e.Message)
	}
	out := map[string][]string{}
	for _, f := range report.Findings {
		if f.Rule != "invalid-object" || len(f.Resources) == 0 {
			continue
		}
		r := f.Resources[0]
		key := fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
		out[key] = append(out[key], f.Message)
	}
	return out
}

// apiServerOnly says why the API server may reject o where invalid-object
// does not, when every cause of err is such a reason: a CEL rule of the CRD
// (x-kubernetes-validations: no JSON Schema keyword says it), ObjectMeta's
// checks (a label's syntax), or a legacy Stage flipflop reads as Kargo v0.8
// did; "" when some cause is a schema's.
func apiServerOnly(err error, cel []string, o *unstructured.Unstructured) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return ""
	}
	_, subscriptions := o.Object["spec"].(map[string]any)["subscriptions"]
	_, mechanisms := o.Object["spec"].(map[string]any)["promotionMechanisms"]
	var whys []string
	for _, c := range status.Status().Details.Causes {
		if strings.Contains(c.Message, "some validation rules were not checked because the object was invalid") {
			continue // the API server's note beside another cause
		}
		if o.GetKind() == "Stage" && c.Field == "spec.requestedFreight" && c.Type == metav1.CauseTypeFieldValueRequired && (subscriptions || mechanisms) {
			whys = append(whys, "a Stage written for Kargo v0.8 or earlier (spec.subscriptions, spec.promotionMechanisms): "+
				"with no Kargo version named, flipflop reads it as that Kargo did, which had no requestedFreight; the newest CRD requires one")
			continue
		}
		if strings.HasPrefix(c.Field, "metadata.") {
			whys = append(whys, "ObjectMeta's own checks (label syntax, names), which the API server runs on every kind and no CRD says")
			continue
		}
		i := slices.IndexFunc(cel, func(m string) bool { return strings.Contains(c.Message, m) })
		if i < 0 {
			return ""
		}
		whys = append(whys, fmt.Sprintf("a CEL rule of the CRD (x-kubernetes-validations), which no JSON Schema keyword says: %q", cel[i]))
	}
	if len(whys) == 0 {
		return ""
	}
	slices.Sort(whys)
	return strings.Join(slices.Compact(whys), "; ")
}

// celMessages are the messages of the CEL rules of the released CRDs.
func celMessages(t *testing.T) []string {
	t.Helper()
	kargo, err := upstream.KargoCRDs()
	if err != nil {
		t.Fatal(err)
	}
	argocd, err := upstream.ArgoCDCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range append(kargo, argocd...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd any
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if rules, ok := x["x-kubernetes-validations"].([]any); ok {
					for _, r := range rules {
						if m, ok := r.(map[string]any)["message"].(string); ok {
							out = append(out, m)
						}
					}
				}
				for _, c := range x {
					walk(c)
				}
			case []any:
				for _, c := range x {
					walk(c)
				}
			}
		}
		walk(crd)
	}
	return out
}

// mutate returns a copy of o with one change below spec (or to a label or an
// annotation), and what the change was.
func mutate(rng *rand.Rand, o *unstructured.Unstructured) (*unstructured.Unstructured, string) {
	c := o.DeepCopy()
	type node struct {
		path   []any
		parent any // the map or slice holding the node
		key    any // its key or index there
		value  any
	}
	var nodes []node
	var walk func(parent any, key any, v any, path []any)
	walk = func(parent any, key any, v any, path []any) {
		nodes = append(nodes, node{path, parent, key, v})
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				walk(x, k, x[k], append(slices.Clone(path), k))
			}
		case []any:
			for i, e := range x {
				walk(x, i, e, append(slices.Clone(path), i))
			}
		}
	}
	if spec, ok := c.Object["spec"]; ok {
		walk(c.Object, "spec", spec, []any{"spec"})
	}
	if md, ok := c.Object["metadata"].(map[string]any); ok {
		if v, ok := md["labels"]; ok {
			walk(md, "labels", v, []any{"metadata", "labels"})
		}
		// flipflop's own annotations (waivers) are its input, not the CRD's.
		if a, ok := md["annotations"].(map[string]any); ok {
			for _, k := range sortedKeys(a) {
				if !strings.HasPrefix(k, "flipflop.dev/") {
					walk(a, k, a[k], []any{"metadata", "annotations", k})
				}
			}
		}
	}
	if len(nodes) == 0 {
		c.Object["spec"] = 42.0
		return c, "spec: 42"
	}
	n := nodes[rng.IntN(len(nodes))]
	set := func(v any) {
		switch p := n.parent.(type) {
		case map[string]any:
			p[n.key.(string)] = v
		case []any:
			p[n.key.(int)] = v
		}
	}
	where := pathString(n.path)
	switch op := rng.IntN(7); {
	case op == 0: // a value of another type
		others := []any{42.0, "x", true, []any{}, map[string]any{}, nil, 1.5, []any{"x"}, map[string]any{"k": "v"}}
		v := others[rng.IntN(len(others))]
		set(v)
		return c, fmt.Sprintf("%s: %s", where, compact(v))
	case op == 1: // a key removed
		if p, ok := n.parent.(map[string]any); ok {
			delete(p, n.key.(string))
			return c, where + " removed"
		}
		set(nil)
		return c, where + ": null"
	case op == 2: // an unknown key
		if m, ok := n.value.(map[string]any); ok {
			m["flipflopUnknown"] = "x"
			return c, where + ".flipflopUnknown added"
		}
		set(map[string]any{"flipflopUnknown": "x"})
		return c, where + ": {flipflopUnknown: x}"
	case op == 3: // an empty list or object
		if _, ok := n.value.([]any); ok {
			set([]any{})
			return c, where + ": []"
		}
		set(map[string]any{})
		return c, where + ": {}"
	case op == 4: // a string no enum or pattern allows
		set("Not/A valid_Value!")
		return c, where + ": a string out of any enum or pattern"
	case op == 5: // a number out of bounds
		v := []any{-1.0, 0.0, 1e12, 2.5}[rng.IntN(4)]
		set(v)
		return c, fmt.Sprintf("%s: %v", where, v)
	default: // the string form of a scalar, or a scalar's other form
		switch x := n.value.(type) {
		case string:
			set(len(x) > 0)
			return c, where + ": a boolean for a string"
		case bool:
			set(fmt.Sprint(x))
			return c, where + ": a string for a boolean"
		case float64, int64:
			set(fmt.Sprint(x))
			return c, where + ": a string for a number"
		}
		set(nil)
		return c, where + ": null"
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func pathString(path []any) string {
	var b strings.Builder
	for i, p := range path {
		switch x := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, x)
		}
	}
	return b.String()
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
