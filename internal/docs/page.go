// Package docs renders flipflop's rule documentation from the rules' METADATA
// and sample estates: one page per rule (docs/rules/<id>.md), the rules index
// (docs/rules/README.md and a region of the top-level README), and the same page
// as plain text for `flipflop explain RULE`. METADATA is the single source of
// truth; Generate and Check keep the committed files in step with it.
package docs

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/export"
	"github.com/flipflop-dev/flipflop/policies"
)

// RegenerateCommand is what a user runs when the committed docs drift.
const RegenerateCommand = "make docs"

// PageURL is where a rule's page is published; %s is the rule id. The text a
// binary prints links it rather than paths of the source tree.
const PageURL = "https://github.com/flipflop-dev/flipflop/blob/main/docs/rules/%s.md"

// Sample is one sample estate of a rule: the files of one case folder.
type Sample struct {
	// Dir is the case folder in the repository, e.g.
	// policies/rules/shared_application/samples/fires/two-stages-one-app.
	Dir   string
	Files []SampleFile
}

// SampleFile is one file of a sample estate.
type SampleFile struct {
	Name    string
	Content string
}

// Page is everything a rule's documentation shows.
type Page struct {
	Rule evaluator.Rule
	// Fires and Clean are the first case (by name) of the rule's
	// samples/fires and samples/clean folders; Dir is empty when there is none.
	Fires, Clean Sample
	// WaiverResource is a resource of the fires sample a waiver could name:
	// "Stage/namespace/name".
	WaiverResource string
}

// NewPage reads the samples of rule r from the embedded policy tree.
func NewPage(r evaluator.Rule) (*Page, error) {
	p := &Page{Rule: r}
	dir := path.Dir(r.File) // rules/<rule>
	var err error
	if p.Fires, err = firstSample(dir, "fires"); err != nil {
		return nil, err
	}
	if p.Clean, err = firstSample(dir, "clean"); err != nil {
		return nil, err
	}
	p.WaiverResource = waiverResource(p.Fires)
	return p, nil
}

// Markdown renders rule r's page as GitHub Markdown (what docs/rules/<id>.md holds).
func Markdown(r evaluator.Rule) (string, error) {
	p, err := NewPage(r)
	if err != nil {
		return "", err
	}
	return p.Markdown(), nil
}

// Text renders rule r's page as plain text for a terminal (what
// `flipflop explain RULE` prints): the same content as Markdown.
func Text(r evaluator.Rule) (string, error) {
	p, err := NewPage(r)
	if err != nil {
		return "", err
	}
	return p.Text(), nil
}

