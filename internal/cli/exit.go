package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// Exit codes: flipflop's documented contract.
const (
	// ExitOK: no finding at or above --fail-on, and every input was read.
	ExitOK = 0
	// ExitFindings: findings at or above --fail-on.
	ExitFindings = 1
	// ExitIncomplete: a usage error, or some input could not be read (findings
	// from the inputs that were read are still printed).
	ExitIncomplete = 2
)

// ErrFindings reports findings at or above the --fail-on threshold; the report
// has already been printed.
var ErrFindings = errors.New("findings at or above the failure threshold")

// UsageError is a mistake in the command line. ExitCode prints Msg (escaped:
// it may quote what the user typed), then where to read the usage.
type UsageError struct {
	Msg string
	// Help is the command line that prints the help of the command that
	// failed ("flipflop check --help"); Run sets it. Empty: the top-level help.
	Help string
}

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

// IncompleteError reports that some input could not be read; the report of what
// was read has already been printed.
type IncompleteError struct{ Count int }

func (e *IncompleteError) Error() string {
	return nounCount(e.Count, "input error") + ": the result covers only what could be read"
}

// ExitCode maps an error from Run to the process exit code, printing what the
// user needs to know to w.
func ExitCode(err error, w io.Writer) int {
	var usage *UsageError
	var incomplete *IncompleteError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrFindings):
		return ExitFindings
	case errors.As(err, &usage):
		help := usage.Help
		if help == "" {
			help = programName() + " --help"
		}
		fmt.Fprintf(w, "flipflop: %s\nRun '%s' for usage.\n", safetext.Text(usage.Msg), safetext.Text(help))
		return ExitIncomplete
	case errors.As(err, &incomplete):
		fmt.Fprintf(w, "flipflop: %s\n", incomplete)
		return ExitIncomplete
	default:
		fmt.Fprintf(w, "flipflop: %s\n", safetext.Text(err.Error()))
		return ExitIncomplete
	}
}
