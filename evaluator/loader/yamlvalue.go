package loader

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Limits applied while converting YAML to ast values. They protect the
// checker against hostile input; real manifests are far below them. Alias
// expansion is bounded over the whole run (AliasBudget).
const (
	// MaxYAMLDepth is the deepest nesting of mappings and sequences a
	// document may have (counting nesting reached through aliases).
	// yaml.v3 itself accepts up to 10,000 levels.
	MaxYAMLDepth = 1000
)

// yamlError is a problem converting a YAML node into a value. Line is
// 1-based and relative to the text the node was parsed from.
type yamlError struct {
	Line    int
	Message string
}

func (e *yamlError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// yamlToValue converts a node produced by go.yaml.in/yaml/v3 into an ast.Value
// in one pass, following the YAML 1.2 core schema as yaml.v3 resolves it:
//
//   - !!str, !!timestamp, !!binary and scalars with unknown tags are strings
//     (timestamps and binary data keep their source text);
//   - !!int becomes a decimal ast.Number (0x1F, 0o17, 017, 0b101 and 1_000
//     are converted to decimal; integers of any size are kept exactly);
//   - !!float becomes an ast.Number holding valid JSON number text, except
//     .inf, -.inf and .nan, which JSON cannot represent: they stay strings;
//   - !!bool is true/false (only true/True/TRUE/false/False/FALSE: "yes",
//     "on" and "y" are strings under YAML 1.2), !!null (~, null, empty) is null;
//   - an explicit tag that does not fit the text (!!int abc) is an error.
//
// Mapping keys become strings: non-string scalar keys are written in their
// canonical form (1 -> "1", 0x10 -> "16", 1.50 -> "1.5", true -> "true",
// ~ -> "null"); mapping or sequence keys are an error. A key that appears twice
// in one mapping (after that conversion) is an error, as in Kubernetes' strict
// decoding. Merge keys (<<) take a mapping or a sequence of mappings; keys
// written in the mapping win over merged ones, and earlier merged mappings
// win over later ones.
//
// Aliases are expanded (each use yields its own copy). Expansion is limited
// by the run's AliasBudget (m; nil: a budget of its own, AliasValuesBase
// values) and nesting to MaxYAMLDepth levels; an alias that refers to a node
// containing it is an error. Errors are *yamlError.
func yamlToValue(n *yaml.Node, m *aliasMeter) (ast.Value, error) {
	c := yamlConverter{meter: m}
	t, err := c.term(n)
	if err != nil {
		return nil, err
	}
	return t.Value, nil
}

// yamlConverter holds the state of one document's conversion.
type yamlConverter struct {
	// lineOffset is added to node lines in errors (the line before the
	// document's first line in its file).
	lineOffset int
	depth      int
	aliasDepth int // > 0 while expanding an alias
	aliasLine  int // line of the outermost alias being expanded
	// meter is the source's share of the run's alias budget, which every
	// value alias expansion produces is counted against; nil: a budget of
	// its own, made on the first alias.
	meter *aliasMeter
	// active holds the anchored nodes being converted, to detect aliases
	// that refer to a node containing them.
	active map[*yaml.Node]struct{}
	// duplicates, when set, makes a repeated mapping key keep its last value
	// (as Kubernetes' and Argo CD's decoders do) and records it here, instead
	// of being an error.
	duplicates *[]evaluator.DuplicateKey
	// keyProbes counts key comparisons and index lookups while building
	// mappings (tests check that it grows linearly with the keys).
	keyProbes int
	// strs, when set, holds the term of each short string converted so far
	// (str), shared by every document of a file.
	strs map[string]*ast.Term
}

// sharedString is the length up to which str shares a string's term.
const sharedString = 64

// str returns the term of string s: one term for every equal short string
// of the file (c.strs). A file's objects repeat their keys and many of their
// values, and a term each would be an allocation the collector then scans
// for as long as the objects live.
func (c *yamlConverter) str(s string) *ast.Term {
	if c.strs == nil || len(s) > sharedString {
		return ast.InternedTerm(s)
	}
	t, ok := c.strs[s]
	if !ok {
		t = ast.InternedTerm(s)
		c.strs[s] = t
	}
	return t
}

// smallMapping is the number of pairs up to which a mapping finds keys by
// scanning them (cheaper than a map for the usual handful).
const smallMapping = 8

// errorf returns an error at a node line (made absolute with lineOffset).
func (c *yamlConverter) errorf(line int, format string, args ...any) *yamlError {
	if line > 0 {
		line += c.lineOffset
	}
	return &yamlError{Line: line, Message: fmt.Sprintf(format, args...)}
}

// count accounts for one produced value.
func (c *yamlConverter) count() error {
	if c.aliasDepth == 0 {
		return nil
	}
	if c.meter == nil {
		c.meter = NewAliasBudget().newSource()
	}
	if !c.meter.spend() {
		return c.meter.exceeded(c)
	}
	return nil
}

func (c *yamlConverter) term(n *yaml.Node) (*ast.Term, error) {
	if err := c.count(); err != nil {
		return nil, err
	}
	if n.Anchor != "" {
		if c.active == nil {
			c.active = make(map[*yaml.Node]struct{})
		}
		c.active[n] = struct{}{}
		defer delete(c.active, n)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return ast.NullTerm(), nil
		}
		return c.term(n.Content[0])
	case yaml.AliasNode:
		target, err := c.aliasTarget(n)
		if err != nil {
			return nil, err
		}
		if c.aliasDepth == 0 {
			c.aliasLine = n.Line
		}
		c.aliasDepth++
		t, err := c.term(target)
		c.aliasDepth--
		return t, err
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.SequenceNode:
		if err := c.enter(n); err != nil {
			return nil, err
		}
		defer c.leave()
		terms := make([]*ast.Term, len(n.Content))
		for i, e := range n.Content {
			t, err := c.term(e)
			if err != nil {
				return nil, err
			}
			terms[i] = t
		}
		return ast.NewTerm(ast.NewArray(terms...)), nil
	case yaml.MappingNode:
		if err := c.enter(n); err != nil {
			return nil, err
		}
		defer c.leave()
		return c.mapping(n)
	case 0:
		// The zero node (yaml.Unmarshal of an empty document).
		return ast.NullTerm(), nil
	}
	return nil, c.errorf(n.Line, "unsupported YAML node kind %d", n.Kind)
}

