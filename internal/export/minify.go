package export

import (
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"sigs.k8s.io/yaml"
)

// minify returns a policy module's source without its comments, for the
// Gatekeeper template, whose size is mostly the policies' comments: every
// comment goes, except a package METADATA block naming a rule
// (custom.id), which rego.metadata.chain() reads at evaluation (result.fail:
// the rule's id, severity, title and remediation); that block keeps only
// those fields. The code is left as written, line by line: comments are
// found by OPA's parser (never a # inside a string), and the result is
// parsed again and must be the same module, so a minified lib cannot behave
// otherwise than its source.
func minify(path, src string) (string, error) {
	opts := ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1}
	orig, err := ast.ParseModuleWithOpts(path, src, opts)
	if err != nil {
		return "", err
	}
	lines := strings.Split(src, "\n")
	starts := make([]int, len(lines)) // byte offset of each line
	for i := 1; i < len(lines); i++ {
		starts[i] = starts[i-1] + len(lines[i-1]) + 1
	}
	drop := make([]bool, len(lines))
	for _, c := range orig.Comments {
		row := c.Location.Row - 1
		if row < 0 || row >= len(lines) || c.Location.Offset < starts[row] || c.Location.Offset > starts[row]+len(lines[row]) {
			return "", fmt.Errorf("%s: comment at line %d is not where the parser says", path, c.Location.Row)
		}
		before := lines[row][:c.Location.Offset-starts[row]]
		if strings.TrimSpace(before) == "" {
			drop[row] = true
		} else {
			lines[row] = strings.TrimRight(before, " \t")
		}
	}
	var b strings.Builder
	for i, l := range lines {
		if drop[i] || strings.TrimSpace(l) == "" && i > 0 && drop[i-1] {
			continue
		}
		if orig.Package != nil && orig.Package.Location != nil && i == orig.Package.Location.Row-1 {
			meta, err := ruleMetadata(path, orig)
			if err != nil {
				return "", err
			}
			b.WriteString(meta)
		}
		b.WriteString(l)
		if i < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	out := b.String()
	got, err := ast.ParseModuleWithOpts(path, out, opts)
	if err != nil {
		return "", fmt.Errorf("%s, minified: %w", path, err)
	}
	if !sameCode(orig, got) || !sameRuleMetadata(orig, got) {
		return "", fmt.Errorf("%s: the minified module differs from its source", path)
	}
	return out, nil
}

// ruleIdentity are the METADATA fields a finding reads (lib.flipflop.result).
var ruleIdentity = []string{"id", "severity", "remediation"}

// ruleMetadata is the package METADATA block of a rule's module, reduced to
// what rego.metadata.chain() gives a finding; "" for any other module.
func ruleMetadata(path string, m *ast.Module) (string, error) {
	a := packageAnnotation(m)
	if a == nil || a.Custom["id"] == nil {
		return "", nil
	}
	custom := map[string]any{}
	for _, k := range ruleIdentity {
		v, ok := a.Custom[k]
		if !ok {
			return "", fmt.Errorf("%s: METADATA lacks custom.%s", path, k)
		}
		custom[k] = v
	}
	y, err := yaml.Marshal(map[string]any{"title": a.Title, "custom": custom})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# METADATA\n")
	for _, l := range strings.Split(strings.TrimRight(string(y), "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	return b.String(), nil
}

func packageAnnotation(m *ast.Module) *ast.Annotations {
	for _, a := range m.Annotations {
		if a.Scope == "package" {
			return a
		}
	}
	return nil
}

// sameCode says that two parses of a module hold the same package, imports
// and rules (comments and annotations aside).
func sameCode(a, b *ast.Module) bool {
	strip := func(m *ast.Module) *ast.Module {
		c := m.Copy()
		c.Comments, c.Annotations = nil, nil
		for _, r := range c.Rules {
			r.Annotations = nil
		}
		return c
	}
	return strip(a).Equal(strip(b))
}

// sameRuleMetadata says that the minified module b gives a finding the rule
// identity a gives.
func sameRuleMetadata(a, b *ast.Module) bool {
	pa, pb := packageAnnotation(a), packageAnnotation(b)
	if pa == nil || pa.Custom["id"] == nil {
		return pb == nil
	}
	if pb == nil || pa.Title != pb.Title {
		return false
	}
	return !slices.ContainsFunc(ruleIdentity, func(k string) bool {
		return fmt.Sprint(pa.Custom[k]) != fmt.Sprint(pb.Custom[k])
	})
}
