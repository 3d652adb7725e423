//go:build !race

package evaluator_test

// raceDetector is set when the tests run with -race.
const raceDetector = false
