package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/fifotest"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// objectSummary is the part of an Object the tests compare.
type objectSummary struct {
	Path                              string
	Line                              int
	APIVersion, Kind, Namespace, Name string
}

func summarize(t *testing.T, objs []evaluator.Object) []objectSummary {
	t.Helper()
	out := []objectSummary{}
	for _, o := range objs {
		if _, ok := o.Value.(ast.Object); !ok {
			t.Fatalf("object %s:%d has Value %T, want ast.Object", o.Path, o.Line, o.Value)
		}
		out = append(out, objectSummary{o.Path, o.Line, o.APIVersion, o.Kind, o.Namespace, o.Name})
	}
	return out
}

func wantObjects(t *testing.T, got []evaluator.Object, want []objectSummary) {
	t.Helper()
	if want == nil {
		want = []objectSummary{}
	}
	if s := summarize(t, got); !reflect.DeepEqual(s, want) {
		t.Fatalf("objects:\n got %+v\nwant %+v", s, want)
	}
}

func wantNoErrors(t *testing.T, errs []evaluator.LoadError) {
	t.Helper()
	if len(errs) > 0 {
		t.Fatalf("unexpected load errors: %v", errs)
	}
}

func readFixture(t *testing.T, name string) (string, []byte) {
	t.Helper()
	path := "testdata/load/" + name
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// field returns the value at a path of keys in an object.
func field(t *testing.T, o evaluator.Object, keys ...string) ast.Value {
	t.Helper()
	v := o.Value
	for _, k := range keys {
		obj, ok := v.(ast.Object)
		if !ok {
			t.Fatalf("%v is not an object", v)
		}
		term := obj.Get(ast.StringTerm(k))
		if term == nil {
			t.Fatalf("no key %q in %v", k, v)
		}
		v = term.Value
	}
	return v
}

func wantValue(t *testing.T, got ast.Value, want string) {
	t.Helper()
	w := ast.MustParseTerm(want).Value
	if got.Compare(w) != 0 {
		t.Fatalf("got %v, want %v", got, w)
	}
}

func TestLoadBytesMultiDocBrokenMiddle(t *testing.T) {
	path, data := readFixture(t, "multidoc_broken.yaml")
	objs, errs := LoadBytes(path, data)
	wantObjects(t, objs, []objectSummary{
		{path, 2, "v1", "ConfigMap", "ns1", "first"},
		{path, 14, "v1", "ConfigMap", "", "third"},
	})
	want := []evaluator.LoadError{{Path: path, Line: 12, Message: "mapping values are not allowed in this context"}}
	if !reflect.DeepEqual(errs, want) {
		t.Fatalf("errors = %v, want %v", errs, want)
	}
	if got := errs[0].Error(); got != path+":12: mapping values are not allowed in this context" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestLoadBytesMultiDocLines(t *testing.T) {
	path, data := readFixture(t, "multidoc.yaml")
	objs, errs := LoadBytes(path, data)
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{
		{path, 4, "argoproj.io/v1alpha1", "Application", "argocd", "app-a"},
		{path, 11, "v1", "Namespace", "", "inline"},
		{path, 24, "kargo.akuity.io/v1alpha1", "Stage", "kargo-demo", "test"},
	})
	wantValue(t, field(t, objs[2], "spec"), `{"replicas": 3}`)
	if n, ok := field(t, objs[2], "spec", "replicas").(ast.Number); !ok || n != "3" {
		t.Fatalf("replicas = %#v, want ast.Number 3", field(t, objs[2], "spec", "replicas"))
	}
}

func TestLoadBytesListExpansion(t *testing.T) {
	path, data := readFixture(t, "list.yaml")
	objs, errs := LoadBytes(path, data)
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{
		{path, 4, "v1", "ConfigMap", "", "one"},
		{path, 8, "v1", "ConfigMap", "other", "two"},
		{path, 19, "kargo.akuity.io/v1alpha1", "Stage", "kargo", "s1"},
		{path, 27, "example.com/v1", "AllowList", "", ""},
	})
	// Items of a typed list get the kind and apiVersion the API omits.
	wantValue(t, objs[2].Value, `{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": {"name": "s1", "namespace": "kargo"}}`)
	// A kind ending in List without an items sequence is an ordinary object.
	wantValue(t, field(t, objs[3], "spec", "items"), `["a", "b"]`)

	// Items of a plain List without kind are skipped; non-mapping items too.
	objs, errs = LoadBytes("l.yaml", []byte("apiVersion: v1\nkind: List\nitems:\n- metadata: {name: x}\n- 3\n- kind: Pod\n  metadata: {name: p}\n"))
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{{"l.yaml", 6, "", "Pod", "", "p"}})
	// A List with null or no items is empty.
	for _, src := range []string{"kind: List\nitems: null\n", "kind: List\n", "apiVersion: v1\nkind: List\nitems: []\n"} {
		objs, errs = LoadBytes("l.yaml", []byte(src))
		wantNoErrors(t, errs)
		wantObjects(t, objs, nil)
	}
	// Items that are aliases get the anchor's line.
	objs, errs = LoadBytes("l.yaml", []byte("kind: List\nx: &pod\n  kind: Pod\n  metadata: {name: p}\nitems: [*pod]\n"))
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{{"l.yaml", 3, "", "Pod", "", "p"}})
}

