package loader

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// expiryAnnotation is the annotation until which a flipflop.dev/ignore
// annotation waives.
const expiryAnnotation = "flipflop.dev/ignore-expires"

var expiryForm = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})$`)

// expiryProblem says why a waiver's expiry is not a date that exists, as the
// policies read it (YYYY-MM-DD, a month from 01 to 12, a day that month has);
// "" for a date, or for no expiry. The value is quoted cut to 64 characters.
func expiryProblem(s string) string {
	if s == "" {
		return ""
	}
	quoted := strconv.Quote(safetext.Cut(s, 64))
	m := expiryForm.FindStringSubmatch(s)
	if m == nil {
		return quoted + " is not a date (YYYY-MM-DD)"
	}
	year, _ := strconv.Atoi(m[1])
	month, _ := strconv.Atoi(m[2])
	day, _ := strconv.Atoi(m[3])
	if month < 1 || month > 12 {
		return fmt.Sprintf("%s is not a date (YYYY-MM-DD): there is no month %d", quoted, month)
	}
	// The day after the last of the month, normalised by time.Date, is the
	// first of the next month.
	days := time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if day < 1 || day > days {
		return fmt.Sprintf("%s is not a date (YYYY-MM-DD): %s %d has %d days", quoted, time.Month(month), year, days)
	}
	return ""
}

// checkExpiry adds an input error when obj, read from node n of a document
// whose lines start after offset, carries a flipflop.dev/ignore-expires
// annotation that is not a date: at the line of the annotation's key (of the
// object when no key is found, as under a merge key). The object itself is
// kept: its findings are still reported, and the policies find the waiver
// invalid, so it waives nothing.
func (d *docDecoder) checkExpiry(obj evaluator.Object, n *yaml.Node, offset int) {
	o, ok := obj.Value.(ast.Object)
	if !ok {
		return
	}
	v := nested(o, "metadata", "annotations", expiryAnnotation)
	if v == nil {
		return
	}
	problem := ""
	switch s := v.Value.(type) {
	case ast.String:
		problem = expiryProblem(string(s))
	default:
		problem = safetext.Cut(v.String(), 64) + " is not a date (YYYY-MM-DD): write it as a string"
	}
	if problem == "" {
		return
	}
	line := obj.Line
	if l := keyLine(n, "metadata", "annotations", expiryAnnotation); l > 0 {
		line = offset + l
	}
	d.notes = append(d.notes, evaluator.LoadError{Path: d.path, Line: line, Message: expiryAnnotation + ": " + problem + "; the waiver waives nothing"})
}

// nested returns the value at keys in nested objects, or nil.
func nested(o ast.Object, keys ...string) *ast.Term {
	var t *ast.Term
	for i, k := range keys {
		t = o.Get(ast.StringTerm(k))
		if t == nil || i == len(keys)-1 {
			return t
		}
		next, ok := t.Value.(ast.Object)
		if !ok {
			return nil
		}
		o = next
	}
	return t
}

// keyLine returns the line of the key at path in nested mappings from n (the
// last one, when a key is repeated: the value kept), or 0.
func keyLine(n *yaml.Node, path ...string) int {
	if n == nil {
		return 0
	}
	n = resolveAlias(n)
	line := 0
	for i, k := range path {
		if n.Kind != yaml.MappingNode {
			return 0
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if key := resolveAlias(n.Content[j]); key.Kind == yaml.ScalarNode && key.Value == k {
				next, line = resolveAlias(n.Content[j+1]), key.Line
			}
		}
		if next == nil {
			return 0
		}
		if i == len(path)-1 {
			return line
		}
		n = next
	}
	return 0
}
