package cli

import (
	"cmp"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// maxSuggestions is how many names a "did you mean" offers at most.
const maxSuggestions = 5

// nearest returns the names among candidates that typed most likely meant,
// best first: those it begins, then those it is part of (three characters or
// more), then those a few edits away (Levenshtein distance 1 for up to four
// characters, else at most a third of its length and at least 2: a swap of
// two letters is 2 edits). At most maxSuggestions.
func nearest(typed string, candidates []string) []string {
	t := strings.ToLower(typed)
	if t == "" {
		return nil
	}
	type scored struct {
		name string
		rank int // 0 prefix, 1 part, 2 edits
		dist int
	}
	limit := 1
	if len(t) >= 5 {
		limit = max(2, len(t)/3)
	}
	var found []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := levenshtein.ComputeDistance(t, lc)
		switch {
		case lc == t:
			continue
		case strings.HasPrefix(lc, t):
			found = append(found, scored{c, 0, d})
		case len(t) >= 3 && strings.Contains(lc, t):
			found = append(found, scored{c, 1, d})
		case d <= limit:
			found = append(found, scored{c, 2, d})
		}
	}
	slices.SortFunc(found, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.dist, b.dist), strings.Compare(a.name, b.name))
	})
	var out []string
	for _, s := range found[:min(len(found), maxSuggestions)] {
		out = append(out, s.name)
	}
	return out
}

// didYouMean is the hint that offers names ("" when there is none), one a
// line, as cobra and kubectl print it.
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nDid you mean this?\n")
	for _, n := range names {
		b.WriteString("    " + n + "\n")
	}
	return b.String()
}
