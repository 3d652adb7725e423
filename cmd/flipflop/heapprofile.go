package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"

	"github.com/flipflop-dev/flipflop/internal/safefile"
)

// heapProfileEnv names a file to which the process writes a heap profile
// (go tool pprof) of the largest live heap it reached: for measuring where
// the memory of a pass goes (docs/hosts.md, "Auditor"). Not a flag: it is
// for the people working on flipflop, not a feature.
const heapProfileEnv = "FLIPFLOP_HEAPPROFILE"

// startHeapProfile, when FLIPFLOP_HEAPPROFILE names a file, samples the live
// heap (as the last garbage collection measured it) every 100 ms and writes a
// heap profile to the file each time it passes its largest value so far by
// a tenth; the profile's inuse figures are those of that collection. The
// returned function writes a last profile if the heap grew since, and stops.
func startHeapProfile() (stop func()) {
	path := os.Getenv(heapProfileEnv)
	if path == "" {
		return func() {}
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	var written uint64
	write := func(n uint64) {
		// Never through a symbolic link (the path may name a file in a checkout).
		var buf bytes.Buffer
		err := pprof.Lookup("heap").WriteTo(&buf, 0)
		if err == nil {
			err = safefile.Write(path, buf.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", heapProfileEnv, err)
			return
		}
		written = n
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				if n := live(); n > written {
					write(n)
				}
				return
			case <-t.C:
				if n := live(); n > written+written/10 {
					write(n)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
