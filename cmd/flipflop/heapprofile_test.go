package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// With FLIPFLOP_HEAPPROFILE set, the process leaves a heap profile there: a
// gzipped protocol buffer, as go tool pprof reads it.
func TestHeapProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pb.gz")
	t.Setenv(heapProfileEnv, path)
	stop := startHeapProfile()
	keep := make([][]byte, 0, 64)
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	runtime.GC()
	stop()
	runtime.KeepAlive(keep)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no profile written: %v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not gzipped: %v", err)
	}
	b, err := io.ReadAll(z)
	if err != nil || len(b) == 0 {
		t.Fatalf("the profile is empty or cut: %d bytes, %v", len(b), err)
	}
	if !bytes.Contains(b, []byte("inuse_space")) {
		t.Error("the profile holds no inuse_space samples: not a heap profile")
	}

}
