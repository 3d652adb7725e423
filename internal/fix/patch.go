package fix

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Patch is the change one way makes to the input files, over every finding it
// applies to.
type Patch struct {
	Way Way
	// Files lists the files that change, sorted by path.
	Files []FileChange
	// Notes are what the user must know before applying the patch.
	Notes []string
	// Skipped lists the findings the way does not apply to, with why.
	Skipped []string
}

// FileChange is one changed file.
type FileChange struct {
	// Path is the file as the inputs name it; Name is the path in the diff
	// (relative to Options.Dir, slash-separated).
	Path, Name string
	Old, New   []byte

	src   *source
	edits []textEdit // sorted, in src.text offsets
}

// patchSet gathers the edits of one way, file by file.
type patchSet struct {
	files map[*source]*edits
	order []*source
	strip map[*yaml.Node]*stripReq // no-desired-revision requests by sources sequence
}

// stripReq asks for desiredRevision to go from some entries of one sources
// sequence; they are resolved together (an emptied sequence goes as a whole).
type stripReq struct {
	src      *source
	appEntry *yaml.Node
	sources  *yaml.Node
	entries  []*yaml.Node
}

func (p *patchSet) at(s *source) *edits {
	if e, ok := p.files[s]; ok {
		return e
	}
	e := &edits{src: s}
	p.files[s] = e
	p.order = append(p.order, s)
	return e
}

