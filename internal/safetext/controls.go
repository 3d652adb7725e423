package safetext

import (
	"fmt"
	"strings"
)

// Controls returns s with its control characters (C0, DEL, C1) and the
// Unicode controls that reorder or hide text (bidirectional marks, embeddings,
// overrides and isolates, U+FEFF) escaped, and each tab made a space: what
// flipflop's renderer does to the file names and messages it reports, which
// come from the charts and kustomizations it renders. Unlike Text, it leaves
// log command markers alone: the renderers of each output escape those.
func Controls(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteRune(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfeff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
