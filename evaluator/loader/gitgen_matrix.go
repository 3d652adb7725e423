package loader

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// placeholderRE finds the {{ ... }} placeholders of an ApplicationSet template
// string.
var placeholderRE = regexp.MustCompile(`\{\{-?\s*([^{}]*?)\s*-?\}\}`)

// fieldRE is a plain parameter reference: name, name.sub, (goTemplate) .name.sub.
var fieldRE = regexp.MustCompile(`^\.?[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$`)

// expandMatrixWithParams expands a matrix whose second generator is a git
// generator that uses parameters of the first (Argo CD renders the second
// generator with each parameter set of the first: files path
// env/{{.name}}/*/release.yaml). It returns handled=false when the matrix is
// not of that shape. When the expansion cannot be done exactly (the first
// generator's parameters are unknown, a placeholder is not a plain parameter,
// a child has a selector), the matrix is left as it is, so
// that the policies take the git generator's parameters as unknown, never as
// no Applications. The children's own templates are ignored, as Argo CD
// ignores them; the matrix's own template is kept.
func expandMatrixWithParams(gm map[string]any, children []any, gr *gitReader, goTemplate bool) (any, bool, bool, error) {
	if len(children) != 2 {
		return gm, false, false, nil
	}
	second, _ := children[1].(map[string]any)
	git, _ := second["git"].(map[string]any)
	if git == nil || !templated(git) {
		return gm, false, false, nil
	}
	first, _ := children[0].(map[string]any)
	if first == nil || first["selector"] != nil || second["selector"] != nil {
		return gm, true, false, nil
	}
	var sets []any
	switch {
	case first["list"] != nil:
		l, _ := first["list"].(map[string]any)
		sets = asSlice(l["elements"])
		if l["elementsYaml"] != nil {
			return gm, true, false, nil
		}
	case first["git"] != nil:
		ng, changed, err := expandGenerator(first, gr, goTemplate)
		if err != nil {
			return gm, true, false, err
		}
		if !changed {
			return gm, true, false, nil // the first generator's repository is not checked out
		}
		if isNotExpanded(ng) {
			return notExpanded(gm, gr.budget), true, true, nil
		}
		l, _ := ng.(map[string]any)["list"].(map[string]any)
		sets = asSlice(l["elements"])
	default:
		return gm, true, false, nil
	}
	var elems []any
	for _, s := range sets {
		params, ok := s.(map[string]any)
		if !ok {
			return gm, true, false, nil
		}
		rendered, ok := substituteParams(git, params, goTemplate)
		if !ok {
			return gm, true, false, nil
		}
		ng, changed, err := expandGenerator(map[string]any{"git": rendered}, gr, goTemplate)
		if err != nil {
			return gm, true, false, err
		}
		if !changed {
			return gm, true, false, nil
		}
		if isNotExpanded(ng) {
			return notExpanded(gm, gr.budget), true, true, nil
		}
		l, _ := ng.(map[string]any)["list"].(map[string]any)
		// Each combined set holds the first generator's parameters again.
		if !gr.budget.take(0, int64(len(asSlice(l["elements"])))*valueBytes(params, gr.budget.bytes), 0) {
			return notExpanded(gm, gr.budget), true, true, nil
		}
		for _, e := range asSlice(l["elements"]) {
			em, _ := e.(map[string]any)
			combined := map[string]any{}
			for k, v := range params {
				combined[k] = v
			}
			for k, v := range em {
				combined[k] = v
			}
			elems = append(elems, combined)
		}
	}
	if elems == nil {
		elems = []any{}
	}
	matrix, _ := gm["matrix"].(map[string]any)
	return expandedList(gm, matrix, elems), true, true, nil
}

// valueBytes is the bytes of v's keys and scalars, counted up to limit (past
// it, the count stops).
func valueBytes(v any, limit int64) int64 {
	var n int64
	var walk func(v any)
	walk = func(v any) {
		if n > limit {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				n += int64(len(k))
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		case string:
			n += int64(len(t))
		default:
			n += 8
		}
	}
	walk(v)
	return n
}

// templated reports whether a git generator's repository, revision or paths
// hold a placeholder.
func templated(git map[string]any) bool {
	b, err := json.Marshal(map[string]any{"repoURL": git["repoURL"], "revision": git["revision"], "files": git["files"], "directories": git["directories"]})
	return err == nil && strings.Contains(string(b), "{{")
}

// substituteParams renders the placeholders of a git generator's strings with
// params; ok is false when one is not a plain reference to a parameter params
// holds.
func substituteParams(git map[string]any, params map[string]any, goTemplate bool) (map[string]any, bool) {
	b, err := json.Marshal(git)
	if err != nil {
		return nil, false
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return nil, false
	}
	ok := true
	var render func(v any) any
	render = func(v any) any {
		switch t := v.(type) {
		case string:
			return placeholderRE.ReplaceAllStringFunc(t, func(m string) string {
				ref := placeholderRE.FindStringSubmatch(m)[1]
				val, found := lookupParam(params, ref, goTemplate)
				if !found {
					ok = false
					return m
				}
				return val
			})
		case map[string]any:
			for k, x := range t {
				t[k] = render(x)
			}
		case []any:
			for i, x := range t {
				t[i] = render(x)
			}
		}
		return v
	}
	render(out)
	return out, ok
}

// lookupParam resolves a placeholder: goTemplate ".a.b" in nested
// parameters; fasttemplate "a.b" as a flat key, else nested.
func lookupParam(params map[string]any, ref string, goTemplate bool) (string, bool) {
	if !fieldRE.MatchString(ref) || goTemplate != strings.HasPrefix(ref, ".") {
		return "", false
	}
	key := strings.TrimPrefix(ref, ".")
	if !goTemplate {
		if v, ok := params[key]; ok {
			return scalarParam(v)
		}
	}
	var cur any = params
	for _, part := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if cur, ok = m[part]; !ok {
			return "", false
		}
	}
	return scalarParam(cur)
}

func scalarParam(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case bool, float64, int, int64, json.Number:
		return fmt.Sprint(t), true
	}
	return "", false
}
