package loader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// kubeNames decodes data as Argo CD's repo server reads a YAML manifest file
// (splitYAMLOrJSON: apimachinery's YAMLOrJSONDecoder into Unstructured, which
// kubectl's builder uses too) and returns the objects, in order, each as
// apiVersion/namespace/name.
func kubeNames(data []byte) ([]string, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var names []string
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u); err != nil {
			if errors.Is(err, io.EOF) {
				return names, nil
			}
			return names, err
		}
		if u != nil {
			names = append(names, u.GetAPIVersion()+"/"+u.GetNamespace()+"/"+u.GetName())
		}
	}
}

func objectNames(objs []evaluator.Object) []string {
	var names []string
	for _, o := range objs {
		names = append(names, o.APIVersion+"/"+o.Namespace+"/"+o.Name)
	}
	return names
}

// A Stage file whose line breaks are CR (old Mac), NEL, LS or PS is read as
// the Kubernetes decoder reads it: it splits documents only at LF, and go-yaml
// breaks lines at every one of them, so a file that starts with a comment was
// dropped unread. Where it reads less than the file holds (a document after a
// marker that only a CR separates, which go-yaml reads as a second document of
// the same part and the decoder never looks at), that is an input error at
// its line. Lines are counted as go-yaml counts them (CR LF is one break).
func TestLoadBytesLineBreaks(t *testing.T) {
	stage := func(brk, name string) string {
		return strings.Join([]string{"apiVersion: kargo.akuity.io/v1alpha1", "kind: Stage", "metadata:", "  name: " + name, "  namespace: acme"}, brk) + brk
	}
	tests := []struct {
		name, src string
		objects   []objectSummary
		errs      []string
	}{
		{"CR, a comment first", "# generated\r" + stage("\r", "old-mac"), []objectSummary{{"b.yaml", 2, "kargo.akuity.io/v1alpha1", "Stage", "acme", "old-mac"}}, nil},
		{"NEL ends the comment", "# generated\u0085" + stage("\u0085", "nel"), []objectSummary{{"b.yaml", 2, "kargo.akuity.io/v1alpha1", "Stage", "acme", "nel"}}, nil},
		{"LS", "# c\u2028" + stage("\u2028", "ls"), []objectSummary{{"b.yaml", 2, "kargo.akuity.io/v1alpha1", "Stage", "acme", "ls"}}, nil},
		{"PS", "# c\u2029" + stage("\u2029", "ps"), []objectSummary{{"b.yaml", 2, "kargo.akuity.io/v1alpha1", "Stage", "acme", "ps"}}, nil},
		{"CR, then LF documents: lines as go-yaml counts them", "# c\r# d\r\n" + stage("\n", "a") + "---\n" + stage("\n", "b"),
			[]objectSummary{{"b.yaml", 3, "kargo.akuity.io/v1alpha1", "Stage", "acme", "a"}, {"b.yaml", 9, "kargo.akuity.io/v1alpha1", "Stage", "acme", "b"}}, nil},
		{"CR, two documents: the decoder reads the first", "# c\r" + stage("\r", "first") + "---\r" + stage("\r", "second"),
			[]objectSummary{{"b.yaml", 2, "kargo.akuity.io/v1alpha1", "Stage", "acme", "first"}},
			[]string{"b.yaml:8: a YAML document starts here after a line break that is not LF (CR, NEL, LS or PS): kubectl and Argo CD split documents only at LF, and read only the first document up to the next LF \"---\" line; this one is not read (use LF line breaks)"}},
		{"a marker line going on after CR, first in the file: read", "--- # c\rapiVersion: kargo.akuity.io/v1alpha1\rkind: Stage\rmetadata: {name: kept, namespace: acme}\n",
			[]objectSummary{{"b.yaml", 2, "kargo.akuity.io/v1alpha1", "Stage", "acme", "kept"}}, nil},
		{"a marker line going on after CR, after a document: dropped", stage("\n", "a") + "--- # c\rkind: Stage\rmetadata: {name: hidden, namespace: acme}\n",
			[]objectSummary{{"b.yaml", 1, "kargo.akuity.io/v1alpha1", "Stage", "acme", "a"}},
			[]string{"b.yaml:6: a \"---\" line goes on after a line break that is not LF (CR, NEL, LS or PS): kubectl and Argo CD take the whole line for a document separator and drop it, with what follows the break; it is not read (use LF line breaks)"}},
		{"a marker and a document after CR: an invalid separator", "---\rkind: Stage\rmetadata: {name: x, namespace: acme}\n---\n" + stage("\n", "after"),
			[]objectSummary{{"b.yaml", 5, "kargo.akuity.io/v1alpha1", "Stage", "acme", "after"}},
			[]string{"b.yaml:1: a \"---\" line goes on after a line break that is not LF (CR, NEL, LS or PS): kubectl and Argo CD refuse it as an invalid document separator and read no more of the file; it is not read (use LF line breaks)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, filtered := range []bool{false, true} {
				var objs []evaluator.Object
				var errs []evaluator.LoadError
				if filtered {
					objs, errs, _ = LoadBytesFiltered("b.yaml", []byte(tc.src))
				} else {
					objs, errs = LoadBytes("b.yaml", []byte(tc.src))
				}
				wantObjects(t, objs, tc.objects)
				var got []string
				for _, e := range errs {
					got = append(got, e.Error())
				}
				if !slices.Equal(got, tc.errs) {
					t.Errorf("filtered %v: errors\n got %q\nwant %q", filtered, got, tc.errs)
				}
			}
		})
	}
}

