package loader

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// yamlValue parses src with yaml.v3 and converts it.
func yamlValue(t *testing.T, src string) (ast.Value, error) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatalf("yaml.Unmarshal(%q): %v", src, err)
	}
	return yamlToValue(&n, nil)
}

func mustYAMLValue(t *testing.T, src string) ast.Value {
	t.Helper()
	v, err := yamlValue(t, src)
	if err != nil {
		t.Fatalf("yamlToValue(%q): %v", src, err)
	}
	return v
}

// wantYAMLError asserts that converting src fails on line with a message
// containing msg.
func wantYAMLError(t *testing.T, src string, line int, msg string) {
	t.Helper()
	short := src
	if len(short) > 200 {
		short = short[:200] + "..."
	}
	_, err := yamlValue(t, src)
	if err == nil {
		t.Fatalf("yamlToValue(%q): no error, want %q", short, msg)
	}
	var ye *yamlError
	if !errors.As(err, &ye) {
		t.Fatalf("yamlToValue(%q): error %T %v, want *yamlError", short, err, err)
	}
	if ye.Line != line || !strings.Contains(ye.Message, msg) {
		t.Fatalf("yamlToValue(%q): error line %d %q, want line %d containing %q", short, ye.Line, ye.Message, line, msg)
	}
}

func TestYAMLToValueScalars(t *testing.T) {
	tests := []struct {
		src  string
		want ast.Value
	}{
		// Integers.
		{"3", ast.Number("3")},
		{"-17", ast.Number("-17")},
		{"+12", ast.Number("12")},
		{"0", ast.Number("0")},
		{"-0", ast.Number("0")},
		{"0x10", ast.Number("16")},
		{"0x1F", ast.Number("31")},
		{"0o17", ast.Number("15")},
		{"017", ast.Number("15")}, // yaml.v3 keeps YAML 1.1 octals
		{"0b101", ast.Number("5")},
		{"-0b101", ast.Number("-5")},
		{"1_000", ast.Number("1000")},
		{"9223372036854775807", ast.Number("9223372036854775807")},
		{"18446744073709551615", ast.Number("18446744073709551615")},
		// Floats.
		{"1.5", ast.Number("1.5")},
		{"-1.25", ast.Number("-1.25")},
		{"1e3", ast.Number("1e3")},
		{"1.0", ast.Number("1.0")},
		{".5", ast.Number("0.5")},
		{"-.5", ast.Number("-0.5")},
		{"+.5", ast.Number("0.5")},
		{"1.", ast.Number("1")},
		{"01.5", ast.Number("1.5")},
		{"1_000.5", ast.Number("1000.5")},
		{"12345678901234567890123", ast.Number("12345678901234567890123")},
		{".inf", ast.String(".inf")},
		{"-.Inf", ast.String("-.Inf")},
		{".nan", ast.String(".nan")},
		{"1e999", ast.String("1e999")}, // overflows: yaml.v3 resolves it as a string
		// Booleans: YAML 1.2 only knows true and false.
		{"true", ast.Boolean(true)},
		{"True", ast.Boolean(true)},
		{"FALSE", ast.Boolean(false)},
		{"yes", ast.String("yes")},
		{"no", ast.String("no")},
		{"on", ast.String("on")},
		{"off", ast.String("off")},
		{"y", ast.String("y")},
		{`"on"`, ast.String("on")},
		{`'true'`, ast.String("true")},
		// Null.
		{"~", ast.Null{}},
		{"null", ast.Null{}},
		{"NULL", ast.Null{}},
		{"", ast.Null{}},
		{"!!null ''", ast.Null{}},
		// Strings.
		{"hello", ast.String("hello")},
		{`"3"`, ast.String("3")},
		{"'0x10'", ast.String("0x10")},
		{"|\n  line1\n  line2\n", ast.String("line1\nline2\n")},
		{">-\n  folded\n  text\n", ast.String("folded text")},
		{"2001-12-14t21:59:43.10-05:00", ast.String("2001-12-14t21:59:43.10-05:00")},
		{"2024-01-02", ast.String("2024-01-02")},
		{"!!binary aGVsbG8=", ast.String("aGVsbG8=")},
		{"!!timestamp 2024-01-02", ast.String("2024-01-02")},
		{"!custom value", ast.String("value")},
		{"1.2.3", ast.String("1.2.3")},
		{"0x", ast.String("0x")},
		{"<<", ast.String("<<")},
		// Explicit tags.
		{"!!str 10", ast.String("10")},
		{"!!str true", ast.String("true")},
		{`!!int "12"`, ast.Number("12")},
		{"!!float 1", ast.Number("1")},
		{"!!float 0x10", ast.Number("16")},
		{"!!float 2.5", ast.Number("2.5")},
		{"!!bool true", ast.Boolean(true)},
	}
	for _, tt := range tests {
		got := mustYAMLValue(t, tt.src)
		if got.Compare(tt.want) != 0 || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", tt.want) {
			t.Errorf("yamlToValue(%q) = %T %v, want %T %v", tt.src, got, got, tt.want, tt.want)
		}
		// Numbers must hold valid JSON number text.
		if n, ok := got.(ast.Number); ok && !isJSONNumber(string(n)) {
			t.Errorf("yamlToValue(%q) = %q, not a JSON number", tt.src, n)
		}
	}
}

