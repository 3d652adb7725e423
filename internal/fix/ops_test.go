package fix

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// node follows a path of mapping keys and sequence indexes ("0", "1", ...)
// from the first document's root.
func node(t *testing.T, s *source, keys ...string) *yaml.Node {
	t.Helper()
	n := s.docs[0].root
	for _, k := range keys {
		if n.Kind == yaml.SequenceNode {
			i := int(k[0] - '0')
			n = n.Content[i]
			continue
		}
		n = lookup(n, k)
		if n == nil {
			t.Fatalf("no %s in %v", k, keys)
		}
	}
	return n
}

func TestOps(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		op             func(t *testing.T, e *edits) error
	}{
		{
			name: "replace keeps quotes and comment",
			in:   "a:\n  b: 'x'   # keep\n  c: \"y\"\n",
			want: "a:\n  b: 'env/dev'   # keep\n  c: \"z\"\n",
			op: func(t *testing.T, e *edits) error {
				if err := e.set(node(t, e.src, "a"), "b", "env/dev"); err != nil {
					return err
				}
				return e.set(node(t, e.src, "a"), "c", "z")
			},
		},
		{
			name: "replace an empty value",
			in:   "a:\n  b:\n  c: 1\n",
			want: "a:\n  b: main\n  c: 1\n",
			op:   func(t *testing.T, e *edits) error { return e.set(node(t, e.src, "a"), "b", "main") },
		},
		{
			name: "plain value that needs quotes",
			in:   "a: {b: x}\nc:\n  d: x\n",
			want: "a: {b: \"env/${{ ctx.stage }}\"}\nc:\n  d: \"yes\"\n",
			op: func(t *testing.T, e *edits) error {
				if err := e.set(node(t, e.src, "a"), "b", "env/${{ ctx.stage }}"); err != nil {
					return err
				}
				return e.set(node(t, e.src, "c"), "d", "yes")
			},
		},
		{
			name: "insert after an entry with a nested block and a literal scalar",
			in:   "m:\n  a:\n    - x\n    # between\n    - y\n  s: |\n    line one\n\n    line two\n  # trailing comment\nz: 1\n",
			want: "m:\n  a:\n    - x\n    # between\n    - y\n  s: |\n    line one\n\n    line two\n  k: v\n  # trailing comment\nz: 1\n",
			op:   func(t *testing.T, e *edits) error { return e.insertEntry(node(t, e.src, "m"), "k", "v", "s") },
		},
		{
			name: "insert after a compact sequence",
			in:   "m:\n  a:\n  - x\n  - y\n  b: 1\n",
			want: "m:\n  a:\n  - x\n  - y\n  k: v\n  b: 1\n",
			op:   func(t *testing.T, e *edits) error { return e.insertEntry(node(t, e.src, "m"), "k", "v", "a") },
		},
		{
			name: "insert at the end of a file without a final newline",
			in:   "a: 1\nb: 2",
			want: "a: 1\nb: 2\nc: \"3\"",
			op:   func(t *testing.T, e *edits) error { return e.insertEntry(e.src.docs[0].root, "c", "3") },
		},
		{
			name: "delete the first key of an item (on the dash line)",
			in:   "l:\n- desiredRevision: x   # gone\n  repoURL: r\n- other: 1\n",
			want: "l:\n- repoURL: r\n- other: 1\n",
			op:   func(t *testing.T, e *edits) error { return e.deleteEntry(node(t, e.src, "l", "0"), "desiredRevision") },
		},
		{
			name: "delete a key with a block value, keeping the comment after it",
			in:   "a:\n  x: 1\n  y:\n    z: |\n      t\n  # about w\n  w: 2\n",
			want: "a:\n  x: 1\n  # about w\n  w: 2\n",
			op:   func(t *testing.T, e *edits) error { return e.deleteEntry(node(t, e.src, "a"), "y") },
		},
		{
			name: "delete flow entries: middle and last",
			in:   "a: {x: 1, y: \"2, 3\", z: 4}\nb: {x: 1, y: 2}\n",
			want: "a: {x: 1, z: 4}\nb: {x: 1}\n",
			op: func(t *testing.T, e *edits) error {
				if err := e.deleteEntry(node(t, e.src, "a"), "y"); err != nil {
					return err
				}
				return e.deleteEntry(node(t, e.src, "b"), "y")
			},
		},
		{
			name: "delete a block item and a flow item",
			in:   "l:\n  - a: 1\n    b: 2\n  # keep\n  - c: 3\nf: [{a: '}'}, {b: 2}]\n",
			want: "l:\n  # keep\n  - c: 3\nf: [{b: 2}]\n",
			op: func(t *testing.T, e *edits) error {
				if err := e.deleteItem(node(t, e.src, "l"), 0); err != nil {
					return err
				}
				return e.deleteItem(node(t, e.src, "f"), 0)
			},
		},
		{
			name: "insert items: block at the front, flow at the end and into []",
			in:   "l:\n    -   a: 1\n        n:\n            m: 2\nf: [x]\ne: []\n",
			want: "l:\n    -   uses: git-clear\n        config:\n            path: ./out\n    -   a: 1\n        n:\n            m: 2\nf: [x, {b: true}]\ne: [\"y\"]\n",
			op: func(t *testing.T, e *edits) error {
				if err := e.insertItems(node(t, e.src, "l"), 0, obj{{"uses", "git-clear"}, {"config", obj{{"path", "./out"}}}}); err != nil {
					return err
				}
				if err := e.insertItems(node(t, e.src, "f"), 1, obj{{"b", true}}); err != nil {
					return err
				}
				return e.insertItems(node(t, e.src, "e"), 0, "y")
			},
		},
		{
			name: "JSON keeps JSON",
			in:   "{\"a\": {\"b\": \"x\"}, \"l\": []}\n",
			want: "{\"a\": {\"b\": \"x\", \"c\": \"./out\"}, \"l\": [{\"k\": true}]}\n",
			op: func(t *testing.T, e *edits) error {
				if err := e.insertEntry(node(t, e.src, "a"), "c", "./out"); err != nil {
					return err
				}
				return e.insertItems(node(t, e.src, "l"), 0, obj{{"k", true}})
			},
		},
		{
			name: "refuse to edit under an anchor",
			in:   "base: &b\n  x: 1\nuse: *b\n",
			want: "error",
			op:   func(t *testing.T, e *edits) error { return e.set(node(t, e.src, "base"), "x", "2") },
		},
		{
			name: "refuse to empty a mapping",
			in:   "a:\n  b: 1\n",
			want: "error",
			op:   func(t *testing.T, e *edits) error { return e.deleteEntry(node(t, e.src, "a"), "b") },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSource("t.yaml", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			e := &edits{src: s}
			if err := tc.op(t, e); err != nil {
				if tc.want == "error" {
					return
				}
				t.Fatal(err)
			}
			if tc.want == "error" {
				t.Fatal("no error")
			}
			l, err := e.sorted()
			if err != nil {
				t.Fatal(err)
			}
			got := string(apply(s.text, l))
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			var v any
			if err := yaml.Unmarshal([]byte(got), &v); err != nil {
				t.Errorf("the result is not YAML: %v", err)
			}
		})
	}
}

