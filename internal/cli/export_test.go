package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// tarNames lists the entries of a gzipped tar.
func tarNames(t *testing.T, b []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

func TestExportBundleToATarballFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"out/flipflop.tar.gz", "b.tgz"} {
		target := filepath.Join(dir, name)
		if _, errOut, code := invoke("export", "bundle", target); code != ExitOK {
			t.Fatalf("export bundle %s: exit %d: %s", name, code, errOut)
		}
		fi, err := os.Stat(target)
		if err != nil || fi.IsDir() {
			t.Fatalf("%s: want a file, got %v (err %v)", name, fi, err)
		}
		b, _ := os.ReadFile(target)
		names := strings.Join(tarNames(t, b), " ")
		if !strings.Contains(names, ".manifest") || !strings.Contains(names, "hosts/conftest/flipflop.rego") {
			t.Errorf("%s: not the bundle: %s", name, names)
		}
	}
	// A directory target still gets DIR/flipflop.tar.gz.
	if _, errOut, code := invoke("export", "bundle", filepath.Join(dir, "d")); code != ExitOK {
		t.Fatalf("export bundle DIR: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "d", "flipflop.tar.gz")); err != nil {
		t.Error(err)
	}
}

func TestExportRefusesTarballNamesForDirectories(t *testing.T) {
	race.Sequential(t)
	dir := t.TempDir()
	for _, what := range []string{"conftest", "gatekeeper", "all"} {
		target := filepath.Join(dir, what+".tar.gz")
		_, errOut, code := invoke("export", what, target)
		if code != ExitIncomplete || !strings.Contains(errOut, "names a tarball") {
			t.Errorf("export %s FILE.tar.gz: exit %d, stderr %q", what, code, errOut)
		}
		if _, err := os.Stat(target); !os.IsNotExist(err) {
			t.Errorf("export %s created %s", what, target)
		}
	}
	// An existing directory named like a tarball (what older versions made) is refused.
	old := filepath.Join(dir, "old.tar.gz")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := invoke("export", "bundle", old); code != ExitIncomplete || !strings.Contains(errOut, "is a directory") {
		t.Errorf("export bundle onto a directory: exit %d, stderr %q", code, errOut)
	}
}
