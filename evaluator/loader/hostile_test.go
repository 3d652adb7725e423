package loader

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// mustRef is the path of keys into a value.
func mustRef(keys ...string) ast.Ref {
	r := make(ast.Ref, len(keys))
	for i, k := range keys {
		r[i] = ast.StringTerm(k)
	}
	return r
}

// contradictionFound checks the objects of examples/contradiction beside some
// hostile input: the real finding is still reported.
func contradictionFound(t *testing.T, objs []evaluator.Object) {
	t.Helper()
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		var names []string
		for _, res := range f.Resources {
			names = append(names, res.Namespace+"/"+res.Name)
		}
		if f.Rule == "shared-branch-contradiction" && slices.Contains(names, "acme/dev") && slices.Contains(names, "acme/qa") {
			return
		}
	}
	t.Fatalf("the contradiction of examples/contradiction is not reported beside the hostile input: %+v", r.Findings)
}

// writeHostile writes data as name in a new directory beside a copy of
// examples/contradiction, and returns the directory.
func writeHostile(t *testing.T, name string, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"kargo.yaml", "argocd.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/contradiction", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mergedMapping is a Stage whose labels merge n keys through <<, with two
// written ones that must win.
func mergedStage(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata:\n  name: merged\n  namespace: other\n  labels:\n    k0: written\n    <<:\n")
	for i := range n {
		fmt.Fprintf(&b, "      k%d: v\n", i)
	}
	return b.Bytes()
}

// probes converts the only object of data and returns the key probes spent
// building its mappings.
func probes(t *testing.T, data []byte) (int, int) {
	t.Helper()
	var node yaml.Node
	if err := yaml.Unmarshal(data, &node); err != nil {
		t.Fatal(err)
	}
	c := yamlConverter{}
	v, err := c.term(&node)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := v.Value.Find(mustRef("metadata", "labels"))
	if err != nil {
		t.Fatal(err)
	}
	return c.keyProbes, labels.(ast.Object).Len()
}

// Merge keys cost a constant number of key probes per key: linear, where
// the old key scan for mappings of few written pairs was quadratic (1 MB of
// merged keys took 33 s). The hostile Stage beside examples/contradiction
// loads with every key merged, the written one winning, and the real
// finding is still reported.
func TestMergeKeysLinear(t *testing.T) {
	race.Sequential(t)
	small, n1 := probes(t, mergedStage(2000))
	large, n2 := probes(t, mergedStage(16000))
	if n1 != 2000 || n2 != 16000 {
		t.Fatalf("merged %d and %d keys, want 2000 and 16000", n1, n2)
	}
	if small > 4*2000 || large > 4*16000 {
		t.Errorf("key probes: %d for 2,000 keys, %d for 16,000: not linear", small, large)
	}

	dir := writeHostile(t, "merge.yaml", mergedStage(50000))
	r := (&Loader{}).LoadAll([]string{dir})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	contradictionFound(t, r.Objects)
	for _, o := range r.Objects {
		if o.Name == "merged" {
			if v, err := o.Value.Find(mustRef("metadata", "labels", "k0")); err != nil || v.String() != `"written"` {
				t.Errorf("the written key lost to the merged one: %v", v)
			}
		}
	}
}

// A file of bare "---" lines is split in one pass: no document, no decoder,
// no allocation per marker (32 MiB of them cost 63 s and 2.65 GB).
func TestBareDocumentMarkersCheap(t *testing.T) {
	stage := []byte("apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: after-markers, namespace: other}\n")
	withMarkers := func(n int) []byte {
		return append(bytes.Repeat([]byte("---\n"), n), stage...)
	}
	for _, n := range []int{1, 100000} {
		data := withMarkers(n)
		allocs := testing.AllocsPerRun(3, func() {
			objs, errs, _ := decodeFile("m.yaml", data, true, NewAliasBudget().newSource())
			if len(objs) != 1 || len(errs) != 0 || objs[0].Line != n+1 {
				t.Fatalf("%d markers: %d objects, errors %v", n, len(objs), errs)
			}
		})
		if allocs > 2000 {
			t.Errorf("%d bare markers: %.0f allocations (one document's worth expected)", n, allocs)
		}
	}
	dir := writeHostile(t, "markers.yaml", withMarkers(200000))
	r := (&Loader{}).LoadAll([]string{dir})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	contradictionFound(t, r.Objects)
}

// Objects of kinds no rule reads are dropped before conversion and counted:
// 20,000 ConfigMaps beside examples/contradiction leave the 4 objects the
// rules read, and a ConfigMap that conversion would reject (a duplicate key)
// is not converted at all.
func TestUnreadKindsDroppedBeforeConversion(t *testing.T) {
	race.Sequential(t)
	var b bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata: {a: '1'}\n---\n", i)
	}
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n- {apiVersion: kargo.akuity.io/v1alpha1, kind: Stage, metadata: {name: listed, namespace: other}}\n")
	dir := writeHostile(t, "configmaps.yaml", b.Bytes())
	r := (&Loader{}).LoadAll([]string{dir})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	var kinds []string
	for _, o := range r.Objects {
		kinds = append(kinds, o.Kind+" "+o.Name)
	}
	slices.Sort(kinds)
	want := []string{"Application dev", "Application qa", "Stage dev", "Stage listed", "Stage qa", "Warehouse app"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kept %v, want %v", kinds, want)
	}
	// The Project of examples/contradiction, the ConfigMaps and the Secret.
	if r.Skipped != 1+20000+1 {
		t.Errorf("skipped %d, want %d", r.Skipped, 1+20000+1)
	}
	contradictionFound(t, r.Objects)

	bad := []byte("apiVersion: v1\nkind: ConfigMap\ndata: {a: '1', a: '2'}\n")
	if _, errs, skipped := decodeFile("cm.yaml", bad, true, NewAliasBudget().newSource()); len(errs) != 0 || skipped != 1 {
		t.Errorf("filtered: errors %v, skipped %d: the ConfigMap was converted", errs, skipped)
	}
	if objs, errs := LoadBytes("cm.yaml", bad); len(errs) != 0 || len(objs) != 1 || len(objs[0].Duplicates) != 1 {
		t.Errorf("unfiltered: errors %v, objects %+v: want the ConfigMap with its repeated key", errs, objs)
	}
}

