// Package digest gathers, per finding, what a reviewer reads first where CI
// and tickets show flipflop's results (the Markdown summary, the HTML report):
// the picture of the objects involved (the finding's part of the graph
// `flipflop graph` draws, from the same model), the "why" in two sentences,
// and the ways out with the `flipflop fix --way ...` command that previews
// each. It computes; the renderers (internal/output, internal/report) escape.
package digest

import (
	"strings"
	"unicode/utf8"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/fix"
	"github.com/flipflop-dev/flipflop/internal/graph"
)

// Bounds on what one finding's digest holds, so that a summary stays small
// whatever the input: a picture of more nodes is left out (and counted), and
// labels and the why are cut.
const (
	// MaxPictureNodes is the largest picture drawn for one finding.
	MaxPictureNodes = 40
	// MaxLabel is the longest node or edge label drawn, in runes.
	MaxLabel = 80
	// MaxWhy is the longest why, in runes.
	MaxWhy = 700
)

// Input is what a digest is built from. Report is required; without Model
// there are no pictures, and without Plan no ways out.
type Input struct {
	Report *evaluator.Report
	Model  *evaluator.Model
	// Plan holds the ways out of the findings fix handles (fix.New over the
	// same objects); nil when they cannot be previewed (NoFix says why).
	Plan  *fix.Plan
	NoFix string
	// Command returns the command line that previews a way; nil leaves the
	// commands out.
	Command func(fix.Way) string
}

// Digest is the report with, per finding, its picture, why and ways out.
type Digest struct {
	Report *evaluator.Report
	// Estate is the whole graph (nil without a model).
	Estate *graph.Graph
	// Items are the findings, in report order.
	Items []Item
	// NoFix says why no way out is previewed ("" when a plan was given).
	NoFix string
}

// Item is one finding as a reviewer reads it.
type Item struct {
	Finding evaluator.Finding
	// Why is the finding's message cut to its first two sentences.
	Why string
	// Picture is the finding's part of the estate's graph, labels cut to
	// MaxLabel; nil when the finding is about no Stage, Application or
	// pointer, or when its picture would pass MaxPictureNodes (PictureNodes
	// then says how many it has).
	Picture      *graph.Graph
	PictureNodes int
	// Ways are the ways out fix knows for this finding, in the order fix
	// offers them (the first applicable is the recommended one); empty for a
	// finding fix does not handle.
	Ways []Way
}

// Way is one way out of one finding.
type Way struct {
	Way        fix.Way
	TradeOff   string
	Applicable bool
	// Partial: the preview covers part of the change; Reason: why the way
	// does not apply.
	Partial bool
	Reason  string
	// Command previews the way ("" when Input.Command was nil).
	Command string
}

// Recommended returns the first way that applies, or nil.
func (it *Item) Recommended() *Way {
	for i := range it.Ways {
		if it.Ways[i].Applicable {
			return &it.Ways[i]
		}
	}
	return nil
}

// Build digests in.Report.
func Build(in Input) *Digest {
	d := &Digest{Report: in.Report, NoFix: in.NoFix}
	var parts *graph.Parts
	if in.Model != nil {
		d.Estate = graph.Build(in.Model, in.Report)
		parts = graph.NewParts(d.Estate)
	}
	proposals := map[string]*fix.Proposal{}
	if in.Plan != nil {
		for i := range in.Plan.Proposals {
			p := &in.Plan.Proposals[i]
			proposals[findingID(p.Finding)] = p
		}
	}
	for _, f := range in.Report.Findings {
		it := Item{Finding: f, Why: Sentences(f.Message, 2, MaxWhy)}
		if parts != nil {
			if pic := parts.Of(in.Model, f); len(pic.Nodes) > MaxPictureNodes {
				it.PictureNodes = len(pic.Nodes)
			} else if len(pic.Nodes) > 0 {
				it.Picture, it.PictureNodes = shorten(pic), len(pic.Nodes)
			}
		}
		if p := proposals[findingID(f)]; p != nil {
			for _, o := range p.Options {
				w := Way{Way: o.Way, TradeOff: o.Way.TradeOff(), Applicable: o.Applicable, Partial: o.Partial, Reason: o.Reason}
				if in.Command != nil && o.Applicable {
					w.Command = in.Command(o.Way)
				}
				it.Ways = append(it.Ways, w)
			}
		}
		d.Items = append(d.Items, it)
	}
	return d
}

// findingID tells findings apart: a rule and its key, with the objects
// involved (two findings of one rule may share a key).
func findingID(f evaluator.Finding) string {
	var b strings.Builder
	b.WriteString(f.Rule + "\x00" + f.Key)
	for _, r := range f.Resources {
		b.WriteString("\x00" + r.Kind + "/" + r.Namespace + "/" + r.Name + "@" + r.File)
	}
	return b.String()
}

// shorten returns a copy of g with its labels cut to MaxLabel runes.
func shorten(g *graph.Graph) *graph.Graph {
	out := &graph.Graph{Nodes: make([]graph.Node, len(g.Nodes)), Edges: make([]graph.Edge, len(g.Edges))}
	copy(out.Nodes, g.Nodes)
	copy(out.Edges, g.Edges)
	for i := range out.Nodes {
		out.Nodes[i].Label = Clip(out.Nodes[i].Label, MaxLabel)
	}
	for i := range out.Edges {
		out.Edges[i].Label = Clip(out.Edges[i].Label, MaxLabel)
	}
	return out
}

// Sentences returns the first n sentences of s (a sentence ends with ".",
// "!" or "?" followed by white space, but not the "1." of a numbered list), at
// most max runes of them (cut with an ellipsis).
func Sentences(s string, n, max int) string {
	s = strings.TrimSpace(s)
	end := len(s)
	word := 0 // start of the current word
	for i := 0; i+1 < len(s) && n > 0; i++ {
		switch s[i] {
		case ' ', '\n', '\t':
			word = i + 1
		case '.', '!', '?':
			if c := s[i+1]; (c == ' ' || c == '\n' || c == '\t') && !allDigits(s[word:i]) {
				n--
				if n == 0 {
					end = i + 1
				}
			}
		}
	}
	return Clip(s[:end], max)
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Clip cuts s to at most n runes, ending with "…" when cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
