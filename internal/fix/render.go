package fix

import (
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// New content is built from these values: ordered mappings, sequences and
// scalars (string or bool), rendered in the style of the place they go.
type (
	kv struct {
		k string
		v any
	}
	obj []kv
	arr []any
)

// scalarStyle is how a new scalar is written.
type scalarStyle int

const (
	stylePlain  scalarStyle = iota // plain when YAML reads it back as the same string, else double-quoted
	styleDouble                    // always double-quoted (JSON-like flow collections)
	styleSingle                    // single-quoted
)

var yaml11Bool = regexp.MustCompile(`^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$`)

// plainOK reports whether s can be written as a plain scalar and read back as
// the same string, in flow context when flow is set.
func plainOK(s string, flow bool) bool {
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, "\n\r\t") {
		return false
	}
	if strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`", rune(s[0])) {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	if flow && strings.ContainsAny(s, ",[]{}") {
		return false
	}
	if yaml11Bool.MatchString(s) {
		return false // a boolean to YAML 1.1 readers (sigs.k8s.io/yaml, kubectl)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("v: "+s), &n); err != nil || len(n.Content) == 0 {
		return false
	}
	v := lookup(n.Content[0], "v")
	return v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value == s
}

func doubleQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func singleQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// scalar renders a string or bool value.
func scalar(v any, style scalarStyle, flow bool) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case string:
		switch {
		case style == styleDouble:
			return doubleQuote(x)
		case style == styleSingle && !strings.ContainsAny(x, "\n\r"):
			return singleQuote(x)
		case plainOK(x, flow):
			return x
		}
		return doubleQuote(x)
	}
	panic("fix: unsupported scalar")
}

// key renders a mapping key.
func key(k string, style scalarStyle) string {
	if style == styleDouble {
		return doubleQuote(k)
	}
	return scalar(k, stylePlain, true)
}

// flowText renders v in flow style on one line.
func flowText(v any, style scalarStyle) string {
	switch x := v.(type) {
	case obj:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = key(e.k, style) + ": " + flowText(e.v, style)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case arr:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = flowText(e, style)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return scalar(v, style, true)
}

// blockLines renders a mapping or sequence in block style, one string per
// line, indented by indent spaces, nesting by step spaces.
func blockLines(v any, indent, step int) []string {
	pad := strings.Repeat(" ", indent)
	var out []string
	switch x := v.(type) {
	case obj:
		for _, e := range x {
			switch c := e.v.(type) {
			case obj:
				if len(c) == 0 {
					out = append(out, pad+key(e.k, stylePlain)+": {}")
					continue
				}
				out = append(out, pad+key(e.k, stylePlain)+":")
				out = append(out, blockLines(c, indent+step, step)...)
			case arr:
				if len(c) == 0 {
					out = append(out, pad+key(e.k, stylePlain)+": []")
					continue
				}
				out = append(out, pad+key(e.k, stylePlain)+":")
				out = append(out, blockLines(c, indent, step)...) // sequences at their key's indentation
			default:
				out = append(out, pad+key(e.k, stylePlain)+": "+scalar(c, stylePlain, false))
			}
		}
	case arr:
		for _, e := range x {
			switch e.(type) {
			case obj, arr:
				inner := blockLines(e, indent+2, step)
				inner[0] = pad + "- " + strings.TrimLeft(inner[0], " ")
				out = append(out, inner...)
			default:
				out = append(out, pad+"- "+scalar(e, stylePlain, false))
			}
		}
	}
	return out
}
