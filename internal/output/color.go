package output

import (
	"io"
	"os"

	"golang.org/x/term"
)

// ANSI SGR codes used by the text format.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrRed    = "1;31"
	sgrYellow = "1;33"
	sgrCyan   = "1;36"
)

// palette paints strings with ANSI escapes when on, and leaves them alone
// otherwise.
type palette struct{ on bool }

func (p palette) paint(sgr, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

func (p palette) bold(s string) string { return p.paint(sgrBold, s) }
func (p palette) dim(s string) string  { return p.paint(sgrDim, s) }

// severity paints a severity label: errors red, warnings yellow, info cyan.
func (p palette) severity(sev, label string) string {
	switch sev {
	case "error":
		return p.paint(sgrRed, label)
	case "warning":
		return p.paint(sgrYellow, label)
	default:
		return p.paint(sgrCyan, label)
	}
}

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// useColor decides colour from the mode and, for ColorAuto, the writer and
// the environment: a terminal, NO_COLOR unset or empty (https://no-color.org)
// and TERM other than "dumb". --color always wins over NO_COLOR.
func useColor(w io.Writer, mode string) bool {
	switch mode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}