func TestOverlappingEditsAreRefused(t *testing.T) {
	s, _ := parseSource("t.yaml", []byte("a: 1\n"))
	e := &edits{src: s}
	e.add(0, 4, "b: 2")
	e.add(3, 4, "3")
	if _, err := e.sorted(); err == nil {
		t.Fatal("overlapping edits were accepted")
	}
	e = &edits{src: s}
	e.add(0, 4, "b: 2")
	e.add(0, 4, "b: 2") // the same change asked twice is made once
	if l, err := e.sorted(); err != nil || len(l) != 1 {
		t.Fatalf("%v %v", l, err)
	}
}

func TestUnifiedDiffHunks(t *testing.T) {
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, "line"+strings.Repeat("x", i%3))
	}
	old := strings.Join(lines, "\n") + "\n"
	s, _ := parseSource("f", []byte(old))
	e := &edits{src: s}
	e.add(s.lineStart(3), s.lineEnd(3), "")                // delete line 3
	e.add(s.lineStart(8), s.lineStart(8), "new\nnewer\n")  // insert before line 8: merges (gap 4 <= 6)
	e.add(s.lineStart(20)+2, s.lineStart(20)+4, "NE")      // change in line 20: its own hunk
	e.add(s.lineStart(30), s.lineEnd(30), "last\nextra\n") // the last line
	l, err := e.sorted()
	if err != nil {
		t.Fatal(err)
	}
	d := unifiedDiff("f", old, l)
	var headers []string
	for _, ln := range strings.Split(d, "\n") {
		if strings.HasPrefix(ln, "@@") {
			headers = append(headers, ln)
		}
	}
	want := []string{"@@ -1,10 +1,11 @@", "@@ -17,7 +18,7 @@", "@@ -27,4 +28,5 @@"}
	if strings.Join(headers, "|") != strings.Join(want, "|") {
		t.Errorf("hunks %q, want %q\n%s", headers, want, d)
	}
	if unifiedDiff("f", old, nil) != "" {
		t.Error("a diff without edits")
	}
}

