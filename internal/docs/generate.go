package docs

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/explain"
	"github.com/flipflop-dev/flipflop/internal/gentree"
	"github.com/flipflop-dev/flipflop/internal/graph"
)

// RulesDir is where the rule pages live, relative to the repository root.
const RulesDir = "docs/rules"

// Readme is the top-level README, relative to the repository root; Generate
// rewrites only its generated regions.
const Readme = "README.md"

// UsagePage is the usage reference, relative to the repository root; Generate
// rewrites only its explain region.
const UsagePage = "docs/usage.md"

// ExampleEstate is the estate the usage page's explain region shows.
const ExampleEstate = "examples/contradiction"

// Regions that Generate owns, between <!-- NAME:begin --> and <!-- NAME:end -->:
// the rules index in the README, the explain example in the usage page.
const (
	RegionRules   = "rules"
	RegionExplain = "explain"
)

// Files maps paths relative to the repository root to their generated contents.
type Files map[string][]byte

// Generate renders every generated documentation file of the repository at
// root: a page per rule, the rules index, and the README with its regions
// regenerated (the rest of the README is kept as it is).
func Generate(ctx context.Context, root string) (Files, error) {
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		return nil, err
	}
	rules := ev.Rules()
	files := Files{}
	for _, r := range rules {
		md, err := Markdown(r)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.ID, err)
		}
		files[path.Join(RulesDir, r.ID+".md")] = []byte(md)
	}
	files[path.Join(RulesDir, "README.md")] = []byte(rulesReadme(rules))

	readme, err := os.ReadFile(filepath.Join(root, Readme))
	if err != nil {
		return nil, err
	}
	out, err := Splice(string(readme), RegionRules, Index(rules, RulesDir+"/"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Readme, err)
	}
	files[Readme] = []byte(out)

	usage, err := os.ReadFile(filepath.Join(root, UsagePage))
	if err != nil {
		return nil, err
	}
	section, err := explainSection(ctx, ev, root)
	if err != nil {
		return nil, err
	}
	if out, err = Splice(string(usage), RegionExplain, section); err != nil {
		return nil, fmt.Errorf("%s: %w", UsagePage, err)
	}
	files[UsagePage] = []byte(out)
	return files, nil
}

// Write generates the files and writes them under root, removing pages of
// rules that no longer exist.
func Write(ctx context.Context, root string) error {
	files, err := Generate(ctx, root)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, RulesDir), 0o755); err != nil {
		return err
	}
	return gentree.Write(root, files, stalePages(root, files))
}

// Check lists the generated files under root that differ from what Generate
// produces, are missing, or are stale pages; empty means up to date.
func Check(ctx context.Context, root string) ([]string, error) {
	files, err := Generate(ctx, root)
	if err != nil {
		return nil, err
	}
	return gentree.Check(root, files, stalePages(root, files), "no rule has this id any more"), nil
}

func stalePages(root string, files Files) []string {
	entries, _ := os.ReadDir(filepath.Join(root, RulesDir))
	var stale []string
	for _, e := range entries {
		name := path.Join(RulesDir, e.Name())
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") && files[name] == nil {
			stale = append(stale, name)
		}
	}
	return stale
}

// Splice replaces what lies between <!-- name:begin --> and <!-- name:end -->
// in doc with content.
func Splice(doc, name, content string) (string, error) {
	begin, end := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < 0 || j < i {
		return "", fmt.Errorf("markers %s and %s not found (in that order)", begin, end)
	}
	if strings.Count(doc, begin) > 1 || strings.Count(doc, end) > 1 {
		return "", fmt.Errorf("markers %s and %s appear more than once", begin, end)
	}
	return doc[:i+len(begin)] + "\n" + strings.TrimRight(content, "\n") + "\n" + doc[j:], nil
}