// utf16 encodes s as UTF-16 with a byte order mark.
func utf16Text(s string, big bool) []byte {
	var out []byte
	put := func(u uint16) {
		if big {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	put(0xfeff)
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			put(uint16(0xd800 + r>>10))
			put(uint16(0xdc00 + r&0x3ff))
			continue
		}
		put(uint16(r))
	}
	return out
}

// examples/contradiction saved as UTF-16 (little and big endian, with byte
// order marks; UTF-32 too) is read as YAML reads it, and the contradiction is
// found; a Latin-1 file beside it is reported at the line of its first
// non-UTF-8 byte, not at line 1; a truncated UTF-16 file is refused saying so.
func TestEncodings(t *testing.T) {
	kargo, _ := os.ReadFile("../../examples/contradiction/kargo.yaml")
	argo, _ := os.ReadFile("../../examples/contradiction/argocd.yaml")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "kargo.yaml"), utf16Text(string(kargo)+"# ünïcödé 𝄞\n", true), 0o644)
	os.WriteFile(filepath.Join(dir, "argocd.yaml"), utf16Text(string(argo), false), 0o644)
	os.WriteFile(filepath.Join(dir, "latin1.yaml"), []byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: x\n  labels: {owner: Jos\xe9}\n"), 0o644)
	cut := utf16Text("apiVersion: v1\n", false)
	os.WriteFile(filepath.Join(dir, "cut.yaml"), cut[:len(cut)-1], 0o644)
	r := (&Loader{}).LoadAll([]string{dir})
	contradictionFound(t, r.Objects)
	var got []string
	for _, e := range r.Errors {
		got = append(got, fmt.Sprintf("%s:%d: %s", filepath.Base(e.Path), e.Line, e.Message))
	}
	want := []string{
		"cut.yaml:1: UTF-16LE text: an odd number of bytes: the last character is cut",
		"latin1.yaml:5: invalid UTF-8: byte 0xe9 at column 22 (Latin-1 or another legacy encoding? YAML files are UTF-8, UTF-16 or UTF-32)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// UTF-32 big endian with a byte order mark, and UTF-16 without one.
	var u32 []byte
	for _, r := range "\ufeffapiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: wide, namespace: p}\n" {
		u32 = append(u32, byte(r>>24), byte(r>>16), byte(r>>8), byte(r))
	}
	noBOM := utf16Text("apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: nobom, namespace: p}\n", false)[2:]
	for name, data := range map[string][]byte{"utf32": u32, "utf16-no-bom": noBOM} {
		objs, errs := LoadBytes(name, data)
		if len(errs) != 0 || len(objs) != 1 || objs[0].Kind != "Stage" || objs[0].Line != 1 {
			t.Errorf("%s: %v %v", name, objs, errs)
		}
	}
}