func TestLoadBytesJSON(t *testing.T) {
	path, data := readFixture(t, "app.json")
	objs, errs := LoadBytes(path, data)
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{{path, 2, "argoproj.io/v1alpha1", "Application", "argocd", "json-app"}})
	wantValue(t, field(t, objs[0], "spec"), `{"replicas": 3, "enabled": true, "nothing": null, "ratio": 0.5,
		"big": 12345678901234567890123, "on": "on"}`)
	if n := field(t, objs[0], "spec", "big").(ast.Number); n != "12345678901234567890123" {
		t.Fatalf("big = %q, want the exact digits", n)
	}

	// Broken JSON is reported with a line.
	_, errs = LoadBytes("bad.json", []byte("{\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\"name\": \"x\"\n}\n"))
	if len(errs) != 1 || errs[0].Line < 1 || errs[0].Path != "bad.json" {
		t.Fatalf("errors = %v, want one error with a line", errs)
	}
}

func TestLoadBytesBOMAndCRLF(t *testing.T) {
	src := "\xef\xbb\xbfapiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\ndata:\r\n  text: |\r\n    a\r\n    b\r\n" +
		"---\r\n# comment\r\napiVersion: v1\r\nkind: Secret\r\nmetadata:\r\n  name: two\r\n" +
		"--- \r\nkind: Broken\r\nmetadata:\r\n  name: x\r\n    y: z\r\n" +
		"---\t\r\nkind: Last\r\n"
	objs, errs := LoadBytes("crlf.yaml", []byte(src))
	wantObjects(t, objs, []objectSummary{
		{"crlf.yaml", 1, "v1", "ConfigMap", "", "crlf"},
		{"crlf.yaml", 11, "v1", "Secret", "", "two"},
		{"crlf.yaml", 21, "", "Last", "", ""},
	})
	wantValue(t, field(t, objs[0], "data", "text"), `"a\nb\n"`)
	want := []evaluator.LoadError{{Path: "crlf.yaml", Line: 19, Message: "mapping values are not allowed in this context"}}
	if !reflect.DeepEqual(errs, want) {
		t.Fatalf("errors = %v, want %v", errs, want)
	}
	// A BOM before a document marker.
	objs, errs = LoadBytes("bom.yaml", []byte("\xef\xbb\xbf---\nkind: A\n---\nkind: B\n"))
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{{"bom.yaml", 2, "", "A", "", ""}, {"bom.yaml", 4, "", "B", "", ""}})
}

func TestLoadBytesSkipsNonObjects(t *testing.T) {
	for _, src := range []string{
		"",
		"\n\n",
		"# only a comment\n",
		"---\n---\n...\n",
		"- a\n- b\n",
		"just a scalar\n",
		"replicaCount: 3\nimage: nginx\n",
		"kind: 3\n",
		"kind: ~\n",
		"kind: [Pod]\n",
		"{}\n",
		"[]\n",
		"%YAML 1.2\n",
		// Mappings without kind are not converted, so their problems are not reported.
		"a: 1\na: 2\n",
		"a: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n",
	} {
		objs, errs := LoadBytes("x.yaml", []byte(src))
		if len(objs) != 0 || len(errs) != 0 {
			t.Errorf("LoadBytes(%.40q) = %v, %v; want nothing", src, objs, errs)
		}
	}
}

func TestLoadBytesDirectives(t *testing.T) {
	// yaml.v3 only accepts "%YAML 1.1"; "%YAML 1.2" is accepted as well.
	objs, errs := LoadBytes("d.yaml", []byte("%YAML 1.2\n---\nkind: A\n...\n%YAML 1.1\n%TAG ! tag:example.com,2000:\n---\nkind: B\n...\n# trailing comment\n"))
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{{"d.yaml", 3, "", "A", "", ""}, {"d.yaml", 8, "", "B", "", ""}})
	_, errs = LoadBytes("d.yaml", []byte("%YAML 2.0\n---\nkind: A\n"))
	if len(errs) != 1 || errs[0].Message != "found incompatible YAML document" {
		t.Fatalf("errors = %v", errs)
	}
	for src, want := range map[string]string{
		"%YAML 1.2\n---\n":                      "%YAML 1.1\n---\n",
		"# c\n%YAML   1.2 # c\r\n--- %YAML 1.2": "# c\n%YAML   1.1 # c\r\n--- %YAML 1.2",
		"%YAML 1.20\n":                          "%YAML 1.20\n",
		"a: 1\n%YAML 1.2\n":                     "a: 1\n%YAML 1.2\n",
	} {
		in := []byte(src)
		if got := string(yamlAcceptVersion12(in)); got != want || string(in) != src {
			t.Errorf("yamlAcceptVersion12(%q) = %q, want %q (input %q)", src, got, want, in)
		}
	}
}