// ordered sorts rules for the index: most severe first, rules about waivers
// last, then by id.
func ordered(rules []evaluator.Rule) []evaluator.Rule {
	out := slices.Clone(rules)
	meta := func(r evaluator.Rule) bool { return strings.HasPrefix(r.Package, "lib.flipflop.meta.") }
	slices.SortStableFunc(out, func(a, b evaluator.Rule) int {
		return cmp.Or(
			cmp.Compare(evaluator.SeverityRank(b.Severity), evaluator.SeverityRank(a.Severity)),
			compareBool(meta(a), meta(b)),
			cmp.Compare(a.ID, b.ID),
		)
	})
	return out
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// SeverityText is a rule's severity for people: "error", or, for a rule whose
// findings are surer once the Kargo version is named, "error (warning when the
// Kargo version is assumed)".
func SeverityText(r evaluator.Rule) string {
	if r.AssumedSeverity == "" || r.AssumedSeverity == r.Severity {
		return r.Severity
	}
	return fmt.Sprintf("%s (%s when the Kargo version is assumed)", r.Severity, r.AssumedSeverity)
}

// Index renders the rules table; links are prefix + <id>.md.
func Index(rules []evaluator.Rule, prefix string) string {
	var b strings.Builder
	b.WriteString("| rule | severity | Gatekeeper | what it catches |\n|---|---|---|---|\n")
	for _, r := range ordered(rules) {
		gk := "no"
		if r.Admission {
			gk = "yes"
		}
		fmt.Fprintf(&b, "| [`%s`](%s%s.md) | %s | %s | %s |\n", r.ID, prefix, r.ID, SeverityText(r), gk,
			strings.ReplaceAll(mdEscape(r.Title), "|", `\|`))
	}
	return b.String()
}

func rulesReadme(rules []evaluator.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated by `%s` from the rules' METADATA. Do not edit. -->\n\n", RegenerateCommand)
	b.WriteString("# Rules\n\n")
	b.WriteString("Each rule lives in `policies/rules/<rule>/` with its METADATA (title, description, why, " +
		"remediation, references), its Rego tests and sample estates. Every page here is generated from them; " +
		"`flipflop explain RULE` prints the same page in a terminal, and SARIF output links to it. " +
		"\"Gatekeeper: yes\" means the rule runs at admission: the `flipflop` ConstraintTemplate in `bundles/gatekeeper/` reports it.\n\n")
	b.WriteString(Index(rules, ""))
	return b.String()
}

// explainSection is the usage page's explain region: `flipflop explain` and
// `flipflop graph -o mermaid` on the example estate.
func explainSection(ctx context.Context, ev *evaluator.Evaluator, root string) (string, error) {
	objs, errs := (&loader.Loader{}).Load([]string{filepath.Join(root, filepath.FromSlash(ExampleEstate))})
	if len(errs) > 0 {
		return "", fmt.Errorf("%s: %v", ExampleEstate, errs[0])
	}
	for i := range objs {
		// Paths as a user at the repository root would see them.
		if rel, err := filepath.Rel(root, filepath.FromSlash(objs[i].Path)); err == nil {
			objs[i].Path = filepath.ToSlash(rel)
		}
	}
	report, model, err := ev.Analyze(ctx, objs)
	if err != nil {
		return "", err
	}
	var timeline, chart bytes.Buffer
	if err := explain.Write(&timeline, model, report, ev.Rules()); err != nil {
		return "", err
	}
	if err := graph.Write(&chart, "mermaid", graph.Build(model, report)); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated by `%s` from %s. Do not edit. -->\n", RegenerateCommand, ExampleEstate)
	b.WriteString("## Explain and graph\n\n")
	b.WriteString("`flipflop explain [PATH... | --cluster]` replays what a shared-branch contradiction does to your own " +
		"Stages: the commit each promotion pushes, what each pinning Stage expects, what Argo CD then reports, " +
		"and which Stage is Healthy after each promotion. `flipflop explain RULE` prints a rule's page " +
		"([docs/rules/](rules/README.md)).\n\n")
	fmt.Fprintf(&b, "```text\n$ flipflop explain %s\n%s```\n\n", ExampleEstate, timeline.String())
	fmt.Fprintf(&b, "`flipflop graph [PATH... | --cluster] -o mermaid|dot` draws Stages in promotion order (upstream first), "+
		"the Applications they pin (labelled with what the pin expects), the repository and branch each Application tracks, and the "+
		"branches the Stages push to (dashed, labelled with the Stage that pushes); what an error finding is about is red. "+
		"`-o dot` is for Graphviz (`dot -Tsvg`). On the same estate, `flipflop graph -o mermaid %s` draws:\n\n", ExampleEstate)
	fmt.Fprintf(&b, "```mermaid\n%s```\n", chart.String())
	return b.String(), nil
}
