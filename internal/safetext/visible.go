package safetext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible returns s with its control and format characters and the bytes that
// are not UTF-8 escaped as Text escapes them, and nothing else: for text that
// no terminal and no CI runner reads (a page rendered by html/template), where
// a log command marker means nothing and a diff's "--- a/file" must read as
// written, but a bidirectional override must still not reorder what is shown.
func Visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if b.Len() == 0 && i > 0 {
				b.WriteString(s[:i])
			}
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case isControl(r):
			if b.Len() == 0 && i > 0 {
				b.WriteString(s[:i])
			}
			writeEscape(&b, r)
		default:
			if b.Len() > 0 {
				b.WriteString(s[i : i+size])
			}
		}
		i += size
	}
	if b.Len() == 0 {
		return s
	}
	return b.String()
}