func TestLoadBytesErrorLines(t *testing.T) {
	const head = "kind: A\n---\n" // every input starts with a good document on line 1
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"scanner error", "kind: B\nmetadata:\n  name: x\n    y: z\n", 6, "mapping values are not allowed in this context"},
		{"error on the marker line", "--- a: b: c\n", 3, "mapping values are not allowed in this context"},
		// yaml.v3 reports parser errors at the start of the enclosing collection.
		{"parser error", "kind: B\nmetadata:\n  name: x\n bad: y\n", 3, "did not find expected key"},
		{"unclosed flow", "kind: B\nx: [1, 2\ny: 3\n", 4, "did not find expected ',' or ']'"},
		{"tab", "kind: B\nx:\n\ty: 1\n", 5, "found character that cannot start any token"},
		{"unknown anchor (no line: document start)", "kind: B\nx: *nope\n", 2, "unknown anchor 'nope' referenced"},
		{"control character", "kind: B\nx: \x01\n", 2, "control characters are not allowed"},
		{"complex key", "kind: B\n? [a]\n: 1\n", 4, "mapping key must be a scalar, not a sequence"},
		{"bad explicit tag", "kind: B\nx: !!int abc\n", 4, "cannot decode !!str `abc` as a !!int"},
		{"too deep", "kind: B\nx: " + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + "\n", 4, "nesting is deeper than 1000 levels"},
		{"yaml.v3 depth limit", "kind: B\nx: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n", 4, "exceeded max depth of 10000"},
		{"unterminated deep flow", strings.Repeat("[", 10000) + "\n", 3, "did not find expected node content"},
		{"unterminated quote", "kind: B\nx: \"abc\n", 4, "found unexpected end of stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, errs := LoadBytes("e.yaml", []byte(head+tt.src+"---\nkind: C\n"))
			if len(errs) != 1 {
				t.Fatalf("errors = %v, want one", errs)
			}
			if errs[0].Line != tt.line || !strings.Contains(errs[0].Message, tt.msg) {
				t.Fatalf("error = line %d %q, want line %d containing %q", errs[0].Line, errs[0].Message, tt.line, tt.msg)
			}
			if strings.HasPrefix(errs[0].Message, "yaml:") {
				t.Fatalf("message %q keeps the yaml: prefix", errs[0].Message)
			}
			// The documents around the broken one are still returned.
			if len(objs) != 2 || objs[0].Kind != "A" || objs[1].Kind != "C" {
				t.Fatalf("objects = %v, want A and C", summarize(t, objs))
			}
		})
	}
}

func TestLoadBytesAnchorsAndMergeKeys(t *testing.T) {
	path, data := readFixture(t, "anchors.yaml")
	objs, errs := LoadBytes(path, data)
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{{path, 1, "v1", "ConfigMap", "", "anchors"}})
	wantValue(t, field(t, objs[0], "single"), `{"replicas": 2, "image": "nginx"}`)
	wantValue(t, field(t, objs[0], "multiple"), `{"replicas": 5, "image": "httpd", "port": 80}`)
	wantValue(t, field(t, objs[0], "copy"), `{"app": "web", "tier": "frontend"}`)

	// A merge key can bring the kind.
	objs, errs = LoadBytes("m.yaml", []byte("x: &base {apiVersion: v1, kind: ConfigMap}\n<<: *base\nmetadata: {name: merged}\n"))
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{{"m.yaml", 1, "v1", "ConfigMap", "", "merged"}})
}

func TestLoadBytesAliasBomb(t *testing.T) {
	race.Sequential(t)
	start := time.Now()
	src := "kind: Before\n---\n" + billionLaughs(9) + "---\nkind: After\n"
	objs, errs := LoadBytes("bomb.yaml", []byte(src))
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
	wantObjects(t, objs, []objectSummary{{"bomb.yaml", 1, "", "Before", "", ""}, {"bomb.yaml", 15, "", "After", "", ""}})
	want := []evaluator.LoadError{{Path: "bomb.yaml", Line: 10, Message: fmt.Sprintf(
		"aliases expand to more values than are left of the run's budget for them (%d values so far, for all files together: %d, and %d more for each byte read)",
		AliasValuesBase+len(src), AliasValuesBase, AliasValuesPerByte)}}
	if !reflect.DeepEqual(errs, want) {
		t.Fatalf("errors = %v, want %v", errs, want)
	}

	// Documents each under the budget share it: those it pays for are read,
	// each one after them is an error at an alias, and a document without
	// aliases after them is still read.
	doc := billionLaughs(5) // 135,740 expanded values
	const per = 135740
	many := strings.Repeat("---\n"+doc, 20) + "---\nkind: Plain\n"
	fits := (AliasValuesBase + len(many)) / per
	objs, errs = LoadBytes("bombs.yaml", []byte(many))
	if len(objs) != fits+1 || objs[fits].Kind != "Plain" || len(errs) != 20-fits {
		t.Fatalf("%d objects, errors %v: want the first %d documents and the last, and %d errors", len(objs), errs, fits, 20-fits)
	}
	docLines := strings.Count(doc, "\n") + 1
	for i, e := range errs {
		// The first runs out inside a4 (its line 7), the others at a1.
		wantLine := (fits+i)*docLines + 5
		if i == 0 {
			wantLine += 3
		}
		if e.Line != wantLine || !strings.Contains(e.Message, "left of the run's budget") {
			t.Errorf("error %d = %+v, want line %d and the run's budget", i, e, wantLine)
		}
	}
}

