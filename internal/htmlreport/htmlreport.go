// Package htmlreport writes a flipflop check as one self-contained HTML page,
// for a platform team to attach to a ticket: the findings, each with the
// picture of its objects (drawn as inline SVG by internal/graph from the same
// graph `flipflop graph` draws), why, the ways out with their commands, the
// promotion timeline `flipflop explain` replays, and the fix previews as
// diffs. The page loads nothing and runs no script: its Content-Security-Policy
// forbids both, so it shows the same offline, in a mail client or in a
// ticketing tool. It is written with html/template, which escapes every value;
// the pictures are graph.SVG's, which escapes its own.
package htmlreport

import (
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/digest"
	"github.com/flipflop-dev/flipflop/internal/docs"
	"github.com/flipflop-dev/flipflop/internal/explain"
	"github.com/flipflop-dev/flipflop/internal/fix"
	"github.com/flipflop-dev/flipflop/internal/graph"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// CSP is the page's Content-Security-Policy: nothing is loaded and no script
// runs; inline styles (the page's own) and data: images only.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

// MaxEstateNodes is the largest estate drawn whole at the top of the page;
// the findings' pictures are drawn whatever the estate's size.
const MaxEstateNodes = 300

// Page is what the report shows.
type Page struct {
	// Digest is the check's report with each finding's picture, why and
	// ways out (digest.Build).
	Digest *digest.Digest
	// Timelines are explain's replays of the contradictions (explain.Build).
	Timelines []explain.Timeline
	// Plan holds the fix previews; nil leaves them out (Digest.NoFix says why).
	Plan *fix.Plan
	// Rules are the bundle's rules; Version is flipflop's; Paths are what
	// was checked, as given.
	Rules   []evaluator.Rule
	Version string
	Paths   []string
}

// Write renders p as an HTML page to w.
func Write(w io.Writer, p Page) error {
	v, err := view(p)
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := page.Execute(&b, v); err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}

type pageView struct {
	CSP, Headline, Summary, Kargo, Version string
	Paths                                  []string
	Counts                                 []countView
	Estate                                 template.HTML
	EstateNodes                            int
	Findings                               []findingView
	Previews                               []previewView
	NoFix                                  string
	Errors                                 []string
}

type countView struct {
	Severity, Rule, Title, DocURL string
	Count                         int
}

type findingView struct {
	ID                                                   string
	Severity, Rule, Title, DocURL, Pointer, Why, Message string
	Waived                                               string
	Objects                                              []objectView
	Picture                                              template.HTML
	PictureNodes                                         int
	Ways                                                 []digest.Way
	Recommended                                          fix.Way
	Remediation                                          []block
	Timeline                                             string
}

// block is a paragraph of rule text, or a numbered list.
type block struct {
	Text  string
	Items []string
}

type objectView struct{ Kind, Name, Where, Note string }

type previewView struct {
	Way, TradeOff string
	Notes, Skip   []string
	Lines         []diffLine
}

type diffLine struct{ Class, Text string }

var ruleID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func docURL(id string) string {
	if !ruleID.MatchString(id) {
		return ""
	}
	return fmt.Sprintf(docs.PageURL, id)
}

func view(p Page) (*pageView, error) {
	d := p.Digest
	r := d.Report
	s := r.Summary
	v := &pageView{CSP: CSP, Version: safetext.Visible(p.Version), NoFix: safetext.Visible(d.NoFix)}
	v.Headline = fmt.Sprintf("%s, %s, %s", plural(s.Error, "error"), plural(s.Warning, "warning"), plural(s.Info, "info"))
	v.Summary = fmt.Sprintf("%s checked", plural(s.Objects, "object"))
	if s.Skipped > 0 {
		v.Summary += fmt.Sprintf(" (%d more skipped: no rule reads their kind)", s.Skipped)
	}
	if s.Waived > 0 {
		v.Summary += fmt.Sprintf("; %d waived", s.Waived)
	}
	if n := len(r.Errors); n > 0 {
		v.Summary += "; " + plural(n, "input error")
	}
	if k := r.Kargo; k != nil && k.Version != "" {
		v.Kargo = "Kargo " + safetext.Visible(k.Version)
		if k.Assumed {
			v.Kargo += " assumed, the newest release flipflop models"
		}
	}
	for _, path := range p.Paths {
		v.Paths = append(v.Paths, safetext.Visible(path))
	}
	counts := map[[3]string]int{}
	for _, f := range r.Findings {
		if f.Waived != nil {
			continue
		}
		k := [3]string{f.Severity, f.Rule, f.Title}
		if counts[k] == 0 {
			v.Counts = append(v.Counts, countView{Severity: f.Severity, Rule: safetext.Visible(f.Rule), Title: safetext.Visible(f.Title), DocURL: docURL(f.Rule)})
		}
		counts[k]++
	}
	for i := range v.Counts {
		c := &v.Counts[i]
		c.Count = counts[[3]string{c.Severity, c.Rule, c.Title}]
	}
	if d.Estate != nil {
		v.EstateNodes = len(d.Estate.Nodes)
		if v.EstateNodes > 0 && v.EstateNodes <= MaxEstateNodes {
			v.Estate = trusted(graph.SVG(d.Estate, "estate"))
		}
	}
	timeline := map[string]string{}
	for i := range p.Timelines {
		t := &p.Timelines[i]
		if _, ok := timeline[t.Pointer.Key]; !ok {
			timeline[t.Pointer.Key] = t.Text()
		}
	}
	for i, it := range d.Items {
		f := it.Finding
		fv := findingView{
			ID: fmt.Sprintf("finding-%d", i+1), Severity: f.Severity, Rule: safetext.Visible(f.Rule), Title: safetext.Visible(f.Title),
			DocURL: docURL(f.Rule), Pointer: safetext.Visible(f.PointerText), Why: safetext.Visible(it.Why),
			Message: safetext.Visible(f.Message), Remediation: prose(f.Remediation), Ways: it.Ways,
			PictureNodes: it.PictureNodes,
		}
		if f.Waived != nil {
			fv.Waived = safetext.Visible(f.Waived.Reason + "; by " + f.Waived.By)
		}
		if rec := it.Recommended(); rec != nil {
			fv.Recommended = rec.Way
		}
		for j := range fv.Ways {
			w := &fv.Ways[j]
			w.Reason, w.Command = safetext.Visible(w.Reason), safetext.Visible(w.Command)
		}
		for _, res := range f.Resources {
			o := objectView{Kind: safetext.Visible(res.Kind), Name: safetext.Visible(qualified(res)), Where: safetext.Visible(location(res))}
			var notes []string
			if res.GeneratedBy != "" {
				notes = append(notes, "generated by "+res.GeneratedBy)
			}
			if res.RenderedBy != "" {
				notes = append(notes, "rendered by "+res.RenderedBy)
			}
			o.Note = safetext.Visible(strings.Join(notes, ", "))
			fv.Objects = append(fv.Objects, o)
		}
		if it.Picture != nil {
			fv.Picture = trusted(graph.SVG(it.Picture, fv.ID))
		}
		if t, ok := timeline[f.Pointer]; ok && f.Pointer != "" {
			fv.Timeline = t
			delete(timeline, f.Pointer) // once, under the first finding about the pointer
		}
		v.Findings = append(v.Findings, fv)
	}
	if p.Plan != nil && len(p.Plan.Proposals) > 0 {
		for _, w := range fix.Ways() {
			patch, err := p.Plan.Patch(w)
			if err != nil {
				return nil, err
			}
			if patch.Empty() {
				continue
			}
			pv := previewView{Way: string(w), TradeOff: w.TradeOff()}
			for _, n := range patch.Notes {
				pv.Notes = append(pv.Notes, safetext.Visible(n))
			}
			for _, sk := range patch.Skipped {
				pv.Skip = append(pv.Skip, safetext.Visible(sk))
			}
			for _, l := range strings.SplitAfter(patch.Diff(), "\n") {
				if l == "" {
					continue
				}
				class := ""
				switch {
				case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff "):
					class = "file"
				case strings.HasPrefix(l, "@@"):
					class = "hunk"
				case strings.HasPrefix(l, "+"):
					class = "add"
				case strings.HasPrefix(l, "-"):
					class = "del"
				}
				pv.Lines = append(pv.Lines, diffLine{class, safetext.Visible(strings.TrimSuffix(l, "\n"))})
			}
			v.Previews = append(v.Previews, pv)
		}
	}
	for _, e := range r.Errors {
		v.Errors = append(v.Errors, safetext.Visible(e.Error()))
	}
	return v, nil
}

// numbered is a line that starts an item of a numbered list.
var numbered = regexp.MustCompile(`^[0-9]+[.)][ \t]+`)

// prose reads a rule's remediation as its METADATA writes it (paragraphs
// apart by a blank line, lines wrapped at about 80 columns, numbered lists
// whose items go on on indented lines) and returns its paragraphs and lists
// with the lines of each joined, escaped for display (safetext.Visible): the
// page wraps them to its width, and a line break is a break, not a "\n".
func prose(s string) []block {
	var out []block
	open := false // the last block takes more lines
	for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		text := strings.TrimSpace(line)
		switch {
		case text == "":
			open = false
		case numbered.MatchString(text):
			if !open || out[len(out)-1].Items == nil {
				out = append(out, block{})
			}
			b := &out[len(out)-1]
			b.Items = append(b.Items, numbered.ReplaceAllString(text, ""))
			open = true
		case open && (out[len(out)-1].Items == nil || line != strings.TrimLeft(line, " \t")):
			// A paragraph's next line, or an item's indented one.
			b := &out[len(out)-1]
			if n := len(b.Items); n > 0 {
				b.Items[n-1] += " " + text
			} else {
				b.Text += " " + text
			}
		default:
			out = append(out, block{Text: text})
			open = true
		}
	}
	for i := range out {
		out[i].Text = safetext.Visible(out[i].Text)
		for j := range out[i].Items {
			out[i].Items[j] = safetext.Visible(out[i].Items[j])
		}
	}
	return out
}

