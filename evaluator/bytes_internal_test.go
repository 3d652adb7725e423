package evaluator

import (
	"testing"
)

// Every string crosses the JSON between the policies and Go with its bytes:
// spelled and read back, it is what it was, whatever it holds (bytes that are
// not UTF-8, U+FFFD, the escape itself, the escape before anything).
func TestResultStringsKeepTheirBytes(t *testing.T) {
	esc := string(byteEscape)
	strs := []string{
		"", "plain", "a\xff", "a\uFFFD", "\xff\xfe\x80", "b\xfe\xff/kargo.yaml",
		esc, esc + esc, esc + "x", "x" + esc, esc + "\xff", "\xff" + esc,
		esc + string(rune(byteBase+0x41)), "\xed\xa0\x80", // a UTF-16 surrogate, not UTF-8
		string(rune(byteBase + 0xff)),
	}
	type inner struct {
		S   string         `json:"s"`
		Any any            `json:"any"`
		M   map[string]any `json:"m"`
	}
	type outer struct {
		Items []inner          `json:"items"`
		P     *inner           `json:"p"`
		Keys  map[string]int   `json:"keys"`
		Deep  map[string][]any `json:"deep"`
	}
	for _, s := range strs {
		v := map[string]any{
			"items": []any{map[string]any{"s": s, "any": []any{s, map[string]any{s: s}}, "m": map[string]any{s: s, "k": s}}},
			"p":     map[string]any{"s": s},
			"keys":  map[string]any{s: 1},
			"deep":  map[string]any{"x": []any{s}},
		}
		var got outer
		if err := fromResult(v, &got, true); err != nil {
			t.Fatal(err)
		}
		it := got.Items[0]
		anys := it.Any.([]any)
		if it.S != s || anys[0] != s || anys[1].(map[string]any)[s] != s || it.M[s] != s || it.M["k"] != s ||
			got.P.S != s || got.Keys[s] != 1 || len(got.Keys) != 1 || got.Deep["x"][0] != s {
			t.Errorf("%q came back as %+v", s, got)
		}
	}
}