func TestLoadBytesBinary(t *testing.T) {
	for _, data := range [][]byte{
		[]byte("apiVersion: v1\x00kind: Pod\n"),
		{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0},
		{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d},
	} {
		objs, errs := LoadBytes("bin.yaml", data)
		if len(objs) != 0 || len(errs) != 1 || !strings.HasPrefix(errs[0].Message, "not a text file") {
			t.Fatalf("LoadBytes(%q) = %v, %v; want not a text file", data, objs, errs)
		}
	}
	// Invalid UTF-8 without NUL bytes is reported at its line and column.
	_, errs := LoadBytes("latin1.yaml", []byte("kind: Pod\nmetadata:\n  name: caf\xe9\n"))
	if len(errs) != 1 || errs[0].Line != 3 || !strings.Contains(errs[0].Message, "invalid UTF-8: byte 0xe9 at column 12") {
		t.Fatalf("errors = %v, want invalid UTF-8 at line 3, column 12", errs)
	}
}

func TestSplitYAMLDocuments(t *testing.T) {
	type doc struct {
		Line int
		Text string
	}
	tests := []struct {
		src  string
		want []doc
	}{
		{"", nil},
		{"# c\n", nil},
		{"a: 1\n", []doc{{1, "a: 1\n"}}},
		{"a: 1", []doc{{1, "a: 1"}}},
		{"# c\n---\na: 1\n", []doc{{1, "# c\n---\na: 1\n"}}},
		{"a: 1\n---\nb: 2\n", []doc{{1, "a: 1\n"}, {2, "---\nb: 2\n"}}},
		{"---\n--- x\n---\t{y: 1}\n", []doc{{2, "--- x\n"}, {3, "---\t{y: 1}\n"}}},
		// Bare markers make no document; comments before the last one stay.
		{"---\n---\n# c\n---\na: 1\n---\n---\n", []doc{{4, "---\na: 1\n"}}},
		{"# c\n---\n--- # only a comment\n...\n", nil},
		{"--- |\n  text\n", []doc{{1, "--- |\n  text\n"}}},
		{"a: 1\n...\n# c\n...\nb: 2\n", []doc{{1, "a: 1\n...\n"}, {5, "b: 2\n"}}},
		{"a: 1\r\n---\r\nb: 2\r\n", []doc{{1, "a: 1\r\n"}, {2, "---\r\nb: 2\r\n"}}},
		// Not markers: indented, or followed by other characters.
		{"a: |\n  ---\n---x: 1\n ---\n....\n", []doc{{1, "a: |\n  ---\n---x: 1\n ---\n....\n"}}},
		{"%YAML 1.2\n---\na: 1\n", []doc{{1, "%YAML 1.2\n---\na: 1\n"}}},
	}
	for _, tt := range tests {
		var got []doc
		splitYAMLDocuments([]byte(tt.src), func(d yamlDocument) {
			got = append(got, doc{d.line, string(d.data)})
		}, func(line int, msg string) { t.Errorf("%q: line %d: %s", tt.src, line, msg) })
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitYAMLDocuments(%q) = %v, want %v", tt.src, got, tt.want)
		}
	}
}

func TestLoaderDirectoryWalk(t *testing.T) {
	const dir = "testdata/load/tree"
	want := []objectSummary{
		{dir + "/UPPER.YAML", 1, "v1", "ConfigMap", "", "u"},
		{dir + "/a.yml", 1, "v1", "ConfigMap", "", "a"},
		{dir + "/b.yaml", 1, "v1", "ConfigMap", "", "b"},
		{dir + "/c.json", 1, "v1", "ConfigMap", "", "c"},
		{dir + "/sub/d.yaml", 1, "v1", "ConfigMap", "", "d"},
	}
	for _, arg := range []string{dir, dir + "/", "./" + dir} {
		l := Loader{AllKinds: true}
		objs, errs := l.Load([]string{arg})
		wantNoErrors(t, errs)
		wantObjects(t, objs, want)
	}
	// A hidden directory or a file of any name given explicitly is read.
	l := Loader{AllKinds: true}
	objs, errs := l.Load([]string{dir + "/.hidden", dir + "/README.md"})
	wantNoErrors(t, errs)
	wantObjects(t, objs, []objectSummary{
		{dir + "/.hidden/e.yaml", 1, "v1", "ConfigMap", "", "e"},
		{dir + "/README.md", 1, "v1", "ConfigMap", "", "r"},
	})
}

func TestLoaderArgumentOrder(t *testing.T) {
	const dir = "testdata/load/tree"
	l := Loader{AllKinds: true}
	objs, errs := l.Load([]string{dir + "/b.yaml", "testdata/load/missing.yaml", dir + "/a.yml", dir + "/sub", "testdata/load/multidoc_broken.yaml"})
	wantObjects(t, objs, []objectSummary{
		{dir + "/b.yaml", 1, "v1", "ConfigMap", "", "b"},
		{dir + "/a.yml", 1, "v1", "ConfigMap", "", "a"},
		{dir + "/sub/d.yaml", 1, "v1", "ConfigMap", "", "d"},
		{"testdata/load/multidoc_broken.yaml", 2, "v1", "ConfigMap", "ns1", "first"},
		{"testdata/load/multidoc_broken.yaml", 14, "v1", "ConfigMap", "", "third"},
	})
	if len(errs) != 2 || errs[0].Path != "testdata/load/missing.yaml" || errs[1].Path != "testdata/load/multidoc_broken.yaml" {
		t.Fatalf("errors = %v", errs)
	}

	// Many files read in parallel come back in walk order every time.
	tmp := t.TempDir()
	var want []objectSummary
	for i := range 300 {
		name := fmt.Sprintf("f%03d.yaml", i)
		src := fmt.Sprintf("kind: A\nmetadata: {name: a%d}\n---\nkind: B\nmetadata: {name: b%d}\n", i, i)
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.ToSlash(filepath.Join(tmp, name))
		want = append(want, objectSummary{p, 1, "", "A", "", fmt.Sprint("a", i)}, objectSummary{p, 4, "", "B", "", fmt.Sprint("b", i)})
	}
	for range 3 {
		l := Loader{AllKinds: true}
		objs, errs := l.Load([]string{tmp})
		wantNoErrors(t, errs)
		wantObjects(t, objs, want)
	}
}