// trusted marks an SVG picture of graph.SVG as HTML to insert as is: SVG
// escapes every label itself (XML character data and attribute values), and
// its tests hold it to that with hostile labels.
func trusted(svg string) template.HTML {
	return template.HTML(svg)
}

func qualified(r evaluator.Resource) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

func location(r evaluator.Resource) string {
	switch {
	case r.File == "":
		return ""
	case r.Line > 0:
		return fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	return r.File
}

func plural(n int, word string) string {
	if n == 1 || word == "info" {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

var page = template.Must(template.New("page").Parse(pageTemplate))

const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>flipflop report: {{.Headline}}</title>
<style>
body { font: 14px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif; color: #24292f; margin: 0 auto; max-width: 1100px; padding: 16px 24px; }
h1 { font-size: 24px; margin: 8px 0; } h2 { font-size: 20px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 16px; margin: 0 0 8px; } h4 { font-size: 14px; margin: 16px 0 4px; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 12px; overflow-x: auto; white-space: pre; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.finding { border: 1px solid #d0d7de; border-left: 6px solid #9a6700; border-radius: 6px; padding: 12px 16px; margin: 16px 0; }
.finding.error { border-left-color: #d1242f; } .finding.info { border-left-color: #0969da; }
.sev { display: inline-block; border-radius: 10px; padding: 0 8px; color: #fff; background: #9a6700; font-size: 12px; text-transform: uppercase; }
.sev.error { background: #d1242f; } .sev.info { background: #0969da; }
figure.picture { margin: 8px 0; } figure.picture svg { display: block; max-width: 100%; height: auto; }
.finding { overflow-wrap: break-word; } .finding pre { white-space: pre-wrap; } .finding td code { overflow-wrap: anywhere; }
figcaption { color: #57606a; font-size: 12px; }
.way.no { color: #57606a; } .recommended { font-weight: bold; }
.diff .add { color: #116329; background: #dafbe1; } .diff .del { color: #82071e; background: #ffebe9; }
.diff .hunk { color: #0550ae; } .diff .file { font-weight: bold; }
.muted { color: #57606a; }
</style>
</head>
<body>
<header>
<h1>flipflop report</h1>
<p><strong>{{.Headline}}</strong> · {{.Summary}}{{if .Kargo}} · {{.Kargo}}{{end}}</p>
{{if .Paths}}<p class="muted">Checked: {{range $i, $p := .Paths}}{{if $i}}, {{end}}<code>{{$p}}</code>{{end}}</p>{{end}}
</header>
<main>
<section id="summary">
<h2>Findings by severity and rule</h2>
{{if .Counts}}<table>
<thead><tr><th>severity</th><th>rule</th><th>findings</th></tr></thead>
<tbody>
{{range .Counts}}<tr><td>{{.Severity}}</td><td>{{if .DocURL}}<a href="{{.DocURL}}"><code>{{.Rule}}</code></a>{{else}}<code>{{.Rule}}</code>{{end}}: {{.Title}}</td><td>{{.Count}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p>No finding.</p>{{end}}
</section>
{{if .Estate}}<section id="estate">
<h2>The estate</h2>
<figure class="picture" id="estate-picture">
{{.Estate}}
<figcaption>Kargo Stages in promotion order (upstream first), the Argo CD Applications they pin (edges say what the pin expects), what each Application tracks, and the branches the Stages push to (dashed, each labelled with its Stage). What an error is about is red. The same picture as <code>flipflop graph</code>.</figcaption>
</figure>
</section>{{else if .EstateNodes}}<section id="estate"><h2>The estate</h2><p>{{.EstateNodes}} Stages, Applications and branches: too many to draw on one page; <code>flipflop graph -o svg</code> draws them.</p></section>{{end}}
{{if .Findings}}<section id="findings">
<h2>Findings</h2>
{{range .Findings}}<article class="finding {{.Severity}}" id="{{.ID}}">
<h3><span class="sev {{.Severity}}">{{.Severity}}</span> {{if .DocURL}}<a href="{{.DocURL}}"><code>{{.Rule}}</code></a>{{else}}<code>{{.Rule}}</code>{{end}}: {{.Title}}</h3>
{{if .Waived}}<p class="muted">Waived: {{.Waived}}</p>{{end}}
{{if .Pointer}}<p>On <code>{{.Pointer}}</code></p>{{end}}
{{if .Objects}}<table class="objects">
<thead><tr><th>kind</th><th>name</th><th>where</th></tr></thead>
<tbody>
{{range .Objects}}<tr><td>{{.Kind}}</td><td><code>{{.Name}}</code>{{if .Note}} <span class="muted">({{.Note}})</span>{{end}}</td><td><code>{{.Where}}</code></td></tr>
{{end}}</tbody>
</table>{{end}}
{{if .Picture}}<figure class="picture">
{{.Picture}}
<figcaption>The objects this finding is about, as <code>flipflop graph</code> draws them.</figcaption>
</figure>{{else if .PictureNodes}}<p class="muted">No picture: {{.PictureNodes}} objects are involved; <code>flipflop graph</code> draws them.</p>{{end}}
<h4>Why</h4>
<p class="why">{{.Why}}</p>
{{if ne .Why .Message}}<details><summary>The whole message</summary><p>{{.Message}}</p></details>{{end}}
{{if .Ways}}<h4>Ways out</h4>
<ol class="ways">
{{$rec := .Recommended}}{{range .Ways}}{{if .Applicable}}<li class="way{{if eq .Way $rec}} recommended{{end}}"><code>{{.Way}}</code>: {{.TradeOff}}{{if .Partial}} (partly: the preview says what is left to do by hand){{end}}{{if .Command}}<pre>{{.Command}}</pre>{{end}}</li>
{{else}}<li class="way no"><code>{{.Way}}</code> does not apply: {{.Reason}}</li>
{{end}}{{end}}</ol>
{{else if .Remediation}}<h4>Ways out</h4>
<div class="remediation">{{range .Remediation}}{{if .Items}}<ol>{{range .Items}}<li>{{.}}</li>{{end}}</ol>{{else}}<p>{{.Text}}</p>{{end}}
{{end}}</div>
{{end}}
{{if .Timeline}}<h4>Promotion timeline</h4>
<pre class="timeline">{{.Timeline}}</pre>
{{end}}
</article>
{{end}}</section>{{end}}
{{if .Previews}}<section id="previews">
<h2>Fix previews</h2>
<p>Each way as a patch to the files that were read; <code>flipflop fix --way WAY --apply PATH...</code> writes it.</p>
{{range .Previews}}<h3><code>{{.Way}}</code></h3>
<p>{{.TradeOff}}</p>
{{range .Notes}}<p class="muted">Note: {{.}}</p>
{{end}}{{range .Skip}}<p class="muted">Does not apply to {{.}}</p>
{{end}}<pre class="diff">{{range .Lines}}<span{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</span>
{{end}}</pre>
{{end}}</section>{{else if .NoFix}}<section id="previews"><h2>Fix previews</h2><p>None: {{.NoFix}}.</p></section>{{end}}
{{if .Errors}}<section id="errors">
<h2>Input errors</h2>
<p>These files or documents were not checked:</p>
<ul>{{range .Errors}}<li><code>{{.}}</code></li>{{end}}</ul>
</section>{{end}}
</main>
<footer><p class="muted">flipflop {{.Version}}</p></footer>
</body>
</html>
`
