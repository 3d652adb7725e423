// Package textwrap word-wraps text for terminals.
package textwrap

import "strings"

// Wrap breaks text into lines of at most width columns, each starting with
// indent and ending with a newline; a word longer than a line stays whole.
func Wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
	return b.String()
}