// Patch combines the changes of way w over every finding it applies to.
func (plan *Plan) Patch(w Way) (*Patch, error) {
	ps := &patchSet{files: map[*source]*edits{}, strip: map[*yaml.Node]*stripReq{}}
	out := &Patch{Way: w}
	done := map[string]bool{}
	for _, prop := range plan.Proposals {
		o := prop.Option(w)
		if o == nil || !o.Applicable {
			reason := "not applicable"
			if o != nil {
				reason = o.Reason
			}
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s %s: %s", prop.Finding.Rule, prop.Finding.Key, reason))
			continue
		}
		for _, x := range o.ops {
			if done[x.key] {
				continue
			}
			done[x.key] = true
			if err := x.run(ps); err != nil {
				return nil, err
			}
		}
		for _, n := range o.Notes {
			if !slices.Contains(out.Notes, n) {
				out.Notes = append(out.Notes, n)
			}
		}
	}
	if err := ps.resolveStrips(); err != nil {
		return nil, err
	}
	for _, s := range ps.order {
		l, err := ps.files[s].sorted()
		if err != nil {
			return nil, err
		}
		newText := apply(s.text, l)
		if string(newText) == string(s.text) {
			continue
		}
		fc := FileChange{Path: s.path, Name: diffName(plan.dir, s.path), Old: s.text, New: newText, src: s, edits: l}
		if outside(fc.Name) {
			out.Notes = append(out.Notes, fmt.Sprintf("%s lies outside %s, where the diff's paths start: git apply run there will not reach it.", s.path, plan.dir))
		}
		if s.bom {
			fc.Old = append(slices.Clone(bomBytes), s.text...)
			fc.New = append(slices.Clone(bomBytes), newText...)
		}
		out.Files = append(out.Files, fc)
	}
	slices.SortFunc(out.Files, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Empty reports whether the patch changes nothing.
func (p *Patch) Empty() bool { return len(p.Files) == 0 }

// Diff renders the patch as a git-style unified diff of every changed file,
// for git apply (or patch -p1) run from Options.Dir.
func (p *Patch) Diff() string {
	var b strings.Builder
	for _, f := range p.Files {
		l := f.edits
		if f.src.bom {
			l = make([]textEdit, len(f.edits))
			for i, x := range f.edits {
				x.start += len(bomBytes)
				x.end += len(bomBytes)
				l[i] = x
			}
		}
		b.WriteString(unifiedDiff(f.Name, string(f.Old), l))
	}
	return b.String()
}

// YAML renders the patched documents: each document that changes, as it reads
// after the patch, headed by a comment naming its file and line.
func (p *Patch) YAML() string {
	var b strings.Builder
	first := true
	for _, f := range p.Files {
		byDoc := map[*document][]textEdit{}
		var docs []*document
		for _, x := range f.edits {
			d := f.src.docFor(x)
			if d == nil {
				continue
			}
			if _, ok := byDoc[d]; !ok {
				docs = append(docs, d)
			}
			byDoc[d] = append(byDoc[d], textEdit{start: x.start - d.start, end: x.end - d.start, text: x.text})
		}
		for _, d := range docs {
			text := string(apply(f.src.text[d.start:d.end], byDoc[d]))
			if first {
				first = false
			} else {
				b.WriteString("---\n")
			}
			line := d.line
			if d.root != nil {
				line = firstKeyLine(d.root) // where check reports the object
			}
			fmt.Fprintf(&b, "# %s (document at line %d)\n", gitQuote(f.Name), line)
			lines := splitLines(text)
			if len(lines) > 0 && isMarker(strings.TrimRight(lines[0], "\r\n"), "---") {
				lines = lines[1:]
			}
			text = strings.Join(lines, "")
			b.WriteString(text)
			if !strings.HasSuffix(text, "\n") {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// docFor returns the document an edit belongs to: the one holding its start,
// or for an insertion at a document boundary, the document it ends.
func (s *source) docFor(x textEdit) *document {
	for _, d := range s.docs {
		if x.start == x.end && x.start > d.start && x.start <= d.end {
			return d
		}
		if x.start >= d.start && x.start < d.end {
			return d
		}
	}
	if len(s.docs) > 0 {
		return s.docs[0]
	}
	return nil
}

// stripEntry asks for desiredRevision to go from the sources[] entry of l.
func (p *patchSet) stripEntry(l *pinLoc) {
	req := p.strip[l.sources]
	if req == nil {
		req = &stripReq{src: l.step.scope.src, appEntry: l.appEntry, sources: l.sources}
		p.strip[l.sources] = req
	}
	if !slices.Contains(req.entries, l.entry) {
		req.entries = append(req.entries, l.entry)
	}
}

// pinKeys are the keys of a sources[] entry that go with its desired
// revision: updateTargetRevision needs one (Kargo's argocd-update schema
// requires desiredRevision when it is true), so it goes too.
var pinKeys = []string{"desiredRevision", "desiredCommitFromStep", "updateTargetRevision"}

// emptyWithout reports whether a sources[] entry asks for nothing once its
// desired revision is gone (only repoURL and chart remain): such entries are
// removed whole.
func emptyWithout(e *yaml.Node) bool {
	for i := 0; i+1 < len(e.Content); i += 2 {
		if k := e.Content[i].Value; k != "repoURL" && k != "chart" && !slices.Contains(pinKeys, k) {
			return false
		}
	}
	return true
}

// resolveStrips turns the no-desired-revision requests into edits: entries
// that ask for nothing else go, a sources list that empties goes as a whole,
// and other entries lose their desiredRevision (or desiredCommitFromStep) and
// the updateTargetRevision that needs it.
func (p *patchSet) resolveStrips() error {
	var reqs []*stripReq
	for _, r := range p.strip {
		reqs = append(reqs, r)
	}
	slices.SortFunc(reqs, func(a, b *stripReq) int {
		return strings.Compare(fmt.Sprintf("%s:%09d", a.src.path, a.sources.Line), fmt.Sprintf("%s:%09d", b.src.path, b.sources.Line))
	})
	for _, r := range reqs {
		e := p.at(r.src)
		var whole []int
		for i, it := range r.sources.Content {
			if slices.Contains(r.entries, it) && emptyWithout(it) {
				whole = append(whole, i)
			}
		}
		if len(whole) == len(r.sources.Content) && len(r.appEntry.Content) > 2 {
			if err := e.deleteEntry(r.appEntry, "sources"); err != nil {
				return err
			}
			continue
		}
		for i, it := range r.sources.Content {
			if !slices.Contains(r.entries, it) {
				continue
			}
			if slices.Contains(whole, i) && len(whole) < len(r.sources.Content) {
				if err := e.deleteItem(r.sources, i); err != nil {
					return err
				}
				continue
			}
			for _, k := range pinKeys {
				if lookup(it, k) != nil {
					if err := e.deleteEntry(it, k); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