// flipflop reads what the Kubernetes decoder reads (Argo CD's and kubectl's),
// whatever the line breaks, or says it cannot: on streams of Stages, comments
// and markers joined by every line break go-yaml knows, the objects are the
// decoder's, without an error, whenever the decoder reads every Stage of the
// file whole; when it reads less (dropping a Stage or a line of one
// silently) or fails, flipflop reports an input error, and reads no object
// the decoder does not.
func TestLineBreaksAgreeWithKubernetesDecoder(t *testing.T) {
	breaks := []string{"\n", "\n", "\n", "\r\n", "\r", "\u0085", "\u2028", "\u2029"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	exact, loud := 0, 0
	for i := range 3000 {
		var b strings.Builder
		var all []string
		for j := range 1 + rng.IntN(3) {
			if rng.IntN(3) == 0 {
				b.WriteString("# comment" + pick(breaks))
			}
			if j > 0 || rng.IntN(3) == 0 {
				b.WriteString(pick([]string{"---", "--- # c", "---"}) + pick(breaks))
			}
			name := fmt.Sprintf("s%d", j)
			all = append(all, "kargo.akuity.io/v1alpha1/acme/"+name)
			for _, line := range []string{"apiVersion: kargo.akuity.io/v1alpha1", "kind: Stage", "metadata:", "  name: " + name, "  namespace: acme"} {
				b.WriteString(line + pick(breaks))
			}
		}
		src := b.String()
		want, kerr := kubeNames([]byte(src))
		objs, errs := LoadBytes("b.yaml", []byte(src))
		got := objectNames(objs)
		switch {
		case kerr == nil && slices.Equal(want, all):
			if !slices.Equal(got, want) || len(errs) > 0 {
				t.Fatalf("%d: %q: the decoder reads %v; flipflop %v, %v", i, src, want, got, errs)
			}
			exact++
		default:
			if len(errs) == 0 {
				t.Fatalf("%d: %q: the decoder reads %v (error %v) of %v; flipflop %v without an error", i, src, want, kerr, all, got)
			}
			for _, n := range got {
				if !slices.Contains(want, n) && kerr == nil {
					t.Fatalf("%d: %q: flipflop reads %s, which the decoder does not (%v)", i, src, n, want)
				}
			}
			loud++
		}
	}
	t.Logf("%d streams read as the decoder reads them, %d with an input error", exact, loud)
}

// examples/contradiction with each document in a file of its own, the Kargo
// ones in CR line breaks and the Argo CD ones in NEL ones, each starting with
// a comment: the contradiction is found, as Argo CD would read the files.
// (Joined in one file by such breaks, the decoder reads the first document
// only: TestLoadBytesLineBreaks.)
func TestContradictionFoundWhateverTheLineBreaks(t *testing.T) {
	race.Sequential(t)
	var objs []evaluator.Object
	for f, brk := range map[string]string{"kargo.yaml": "\r", "argocd.yaml": "\u0085"} {
		b, err := os.ReadFile(filepath.Join("../../examples/contradiction", f))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(b), "\n---\n") {
			data := []byte("# converted" + brk + strings.ReplaceAll(doc, "\n", brk))
			o, errs := LoadBytes(fmt.Sprintf("%s.%d", f, i), data)
			wantNoErrors(t, errs)
			objs = append(objs, o...)
		}
	}
	contradictionFound(t, objs)
}