func TestCommentsAndIndentationKept(t *testing.T) {
	plan, _ := planFor(t, repoRoot, "testdata/odd-format")
	for _, w := range Ways() {
		patch, err := plan.Patch(w)
		if err != nil {
			t.Fatal(err)
		}
		if len(patch.Files) != 1 {
			t.Fatalf("%s: %d files", w, len(patch.Files))
		}
		f := patch.Files[0]
		newText := string(f.New)
		removed := map[string]bool{}
		for _, ln := range strings.Split(patch.Diff(), "\n") {
			if strings.HasPrefix(ln, "-") && !strings.HasPrefix(ln, "---") {
				removed[ln[1:]] = true
			}
		}
		for _, ln := range strings.Split(string(f.Old), "\n") {
			i := strings.Index(ln, "#")
			if i < 0 {
				continue
			}
			comment := ln[i:]
			if strings.Contains(comment, "${{") {
				continue
			}
			// A comment survives even on a line that changed, unless the
			// whole entry it annotates was removed.
			if !strings.Contains(newText, comment) && !removed[ln] {
				t.Errorf("%s lost the comment %q", w, comment)
			}
		}
		// Added lines use the file's four-space indentation.
		for _, ln := range strings.Split(patch.Diff(), "\n") {
			if !strings.HasPrefix(ln, "+") || strings.HasPrefix(ln, "+++") {
				continue
			}
			body := strings.TrimLeft(ln[1:], " ")
			if ind := len(ln) - 1 - len(body); ind%4 != 0 {
				t.Errorf("%s: added line %q is not indented by a multiple of 4", w, ln)
			}
		}
	}
}

// The loader counts lines at CR, NEL, LS and PS as go-yaml does, and a patch
// counts LF lines: a file with such a break is not patched (an error, so no
// hunk lands on the wrong line), and CR LF still is.
func TestSourceRefusesOtherLineBreaks(t *testing.T) {
	for _, in := range []string{"# c\rkind: Stage\r", "kind: Stage\nmetadata: {name: a}\u0085", "a: 1\u2028", "a: 1\u2029b: 2\n", "a: 1\r"} {
		if _, err := parseSource("t.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), "fix does not patch such a file") {
			t.Errorf("%q: %v, want an error", in, err)
		}
	}
	if _, err := parseSource("t.yaml", []byte("a: 1\r\nb: 2\r\n")); err != nil {
		t.Errorf("CR LF: %v", err)
	}
}
