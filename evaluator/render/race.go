//go:build race

package render

// raceEnabled is set in binaries built with the race detector.
const raceEnabled = true
