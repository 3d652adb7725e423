// Package suggest finds the words a mistyped one was probably meant to be:
// the "did you mean" of unknown keys, rule ids and commands.
package suggest

import (
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// maxWord bounds the words compared: a longer one (input may be hostile)
// suggests nothing rather than cost its length squared.
const maxWord = 128

// Nearest returns the candidates closest to word, best first: those within an
// edit distance of a third of the longer word (at least 2), and those word is
// a prefix or a part of (explain shared-branch → shared-branch-contradiction).
// Case is ignored. At most limit are returned (limit <= 0: all).
func Nearest(word string, candidates []string, limit int) []string {
	if word == "" || len(word) > maxWord {
		return nil
	}
	w := strings.ToLower(word)
	type scored struct {
		c     string
		score int
	}
	var found []scored
	for _, c := range candidates {
		if len(c) > maxWord {
			continue
		}
		lc := strings.ToLower(c)
		if lc == w {
			continue
		}
		d := levenshtein.ComputeDistance(w, lc)
		limitDist := max(2, max(len(w), len(lc))/3)
		switch {
		case len(w) >= 3 && strings.HasPrefix(lc, w):
			// The start of the name: first.
			found = append(found, scored{c, -1})
		case d <= limitDist:
			found = append(found, scored{c, d})
		case len(w) >= 3 && strings.Contains(lc, w):
			// A part of the name: ranked after the close misspellings.
			found = append(found, scored{c, limitDist + 1 + len(lc) - len(w)})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int {
		if a.score != b.score {
			return a.score - b.score
		}
		return strings.Compare(a.c, b.c)
	})
	var out []string
	for _, f := range found {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, f.c)
	}
	return out
}

// DidYouMean is `; did you mean "x"?` (or `"x" or "y"`) for the nearest
// candidates, or "" when none is near.
func DidYouMean(word string, candidates []string) string {
	n := Nearest(word, candidates, 3)
	if len(n) == 0 {
		return ""
	}
	quoted := make([]string, len(n))
	for i, c := range n {
		quoted[i] = `"` + c + `"`
	}
	if len(quoted) == 1 {
		return "; did you mean " + quoted[0] + "?"
	}
	return "; did you mean " + strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1] + "?"
}
