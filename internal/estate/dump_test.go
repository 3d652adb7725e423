package estate

import (
	"os"
	"strconv"
	"testing"
)

// TestDump writes a generated estate to $ESTATE_DIR (for profiling by hand);
// $ESTATE_OBJECTS sets its size (default 2000).
func TestDump(t *testing.T) {
	dir := os.Getenv("ESTATE_DIR")
	if dir == "" {
		t.Skip("ESTATE_DIR not set")
	}
	n := 2000
	if s := os.Getenv("ESTATE_OBJECTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("ESTATE_OBJECTS: %v", err)
		}
	}
	files, st := Generate(Options{Objects: n, Seed: 1})
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %+v", len(files), st)
}

// TestDumpShape writes the estate shape $ESTATE_SHAPE at size $ESTATE_N to
// $ESTATE_DIR (for profiling by hand).
func TestDumpShape(t *testing.T) {
	dir, name := os.Getenv("ESTATE_DIR"), os.Getenv("ESTATE_SHAPE")
	if dir == "" || name == "" {
		t.Skip("ESTATE_DIR or ESTATE_SHAPE not set")
	}
	n, err := strconv.Atoi(os.Getenv("ESTATE_N"))
	if err != nil {
		t.Fatalf("ESTATE_N: %v", err)
	}
	files, err := Shape(name, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
}
