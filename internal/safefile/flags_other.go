//go:build !unix

package safefile

// Without O_NOFOLLOW and O_NONBLOCK, the checks before and after the open
// stand alone.
const (
	noFollow = 0
	nonBlock = 0
)