func TestLoaderNonexistentPath(t *testing.T) {
	l := Loader{AllKinds: true}
	objs, errs := l.Load([]string{"testdata/load/does-not-exist.yaml", "testdata/load/no-dir/"})
	if len(objs) != 0 || len(errs) != 2 {
		t.Fatalf("got %v, %v", objs, errs)
	}
	for i, p := range []string{"testdata/load/does-not-exist.yaml", "testdata/load/no-dir/"} {
		if errs[i].Path != p || errs[i].Line != 0 || !strings.Contains(errs[i].Message, "no such file") && runtime.GOOS != "windows" {
			t.Errorf("error %d = %+v", i, errs[i])
		}
	}
	if objs, errs := (&Loader{AllKinds: true}).Load(nil); objs != nil || errs != nil {
		t.Fatalf("Load(nil) = %v, %v", objs, errs)
	}
}

func TestLoaderOversizedFile(t *testing.T) {
	tmp := t.TempDir()
	small := []byte("kind: Small\n")
	big := append([]byte("kind: Big\n# "), bytes.Repeat([]byte("x"), 1000)...)
	for name, data := range map[string][]byte{"small.yaml": small, "big.yaml": big} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := Loader{AllKinds: true, MaxFileSize: 100}
	objs, errs := l.Load([]string{tmp})
	bigPath := filepath.ToSlash(filepath.Join(tmp, "big.yaml"))
	wantObjects(t, objs, []objectSummary{{filepath.ToSlash(filepath.Join(tmp, "small.yaml")), 1, "", "Small", "", ""}})
	want := []evaluator.LoadError{{Path: bigPath, Message: fmt.Sprintf("file is too large (%d bytes; the limit is 100 bytes)", len(big))}}
	if !reflect.DeepEqual(errs, want) {
		t.Fatalf("errors = %v, want %v", errs, want)
	}
	// A file exactly at the limit is read.
	l = Loader{AllKinds: true, MaxFileSize: int64(len(small))}
	if objs, errs := l.Load([]string{filepath.Join(tmp, "small.yaml")}); len(objs) != 1 || len(errs) != 0 {
		t.Fatalf("at the limit: %v, %v", objs, errs)
	}
	// The default applies when MaxFileSize is 0.
	if got := (&Loader{AllKinds: true}).maxFileSize(); got != DefaultMaxFileSize || DefaultMaxFileSize != 32<<20 {
		t.Fatalf("default limit = %d", got)
	}
}

// runLoad runs Load and fails the test if it does not return promptly.
func runLoad(t *testing.T, l *Loader, paths ...string) ([]evaluator.Object, []evaluator.LoadError) {
	t.Helper()
	type result struct {
		objs []evaluator.Object
		errs []evaluator.LoadError
	}
	done := make(chan result, 1)
	go func() {
		objs, errs := l.Load(paths)
		done <- result{objs, errs}
	}()
	select {
	case r := <-done:
		return r.objs, r.errs
	case <-time.After(20 * time.Second):
		t.Fatalf("Load(%v) did not return", paths)
		return nil, nil
	}
}

func TestLoaderFIFO(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("FIFOs are tested on Linux only")
	}
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "pipe.yaml")
	fifotest.Make(t, fifo)
	if err := os.WriteFile(filepath.Join(tmp, "ok.yaml"), []byte("kind: OK\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []evaluator.LoadError{{Path: filepath.ToSlash(fifo), Message: "not a regular file (named pipe)"}}
	// Found in a walk.
	objs, errs := runLoad(t, &Loader{AllKinds: true}, tmp)
	wantObjects(t, objs, []objectSummary{{filepath.ToSlash(filepath.Join(tmp, "ok.yaml")), 1, "", "OK", "", ""}})
	if !reflect.DeepEqual(errs, want) {
		t.Fatalf("errors = %v, want %v", errs, want)
	}
	// Given explicitly.
	objs, errs = runLoad(t, &Loader{AllKinds: true}, fifo)
	if len(objs) != 0 || !reflect.DeepEqual(errs, want) {
		t.Fatalf("got %v, %v; want %v", objs, errs, want)
	}
	// Read directly (as if the file had changed after the walk).
	if _, err := readFileLimited(fifo, "p", 100); err == nil || err.Message != "not a regular file (named pipe)" {
		t.Fatalf("readFileLimited = %v", err)
	}
}

func symlinkOrSkip(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot create symbolic links: %v", err)
	}
}