func TestYAMLToValueExplicitTagErrors(t *testing.T) {
	wantYAMLError(t, "a: 1\nb: !!int abc\n", 2, "cannot decode !!str `abc` as a !!int")
	wantYAMLError(t, "!!bool yes", 1, "cannot decode !!str `yes` as a !!bool")
	wantYAMLError(t, "!!float .5x", 1, "as a !!float")
	wantYAMLError(t, "!!null 0", 1, "as a !!null")
	wantYAMLError(t, "!!int 123456789012345678901", 1, "cannot decode !!float")
}

func TestYAMLToValueDocument(t *testing.T) {
	src := `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  paused: false
  selector: ~
  ports: [80, "443", 0x10]
  enabled: "on"
  legacy: yes
`
	got := mustYAMLValue(t, src)
	want := ast.MustParseTerm(`{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
		"spec": {"replicas": 3, "paused": false, "selector": null, "ports": [80, "443", 16],
		         "enabled": "on", "legacy": "yes"}}`).Value
	if got.Compare(want) != 0 {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	obj := got.(ast.Object)
	replicas := obj.Get(ast.StringTerm("spec")).Value.(ast.Object).Get(ast.StringTerm("replicas"))
	if n, ok := replicas.Value.(ast.Number); !ok || n != "3" {
		t.Fatalf("replicas = %T %v, want ast.Number 3", replicas.Value, replicas.Value)
	}
}

func TestYAMLToValueKeys(t *testing.T) {
	got := mustYAMLValue(t, `
1: int
0x10: hex
1.50: float
2e3: exp
true: bool
~: null
"quoted": str
plain: str
? explicit
: key
2024-01-02: date
`)
	want := ast.MustParseTerm(`{"1": "int", "16": "hex", "1.5": "float", "2000": "exp", "true": "bool",
		"null": null, "quoted": "str", "plain": "str", "explicit": "key", "2024-01-02": "date"}`).Value
	if got.Compare(want) != 0 {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	// An alias to a scalar is a valid key.
	got = mustYAMLValue(t, "a: &k name\n*k : value\n")
	want = ast.MustParseTerm(`{"a": "name", "name": "value"}`).Value
	if got.Compare(want) != 0 {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	wantYAMLError(t, "a: 1\n? [x, y]\n: seq\n", 2, "mapping key must be a scalar, not a sequence")
	wantYAMLError(t, "a: 1\n{x: 1}: map\n", 2, "mapping key must be a scalar, not a mapping")
	wantYAMLError(t, "a: &m {x: 1}\n*m : v\n", 1, "mapping key must be a scalar, not a mapping")
}

func TestYAMLToValueDuplicateKeys(t *testing.T) {
	wantYAMLError(t, "a: 1\nb: 2\na: 3\n", 3, `duplicate key "a" (first defined at line 1)`)
	// Keys are compared after conversion to strings.
	wantYAMLError(t, "1: x\n\"1\": y\n", 2, `duplicate key "1"`)
	wantYAMLError(t, "0x10: x\n16: y\n", 2, `duplicate key "16"`)
	// Nested mappings and large mappings (indexed) are checked too.
	wantYAMLError(t, "top:\n  inner:\n    k: 1\n    k: 2\n", 4, `duplicate key "k"`)
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "k%d: %d\n", i, i)
	}
	b.WriteString("k7: again\n")
	wantYAMLError(t, b.String(), 21, `duplicate key "k7" (first defined at line 8)`)
	wantYAMLError(t, "a: &a {x: 1}\n<<: *a\n<<: *a\n", 3, `duplicate key "<<"`)
	// The same key in different mappings is fine.
	mustYAMLValue(t, "a: {k: 1}\nb: {k: 2}\n")
}

func TestYAMLToValueMergeKeys(t *testing.T) {
	got := mustYAMLValue(t, `
base: &base {a: 1, b: 2}
more: &more {b: 20, c: 30}
single:
  <<: *base
  b: 3
before:
  b: 4
  <<: *base
list:
  <<: [*more, *base]
  d: 4
inline:
  <<: {x: 1}
  y: 2
inlineList:
  <<: [{x: 1}, {x: 2, y: 3}]
quoted:
  "<<": not a merge
`)
	want := ast.MustParseTerm(`{
		"base": {"a": 1, "b": 2},
		"more": {"b": 20, "c": 30},
		"single": {"a": 1, "b": 3},
		"before": {"a": 1, "b": 4},
		"list": {"a": 1, "b": 20, "c": 30, "d": 4},
		"inline": {"x": 1, "y": 2},
		"inlineList": {"x": 1, "y": 3},
		"quoted": {"<<": "not a merge"}}`).Value
	if got.Compare(want) != 0 {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	wantYAMLError(t, "a:\n  <<: 1\n", 2, "map merge requires map or sequence of maps as the value")
	wantYAMLError(t, "s: &s [1]\na:\n  <<: *s\n", 3, "map merge requires map or sequence of maps")
	wantYAMLError(t, "a:\n  <<: [{x: 1}, 2]\n", 2, "map merge requires map or sequence of maps")
}

func TestYAMLToValueAliases(t *testing.T) {
	got := mustYAMLValue(t, `
labels: &labels {app: web}
list: &list [1, *labels]
scalar: &s hello
copies: [*labels, *list, *s]
`)
	want := ast.MustParseTerm(`{
		"labels": {"app": "web"},
		"list": [1, {"app": "web"}],
		"scalar": "hello",
		"copies": [{"app": "web"}, [1, {"app": "web"}], "hello"]}`).Value
	if got.Compare(want) != 0 {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	// yaml.v3 lets an alias refer to the node that contains it.
	wantYAMLError(t, "a: 1\nb: &x [*x]\n", 2, `anchor "x" value contains itself`)
	wantYAMLError(t, "b: &x {k: [1, {j: *x}]}\n", 1, `anchor "x" value contains itself`)
}

// billionLaughs returns a document whose aliases expand to 10^levels values.
func billionLaughs(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\n")
	b.WriteString(`a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestYAMLToValueAliasBomb(t *testing.T) {
	race.Sequential(t)
	start := time.Now()
	src := billionLaughs(9)
	// Expanded values are counted over the document: the limit is reached
	// while expanding the aliases of a5, on line 8.
	wantYAMLError(t, src, 8, fmt.Sprintf("left of the run's budget for them (%d values so far", AliasValuesBase))
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("alias bomb took %v", d)
	}
	// Just under the limit works: 10^5 values plus the arrays.
	v := mustYAMLValue(t, billionLaughs(5))
	if v.(ast.Object).Len() != 7 {
		t.Fatalf("got %d keys", v.(ast.Object).Len())
	}
}

func TestYAMLToValueDeepNesting(t *testing.T) {
	race.Sequential(t)
	nested := func(n int) string {
		return "a: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"
	}
	// At the limit.
	if _, err := yamlValue(t, nested(MaxYAMLDepth-1)); err != nil {
		t.Fatalf("depth %d: %v", MaxYAMLDepth, err)
	}
	wantYAMLError(t, nested(MaxYAMLDepth), 1, fmt.Sprintf("nesting is deeper than %d levels", MaxYAMLDepth))
	// yaml.v3 accepts 10,000 levels; the conversion refuses them cleanly.
	wantYAMLError(t, nested(10000-1), 1, "nesting is deeper than")
	// Block nesting.
	var b strings.Builder
	for i := range MaxYAMLDepth + 1 {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	wantYAMLError(t, b.String(), MaxYAMLDepth+1, "nesting is deeper than")
	// Nesting reached through aliases counts too.
	deep := "a0: &a0 [x]\n"
	for i := 1; i <= MaxYAMLDepth; i++ {
		deep += fmt.Sprintf("a%d: &a%d [*a%d]\n", i, i, i-1)
	}
	wantYAMLError(t, deep, 1, "nesting is deeper than")

	// What yaml.v3 itself does with very deep flow nesting.
	for _, src := range []string{
		strings.Repeat("[", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 100000),
		strings.Repeat("{a: ", 20000),
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err == nil {
			t.Errorf("yaml.v3 accepted %d bytes of deep nesting", len(src))
		}
	}
}

func TestYAMLToValueNodeKinds(t *testing.T) {
	var zero yaml.Node
	v, err := yamlToValue(&zero, nil)
	if err != nil || v.Compare(ast.Null{}) != 0 {
		t.Fatalf("zero node: %v, %v", v, err)
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode}
	if v, err := yamlToValue(doc, nil); err != nil || v.Compare(ast.Null{}) != 0 {
		t.Fatalf("empty document: %v, %v", v, err)
	}
	alias := &yaml.Node{Kind: yaml.AliasNode, Value: "x", Line: 4}
	if _, err := yamlToValue(alias, nil); err == nil || !strings.Contains(err.Error(), "line 4: unknown anchor") {
		t.Fatalf("dangling alias: %v", err)
	}
}

func TestIsJSONNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "1": true, "10": true, "1.5": true, "-1.5e10": true, "1E+3": true, "0.0": true,
		"": false, "-": false, "01": false, "1.": false, ".5": false, "+1": false, "1e": false, "0x10": false,
		"1_0": false, "NaN": false, "Infinity": false, "1.5.": false,
	} {
		if got := isJSONNumber(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