func firstSample(ruleDir, kind string) (Sample, error) {
	root := path.Join(ruleDir, "samples", kind)
	entries, err := fs.ReadDir(policies.Samples, root)
	if err != nil {
		return Sample{}, nil // no samples of this kind
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	if len(cases) == 0 {
		return Sample{}, nil
	}
	slices.Sort(cases)
	dir := path.Join(root, cases[0])
	files, err := fs.ReadDir(policies.Samples, dir)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{Dir: path.Join("policies", dir)}
	for _, f := range files {
		if f.IsDir() || !(strings.HasSuffix(f.Name(), ".yaml") || strings.HasSuffix(f.Name(), ".yml")) {
			continue
		}
		b, err := fs.ReadFile(policies.Samples, path.Join(dir, f.Name()))
		if err != nil {
			return Sample{}, err
		}
		s.Files = append(s.Files, SampleFile{Name: f.Name(), Content: string(b)})
	}
	slices.SortFunc(s.Files, func(a, b SampleFile) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

// waiverResource names the first Stage of a sample (else its first
// Application) the way waivers do: Kind/namespace/name.
func waiverResource(s Sample) string {
	var first string
	for _, f := range s.Files {
		dec := yaml.NewDecoder(strings.NewReader(f.Content))
		for {
			var doc struct {
				Kind     string `yaml:"kind"`
				Metadata struct {
					Name      string `yaml:"name"`
					Namespace string `yaml:"namespace"`
				} `yaml:"metadata"`
			}
			if err := dec.Decode(&doc); err != nil {
				break
			}
			if doc.Metadata.Name == "" || strings.Contains(doc.Metadata.Name, "{{") {
				continue
			}
			ns := doc.Metadata.Namespace
			if doc.Kind == "Application" && ns == "" {
				ns = "argocd"
			}
			ref := fmt.Sprintf("%s/%s/%s", doc.Kind, ns, doc.Metadata.Name)
			switch {
			case doc.Kind == "Stage":
				return ref
			case doc.Kind == "Application" && first == "":
				first = ref
			}
		}
	}
	if first == "" {
		return "Stage/<project>/<stage>"
	}
	return first
}

// meta reports a rule about waivers themselves: its findings cannot be waived.
func (p *Page) meta() bool { return strings.HasPrefix(p.Rule.Package, "lib.flipflop.meta.") }

// ruleDir is the rule's folder in the repository: policies/rules/<rule>.
func (p *Page) ruleDir() string { return path.Join("policies", path.Dir(p.Rule.File)) }

// render writes the page in the fixed shape every rule shares. The Markdown
// page lives in the repository and names the rule's source and samples; the
// text (for someone who may have only the binary) links the published page and
// names the command that writes the Gatekeeper template instead.
func (p *Page) render(w writer, text bool) {
	r := p.Rule
	w.title(r.ID, r.Title)
	gk := "no (check it in CI with `flipflop check` or conftest)"
	switch {
	case r.Admission && text:
		gk = fmt.Sprintf("yes: the `%s` ConstraintTemplate reports it (`flipflop export gatekeeper DIR` writes it; a constraint's `rules: [%s]` selects it alone)", export.TemplateName, r.ID)
	case r.Admission:
		gk = fmt.Sprintf("yes: the `%s` ConstraintTemplate in `bundles/gatekeeper/` reports it (a constraint's `rules: [%s]` selects it alone)", export.TemplateName, r.ID)
	}
	source := [2]string{"Source", "`" + p.ruleDir() + "/rule.rego` (METADATA)"}
	if text {
		source = [2]string{"Online", fmt.Sprintf(PageURL, r.ID)}
	}
	w.facts([][2]string{
		{"Severity", SeverityText(r)},
		{"Gatekeeper", gk},
		source,
	})

	w.heading("Summary")
	w.prose(r.Description)

	if strings.TrimSpace(r.Why) != "" {
		w.heading("Why it breaks")
		w.prose(r.Why)
	}

	if p.Fires.Dir != "" || p.Clean.Dir != "" {
		w.heading("Example")
		if p.Fires.Dir != "" {
			w.para(sampleIntro("This estate makes the rule fire", p.Fires.Dir, text))
			for _, f := range p.Fires.Files {
				w.code("yaml", f.Name, f.Content)
			}
		}
		if p.Clean.Dir != "" {
			w.para(sampleIntro("This one does not", p.Clean.Dir, text))
			for _, f := range p.Clean.Files {
				w.code("yaml", f.Name, f.Content)
			}
		}
	}

	w.heading("How to fix")
	w.prose(r.Remediation)

	w.heading("Waivers")
	if p.meta() {
		w.para("Findings of this rule are about waivers themselves and cannot be waived: correct the waiver, or remove it.")
	} else {
		p.waivers(w)
	}

	if len(r.RelatedResources) > 0 {
		w.heading("References")
		var links [][2]string
		for _, rr := range r.RelatedResources {
			links = append(links, [2]string{rr.Description, rr.URL})
		}
		w.links(links)
	}
}

// sampleIntro introduces a sample estate: with its folder in the repository
// for the Markdown page, without it for the text.
func sampleIntro(s, dir string, text bool) string {
	if text {
		return s + ":"
	}
	return fmt.Sprintf("%s (`%s/`):", s, dir)
}

func (p *Page) waivers(w writer) {
	id := p.Rule.ID
	res := p.WaiverResource
	glob := res[:strings.LastIndex(res, "/")+1] + "*"
	w.para("To accept a finding of this rule on purpose, annotate a Stage, Application or " +
		"ApplicationSet the finding names (several rules: separate them with commas; the reason is required):")
	w.code("yaml", "", fmt.Sprintf(`metadata:
  annotations:
    flipflop.dev/ignore: "%s: <reason>"
    flipflop.dev/ignore-expires: "2027-06-30"   # optional
`, id))
	w.para("or, for objects you cannot annotate (vendored charts, generated Applications), add an entry to " +
		"the waivers file (`--waivers FILE`; by default `.flipflop.yaml` in the working directory):")
	w.code("yaml", "", fmt.Sprintf(`waivers:
- rule: %s
  resources: ["%s"]   # Kind/namespace/name globs, e.g. "%s"
  reason: <reason>
  expires: "2027-06-30"   # optional, YYYY-MM-DD
`, id, res, glob))
	w.para("A waived finding is still listed, marked waived, and counts toward neither the totals nor the " +
		"exit code. A waiver without a rule or a reason waives nothing and is reported (`invalid-waiver`); " +
		"after its expiry date it waives nothing and is reported (`waiver-expired`).")
}

// Markdown renders the page as GitHub Markdown.
func (p *Page) Markdown() string {
	m := &mdWriter{}
	fmt.Fprintf(&m.b, "<!-- Generated by `%s` from the METADATA and samples of %s/. Do not edit. -->\n\n", RegenerateCommand, p.ruleDir())
	p.render(m, false)
	return m.String()
}

// Text renders the page as plain text for a terminal.
func (p *Page) Text() string {
	t := &textWriter{}
	p.render(t, true)
	return t.String()
}