func (c *yamlConverter) enter(n *yaml.Node) error {
	c.depth++
	if c.depth > MaxYAMLDepth {
		return c.errorf(n.Line, "nesting is deeper than %d levels", MaxYAMLDepth)
	}
	return nil
}

func (c *yamlConverter) leave() { c.depth-- }

// aliasTarget returns the node an alias refers to, refusing aliases that
// refer to a node being converted (which would expand forever).
func (c *yamlConverter) aliasTarget(n *yaml.Node) (*yaml.Node, error) {
	target := n.Alias
	if target == nil {
		return nil, c.errorf(n.Line, "unknown anchor %q referenced", n.Value)
	}
	if _, ok := c.active[target]; ok {
		return nil, c.errorf(n.Line, "anchor %q value contains itself", n.Value)
	}
	return target, nil
}

// yamlMergeKey reports whether k is the merge key <<.
func yamlMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// mapping converts a mapping node; c.enter has been called.
func (c *yamlConverter) mapping(n *yaml.Node) (*ast.Term, error) {
	npairs := len(n.Content) / 2
	pairs := make([][2]*ast.Term, 0, npairs)
	lines := make([]int, 0, npairs) // line of each key, for duplicate errors
	// index maps a key to its position in pairs once there are more than a
	// few pairs (written or merged), so that finding a key costs O(1) and a
	// mapping costs O(its pairs) however many keys merges bring.
	var index map[string]int
	find := func(key string) int {
		if index != nil {
			c.keyProbes++
			if i, ok := index[key]; ok {
				return i
			}
			return -1
		}
		for i, p := range pairs {
			c.keyProbes++
			if string(p[0].Value.(ast.String)) == key {
				return i
			}
		}
		return -1
	}
	add := func(key string, v *ast.Term, line int) {
		pairs = append(pairs, [2]*ast.Term{c.str(key), v})
		lines = append(lines, line)
		switch {
		case index != nil:
			index[key] = len(pairs) - 1
		case len(pairs) > smallMapping:
			index = make(map[string]int, max(npairs, 2*len(pairs)))
			for i, p := range pairs {
				index[string(p[0].Value.(ast.String))] = i
			}
		}
	}

	var merge *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if yamlMergeKey(k) {
			if merge != nil {
				return nil, c.errorf(k.Line, "duplicate key %q (first defined at line %d)", "<<", c.lineOffset+merge.Line)
			}
			merge = k
			continue
		}
		key, err := c.key(k)
		if err != nil {
			return nil, err
		}
		j := find(key)
		if j >= 0 && c.duplicates == nil {
			return nil, c.errorf(k.Line, "duplicate key %q (first defined at line %d)", key, c.lineOffset+lines[j])
		}
		vt, err := c.term(v)
		if err != nil {
			return nil, err
		}
		if j >= 0 {
			*c.duplicates = append(*c.duplicates, evaluator.DuplicateKey{
				Key: key, Line: c.lineOffset + k.Line, First: c.lineOffset + lines[j],
				MappingLine: c.lineOffset + n.Line, MappingColumn: n.Column,
			})
			pairs[j][1], lines[j] = vt, k.Line
			continue
		}
		add(key, vt, k.Line)
	}

	if merge != nil {
		// Find the merge key's value again (merge holds the key node).
		var value *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i] == merge {
				value = n.Content[i+1]
				break
			}
		}
		var sources []*yaml.Node
		switch value.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{value}
		case yaml.AliasNode:
			if value.Alias == nil || value.Alias.Kind != yaml.MappingNode {
				return nil, c.errorf(value.Line, "map merge requires map or sequence of maps as the value")
			}
			sources = []*yaml.Node{value}
		case yaml.SequenceNode:
			for _, s := range value.Content {
				if s.Kind == yaml.AliasNode && s.Alias != nil {
					if s.Alias.Kind != yaml.MappingNode {
						return nil, c.errorf(s.Line, "map merge requires map or sequence of maps as the value")
					}
				} else if s.Kind != yaml.MappingNode {
					return nil, c.errorf(s.Line, "map merge requires map or sequence of maps as the value")
				}
			}
			sources = value.Content
		default:
			return nil, c.errorf(value.Line, "map merge requires map or sequence of maps as the value")
		}
		for _, s := range sources {
			t, err := c.term(s)
			if err != nil {
				return nil, err
			}
			obj, ok := t.Value.(ast.Object)
			if !ok {
				return nil, c.errorf(s.Line, "map merge requires map or sequence of maps as the value")
			}
			for _, mk := range obj.Keys() {
				key := string(mk.Value.(ast.String))
				if find(key) >= 0 {
					continue // explicit keys and earlier merges win
				}
				add(key, obj.Get(mk), s.Line)
			}
		}
	}
	return ast.NewTerm(ast.NewObject(pairs...)), nil
}