func TestLoaderSymlinks(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "dir")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("kind: A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlinkOrSkip(t, "..", filepath.Join(dir, "sub", "up"))            // loop to the parent
	symlinkOrSkip(t, "..", filepath.Join(dir, "sub", "up.yaml"))       // the same, with a manifest name
	symlinkOrSkip(t, "self.yaml", filepath.Join(dir, "self.yaml"))     // a link to itself
	symlinkOrSkip(t, "missing", filepath.Join(dir, "dangling.yaml"))   // a dangling link
	symlinkOrSkip(t, "a.yaml", filepath.Join(dir, "link.yaml"))        // a link to a file is read
	symlinkOrSkip(t, "dir", filepath.Join(tmp, "dirlink"))             // a link to a directory given as the root
	symlinkOrSkip(t, "dir/a.yaml", filepath.Join(tmp, "filelink.yml")) // a link to a file given explicitly

	slash := func(parts ...string) string { return filepath.ToSlash(filepath.Join(parts...)) }
	objs, errs := runLoad(t, &Loader{AllKinds: true}, dir)
	wantObjects(t, objs, []objectSummary{
		{slash(dir, "a.yaml"), 1, "", "A", "", ""},
		{slash(dir, "link.yaml"), 1, "", "A", "", ""},
	})
	if len(errs) != 2 || errs[0].Path != slash(dir, "dangling.yaml") || errs[1].Path != slash(dir, "self.yaml") {
		t.Fatalf("errors = %v", errs)
	}
	if !strings.Contains(errs[0].Message, "no such file") || !strings.Contains(errs[1].Message, "too many levels of symbolic links") {
		t.Fatalf("errors = %v", errs)
	}

	objs, errs = runLoad(t, &Loader{AllKinds: true}, filepath.Join(tmp, "dirlink"), filepath.Join(tmp, "filelink.yml"))
	wantObjects(t, objs, []objectSummary{
		{slash(tmp, "dirlink", "a.yaml"), 1, "", "A", "", ""},
		{slash(tmp, "dirlink", "link.yaml"), 1, "", "A", "", ""},
		{slash(tmp, "filelink.yml"), 1, "", "A", "", ""},
	})
	if len(errs) != 2 {
		t.Fatalf("errors = %v", errs)
	}
}

