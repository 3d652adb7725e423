// Package fifotest makes named pipes for the tests that check a FIFO is
// refused without blocking (input files, --summary, every file flipflop
// writes). It calls mkfifo(3) itself, so no test depends on a mkfifo program.
package fifotest
