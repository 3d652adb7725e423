// Package upstream finds the published Kargo and Argo CD sources that tests
// check flipflop's fixtures and outputs against: their CRDs (the schemas a real
// API server enforces) and Kargo's promotion step config schemas.
//
// Nothing is vendored: each project is a Go module, so its released source is
// fetched from the Go module proxy (checksums verified by the Go checksum
// database) into the module cache, at the versions pinned here, and read there.
package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
)

// The releases whose schemas the tests use. Bump them together with the notes
// in README (supported versions).
const (
	KargoModule   = "github.com/akuity/kargo"
	KargoVersion  = "v1.11.2"
	ArgoCDModule  = "github.com/argoproj/argo-cd/v3"
	ArgoCDVersion = "v3.5.1"
	// The policy report CRDs: wgpolicyk8s.io/v1alpha2 as Kyverno ships them
	// (Kyverno's module holds them; the Policy Working Group's prototypes are
	// not a served module) and openreports.io/v1alpha1 from the module whose
	// Go types flipflop uses (the version go.mod requires:
	// TestOpenReportsVersionIsGoMods).
	KyvernoModule      = "github.com/kyverno/kyverno"
	KyvernoVersion     = "v1.19.0"
	OpenReportsModule  = "github.com/openreports/reports-api"
	OpenReportsVersion = "v0.2.1"
)

var (
	mu   sync.Mutex
	dirs = map[string]string{}
)

// Dir returns the directory of module@version in the Go module cache,
// downloading it through the module proxy when it is not there yet.
func Dir(module, version string) (string, error) {
	key := module + "@" + version
	mu.Lock()
	defer mu.Unlock()
	if d, ok := dirs[key]; ok {
		return d, nil
	}
	cmd := exec.Command("go", "mod", "download", "-json", key)
	// Outside any module, with no -mod flag inherited: a plain download.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GO111MODULE=on")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	var res struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Dir == "" {
		msg := res.Error
		if msg == "" {
			msg = errOut.String()
		}
		if runErr != nil && msg == "" {
			msg = runErr.Error()
		}
		return "", fmt.Errorf("go mod download %s: %s", key, msg)
	}
	dirs[key] = res.Dir
	return res.Dir, nil
}

// KargoCRDs returns the paths of Kargo's released CRD manifests.
func KargoCRDs() ([]string, error) {
	return glob(KargoModule, KargoVersion, "charts/kargo/resources/crds/*.yaml")
}

// ArgoCDCRDs returns the paths of Argo CD's released CRD manifests
// (Application, ApplicationSet, AppProject).
func ArgoCDCRDs() ([]string, error) {
	return glob(ArgoCDModule, ArgoCDVersion, "manifests/crds/*-crd.yaml")
}

// PolicyReportCRDs returns the paths of the wgpolicyk8s.io/v1alpha2 CRDs
// (PolicyReport, ClusterPolicyReport) as Kyverno releases them.
func PolicyReportCRDs() ([]string, error) {
	return glob(KyvernoModule, KyvernoVersion, "config/crds/policyreport/wgpolicyk8s.io_*.yaml")
}

// OpenReportsCRDs returns the paths of the openreports.io/v1alpha1 CRDs
// (Report, ClusterReport) as reports-api releases them.
func OpenReportsCRDs() ([]string, error) {
	return glob(OpenReportsModule, OpenReportsVersion, "config/crd/openreports.io_*.yaml")
}

// KargoStepSchemaDir returns the directory of Kargo's promotion step config
// JSON schemas (<step>-config.json, with common.json and argocd-common.json
// beside them).
func KargoStepSchemaDir() (string, error) {
	d, err := Dir(KargoModule, KargoVersion)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "pkg", "promotion", "runner", "builtin", "schemas"), nil
}

func glob(module, version, pattern string) ([]string, error) {
	d, err := Dir(module, version)
	if err != nil {
		return nil, err
	}
	m, err := filepath.Glob(filepath.Join(d, filepath.FromSlash(pattern)))
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s@%s has no files matching %s", module, version, pattern)
	}
	sort.Strings(m)
	return m, nil
}