func TestLoaderFileRemovedAfterWalk(t *testing.T) {
	tmp := t.TempDir()
	path := filepath.Join(tmp, "gone.yaml")
	if err := os.WriteFile(path, []byte("kind: A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tasks := collectLoadTasks(nil, tmp, false, nil, &renderWalk{})
	if len(tasks) != 1 || tasks[0].err != nil {
		t.Fatalf("tasks = %+v", tasks)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	l := Loader{AllKinds: true}
	r := l.run(tasks[0], NewAliasBudget().newSource())
	if len(r.objects) != 0 || len(r.errors) != 1 || r.errors[0].Path != filepath.ToSlash(path) || !strings.Contains(r.errors[0].Message, "no such file") {
		t.Fatalf("result = %+v", r)
	}
}

func TestLoaderUnreadableDirectory(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs POSIX permissions and a non-root user")
	}
	tmp := t.TempDir()
	locked := filepath.Join(tmp, "locked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "z.yaml"), []byte("kind: Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	objs, errs := (&Loader{AllKinds: true}).Load([]string{tmp})
	if len(objs) != 1 || len(errs) != 1 || errs[0].Path != filepath.ToSlash(locked) || !strings.Contains(errs[0].Message, "permission denied") {
		t.Fatalf("got %v, %v", objs, errs)
	}
}

func TestLoaderStdin(t *testing.T) {
	l := Loader{AllKinds: true, Stdin: strings.NewReader("# from a pipe\nkind: A\n---\nkind: B\nx: [\n---\nkind: C\n")}
	objs, errs := l.Load([]string{"-", "testdata/load/tree/b.yaml", "-"})
	wantObjects(t, objs, []objectSummary{
		{"<stdin>", 2, "", "A", "", ""},
		{"<stdin>", 7, "", "C", "", ""},
		{"testdata/load/tree/b.yaml", 1, "v1", "ConfigMap", "", "b"},
	})
	if len(errs) != 1 || errs[0].Path != "<stdin>" || errs[0].Line < 3 || errs[0].Line > 6 {
		t.Fatalf("errors = %v", errs)
	}
	// Standard input is bounded too.
	l = Loader{AllKinds: true, Stdin: strings.NewReader(strings.Repeat("#", 101)), MaxFileSize: 100}
	objs, errs = l.Load([]string{"-"})
	want := []evaluator.LoadError{{Path: "<stdin>", Message: "input is larger than the limit of 100 bytes"}}
	if len(objs) != 0 || !reflect.DeepEqual(errs, want) {
		t.Fatalf("got %v, %v; want %v", objs, errs, want)
	}
}

func FuzzLoadBytes(f *testing.F) {
	for _, name := range []string{"multidoc_broken.yaml", "multidoc.yaml", "list.yaml", "app.json", "anchors.yaml"} {
		data, err := os.ReadFile("testdata/load/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"\xef\xbb\xbfkind: A\r\n---\r\nkind: B\r\n",
		"kind: List\nitems: [{kind: A}, 3, {metadata: {}}]\n",
		"kind: FooList\nitems: [{metadata: {name: x}}]\n",
		"kind: A\nx: &a [*a]\n",
		"kind: A\n<<: [{b: 1}, {c: 2}]\n",
		"kind: A\n? [x]\n: 1\n",
		"--- |\n  text\n...\n%YAML 1.2\n---\nkind: B\n",
		"kind: A\nx: !!int 0x1F\ny: !!float .inf\nz: !!binary aGk=\n",
		billionLaughs(4),
		"apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: s}\n---\napiVersion: v1\nkind: ConfigMap\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: a}}\n- {apiVersion: v1, kind: Secret}\n",
		"apiVersion: kargo.akuity.io/v1alpha1\nkind: StageList\nitems: [{metadata: {name: s}}, &x {kind: Warehouse}, *x]\n",
		"base: &b {apiVersion: argoproj.io/v1alpha1, kind: Application}\n---\n<<: {apiVersion: argoproj.io/v1alpha1, kind: ApplicationSet}\nmetadata: {name: m}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, errs := LoadBytes("fuzz.yaml", data)
		// YAML breaks lines at \n, \r\n and a lone \r (as yaml.v3 counts them).
		lines := bytes.Count(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\n")) +
			bytes.Count(bytes.ReplaceAll(data, []byte("\r\n"), nil), []byte("\r")) + 1
		for _, o := range objs {
			obj, ok := o.Value.(ast.Object)
			if !ok || obj == nil {
				t.Fatalf("object with Value %T %v", o.Value, o.Value)
			}
			if o.Path != "fuzz.yaml" || o.Line < 1 || o.Line > lines {
				t.Fatalf("object at %s:%d (file has %d lines)", o.Path, o.Line, lines)
			}
		}
		for _, e := range errs {
			if e.Path != "fuzz.yaml" || e.Line < 0 || e.Line > lines || e.Message == "" {
				t.Fatalf("bad error %+v (file has %d lines)", e, lines)
			}
		}
		// Dropping the kinds no rule reads before conversion keeps exactly the
		// objects of the kinds the rules read, and counts the others.
		if len(errs) > 0 {
			return
		}
		kept, ferrs, skipped := decodeFile("fuzz.yaml", data, true, NewAliasBudget().newSource())
		var want []evaluator.Object
		for _, o := range objs {
			if evaluator.ReadKind(o.APIVersion, o.Kind) {
				want = append(want, o)
			}
		}
		if len(ferrs) > 0 || len(kept) != len(want) || skipped != len(objs)-len(want) {
			t.Fatalf("filtered: %d objects, %d skipped, errors %v; want %d objects, %d skipped", len(kept), skipped, ferrs, len(want), len(objs)-len(want))
		}
		for i := range kept {
			if kept[i].Line != want[i].Line || kept[i].Value.Compare(want[i].Value) != 0 {
				t.Fatalf("filtered object %d differs:\n%v\n%v", i, kept[i].Value, want[i].Value)
			}
		}
	})
}

// BenchmarkLoadBytes decodes a file of 30,000 small documents.
func BenchmarkLoadBytes(b *testing.B) {
	var buf bytes.Buffer
	for i := range 30000 {
		fmt.Fprintf(&buf, `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: app-%d
  namespace: argocd
  labels: {team: t%d, tier: web}
spec:
  project: default
  source: {repoURL: "https://example.com/repo.git", path: "apps/%d", targetRevision: HEAD}
  destination: {server: "https://kubernetes.default.svc", namespace: ns%d}
  syncPolicy: {automated: {prune: true, selfHeal: true}}
`, i, i%10, i, i%50)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		objs, errs := LoadBytes("bench.yaml", data)
		if len(objs) != 30000 || len(errs) != 0 {
			b.Fatalf("%d objects, %v", len(objs), errs)
		}
	}
}

// A symbolic link to a file outside the directory given is not followed unless
// asked; a link to a file inside it is read.
func TestLoaderSymlinkOutsideRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	os.MkdirAll(root, 0o755)
	os.MkdirAll(outside, 0o755)
	doc := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	os.WriteFile(filepath.Join(outside, "secret.yaml"), doc, 0o644)
	os.WriteFile(filepath.Join(root, "inside.yaml"), doc, 0o644)
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(root, "out.yaml")); err != nil {
		t.Skip(err)
	}
	os.Symlink(filepath.Join(root, "inside.yaml"), filepath.Join(root, "in.yaml"))

	objs, errs := (&Loader{AllKinds: true}).Load([]string{root})
	if len(objs) != 2 || len(errs) != 1 || !strings.Contains(errs[0].Message, "outside") || !strings.HasSuffix(errs[0].Path, "out.yaml") {
		t.Errorf("default: %d objects, errors %v", len(objs), errs)
	}
	objs, errs = (&Loader{AllKinds: true, FollowSymlinks: true}).Load([]string{root})
	if len(objs) != 3 || len(errs) != 0 {
		t.Errorf("follow: %d objects, errors %v", len(objs), errs)
	}
}

// A file far larger than the limit (a sparse file: no disk is used) is refused
// from its size alone, without reading it, and the rest is still loaded.
func TestLoaderSparseHugeFile(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "huge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		t.Skip(err)
	}
	f.Close()
	os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644)
	objs, errs := (&Loader{AllKinds: true}).Load([]string{dir})
	if len(objs) != 1 || len(errs) != 1 || !strings.Contains(errs[0].Message, "limit") || !strings.HasSuffix(errs[0].Path, "huge.yaml") {
		t.Errorf("objects %d, errors %v", len(objs), errs)
	}
}