// key returns the string form of a mapping key.
func (c *yamlConverter) key(k *yaml.Node) (string, error) {
	if err := c.count(); err != nil {
		return "", err
	}
	if k.Kind == yaml.AliasNode {
		target, err := c.aliasTarget(k)
		if err != nil {
			return "", err
		}
		k = target
	}
	if k.Kind != yaml.ScalarNode {
		return "", c.errorf(k.Line, "mapping key must be a scalar, not a %s", yamlKindName(k.Kind))
	}
	t, err := c.scalar(k)
	if err != nil {
		return "", err
	}
	switch v := t.Value.(type) {
	case ast.String:
		return string(v), nil
	case ast.Number:
		if strings.ContainsAny(string(v), ".eE") { // a float
			if f, ok := v.Float64(); ok {
				return strconv.FormatFloat(f, 'g', -1, 64), nil
			}
		}
		return string(v), nil
	case ast.Boolean:
		return strconv.FormatBool(bool(v)), nil
	case ast.Null:
		return "null", nil
	}
	return k.Value, nil
}

func yamlKindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	return "node"
}

// yamlImplicitTag returns the tag yaml.v3 resolves a plain scalar to.
func yamlImplicitTag(value string) string {
	return (&yaml.Node{Kind: yaml.ScalarNode, Value: value}).ShortTag()
}

// scalar converts a scalar node.
func (c *yamlConverter) scalar(n *yaml.Node) (*ast.Term, error) {
	tag := n.ShortTag()
	resolved := tag
	switch tag {
	case "!!int", "!!float", "!!bool", "!!null":
		if n.Tag != "" && n.Tag != "!" {
			// Explicit tag: the text must resolve to it, as in yaml.v3.
			resolved = yamlImplicitTag(n.Value)
			ok := resolved == tag || (tag == "!!float" && resolved == "!!int")
			if !ok {
				return nil, c.errorf(n.Line, "cannot decode %s `%s` as a %s", resolved, n.Value, tag)
			}
		}
	}
	switch resolved {
	case "!!null":
		return ast.NullTerm(), nil
	case "!!bool":
		return ast.InternedTerm(n.Value == "true" || n.Value == "True" || n.Value == "TRUE"), nil
	case "!!int":
		num, ok := yamlInt(n.Value)
		if !ok {
			return nil, c.errorf(n.Line, "cannot decode `%s` as an integer", n.Value)
		}
		return num, nil
	case "!!float":
		num, ok := yamlFloat(n.Value)
		if !ok {
			// .inf, -.inf and .nan have no JSON representation.
			return ast.StringTerm(n.Value), nil
		}
		return num, nil
	}
	// !!str, !!timestamp, !!binary, !!merge used as a value, custom tags.
	return c.str(n.Value), nil
}

// yamlInt converts the text of a YAML 1.2 / yaml.v3 integer to a decimal
// ast.Number: signs, underscores, 0x, 0o, 0b and leading-zero octal.
func yamlInt(s string) (*ast.Term, bool) {
	plain := strings.ReplaceAll(s, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		if t := ast.InternedIntNumberTermFromString(strconv.FormatInt(i, 10)); t != nil {
			return t, true
		}
		return ast.NumberTerm(json.Number(strconv.FormatInt(i, 10))), true
	}
	var b big.Int
	if _, ok := b.SetString(plain, 0); !ok {
		return nil, false
	}
	return ast.NumberTerm(json.Number(b.String())), true
}

// yamlFloat converts the text of a YAML float to an ast.Number holding valid
// JSON number text; it fails for infinities and NaN.
func yamlFloat(s string) (*ast.Term, bool) {
	plain := strings.ReplaceAll(s, "_", "")
	plain = strings.TrimPrefix(plain, "+")
	if isJSONNumber(plain) {
		return ast.NumberTerm(json.Number(plain)), true
	}
	f, err := strconv.ParseFloat(plain, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	return ast.NumberTerm(json.Number(strconv.FormatFloat(f, 'g', -1, 64))), true
}

// isJSONNumber reports whether s is a number as JSON spells it.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