// A List inside a List: kubectl flattens it (cli-runtime's
// FlattenListVisitor expands nested lists), Argo CD does not (its repo server
// expands one level, then applies the inner List as one object, and the sync
// fails). Its items are read, as kubectl reads them, and it is an input error
// at its line, never skipped silently.
func TestLoadBytesNestedList(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: List
items:
- apiVersion: kargo.akuity.io/v1alpha1
  kind: Stage
  metadata: {name: outer, namespace: acme}
- apiVersion: v1
  kind: List
  items:
  - apiVersion: kargo.akuity.io/v1alpha1
    kind: Stage
    metadata: {name: inner, namespace: acme}
  - apiVersion: kargo.akuity.io/v1alpha1
    kind: StageList
    items:
    - metadata: {name: deepest, namespace: acme}
- apiVersion: v1
  kind: List
`)
	want := []objectSummary{
		{"n.yaml", 4, "kargo.akuity.io/v1alpha1", "Stage", "acme", "outer"},
		{"n.yaml", 10, "kargo.akuity.io/v1alpha1", "Stage", "acme", "inner"},
		{"n.yaml", 16, "kargo.akuity.io/v1alpha1", "Stage", "acme", "deepest"},
	}
	wantErrs := []string{
		"n.yaml:7: a List inside a List: kubectl reads its items (read here too), Argo CD does not (it applies the inner List as one object, and the sync fails); move its items to the outer List",
		"n.yaml:13: a StageList inside a List: kubectl reads its items (read here too), Argo CD does not (it applies the inner List as one object, and the sync fails); move its items to the outer List",
		"n.yaml:17: a List inside a List: kubectl reads its items (read here too), Argo CD does not (it applies the inner List as one object, and the sync fails); move its items to the outer List",
	}
	for _, filtered := range []bool{false, true} {
		var objs []evaluator.Object
		var errs []evaluator.LoadError
		if filtered {
			objs, errs, _ = LoadBytesFiltered("n.yaml", data)
		} else {
			objs, errs = LoadBytes("n.yaml", data)
		}
		wantObjects(t, objs, want)
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if !reflect.DeepEqual(got, wantErrs) {
			t.Errorf("filtered %v: errors:\n got %q\nwant %q", filtered, got, wantErrs)
		}
	}
}

// JSON's escapes of characters outside the Basic Multilingual Plane are
// surrogate pairs ("\ud83d\ude00", what Python's json.dumps writes, with
// ensure_ascii on). A stream the Kubernetes decoder reads as JSON (its first
// character, after white space, is "{") is decoded as encoding/json does: a
// pair is the character, a lone surrogate U+FFFD. In a YAML document, as in
// go-yaml, a surrogate escape stays an error. So is JSON's escaped slash
// ("\/", what PHP's json_encode writes), which YAML does not have.
func TestLoadBytesJSONSurrogates(t *testing.T) {
	annotation := func(t *testing.T, src string) string {
		t.Helper()
		objs, errs := LoadBytes("s.json", []byte(src))
		wantNoErrors(t, errs)
		if len(objs) != 1 {
			t.Fatalf("%d objects, want 1", len(objs))
		}
		return string(field(t, objs[0], "metadata", "annotations", "a").(ast.String))
	}
	doc := func(value string) string {
		return "\n {\"apiVersion\": \"kargo.akuity.io/v1alpha1\", \"kind\": \"Stage\",\n  \"metadata\": {\"name\": \"s\", \"namespace\": \"acme\", \"annotations\": {\"a\": \"" + value + "\"}}}\n"
	}
	for _, tc := range []struct{ escaped, want string }{
		{`\ud83d\ude00`, "😀"},
		{`\uD83D\uDE00 and \ud834\udd1e`, "😀 and 𝄞"},
		{`\ud83d x`, "\ufffd x"},           // a lone high surrogate
		{`\ude00`, "\ufffd"},               // a lone low surrogate
		{`\ud83d\u0041`, "\ufffdA"},        // a high surrogate before no low one
		{`\ud83d\ud83d\ude00`, "\ufffd😀"},  // two highs, then a pair
		{`\\ud83d\\ude00`, `\ud83d\ude00`}, // escaped backslashes: no escape
		{`caf\u00e9 \"q\" \/`, `café "q" /`},
		{`https:\/\/github.com\/acme`, "https://github.com/acme"},
		{`\\/`, `\/`},
	} {
		if got := annotation(t, doc(tc.escaped)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.escaped, got, tc.want)
		}
	}
	// Lines are kept.
	objs, _ := LoadBytes("s.json", []byte(doc(`\ud83d\ude00`)))
	if objs[0].Line != 2 {
		t.Errorf("line %d, want 2", objs[0].Line)
	}
	// A YAML stream is read by go-yaml in the Kubernetes decoder too, which
	// refuses the escape: so does flipflop.
	_, errs := LoadBytes("s.yaml", []byte("kind: Stage\nmetadata:\n  name: s\n  annotations:\n    a: \"\\ud83d\\ude00\"\n"))
	if len(errs) != 1 || errs[0].Line != 5 {
		t.Errorf("YAML with a surrogate escape: %v, want an error at line 5", errs)
	}
}
