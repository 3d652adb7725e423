package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/kubetest"
)

// A measurement, not a test (it asserts nothing and is skipped unless
// FLIPFLOP_GATEKEEPER_LOAD names a size in objects): the real Gatekeeper
// manager of TestCompatGatekeeperInDeny with the benchmark estate
// (internal/estate, seed 1) synced and the shipped constraint made one that
// Gatekeeper's audit runs (enforcementAction warn, not scoped: what the
// shipped one avoids, and this measures why). It logs how long each audit
// pass took and the manager's peak resident memory (VmHWM), for
// docs/hosts.md's sizing section:
//
//	FLIPFLOP_GATEKEEPER_LOAD=2000 go test -run GatekeeperLoad -v -timeout 60m ./tests/
func TestGatekeeperLoad(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FLIPFLOP_GATEKEEPER_LOAD"))
	if n <= 0 {
		t.Skip("set FLIPFLOP_GATEKEEPER_LOAD to a number of objects to measure")
	}
	gk := hostsOf(t, "gatekeeper")[0]
	env, version, _ := gatekeeperCluster(t, gk)

	files, _ := estate.Generate(estate.Options{Objects: n, Seed: 1})
	apps, rejected := 0, 0
	start := time.Now()
	for _, f := range files {
		objs, err := kubetest.Decode(f.Content)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			// The estate holds some documents the released CRDs reject (it
			// tests what the files say, not what a cluster admits).
			if err := env.Apply(kctx(t), o); err != nil {
				rejected++
				continue
			}
			if o.GetKind() == "Application" {
				apps++
			}
		}
	}
	t.Logf("%d objects (%d Applications) applied in %s, %d rejected by the API server", n-rejected, apps, time.Since(start).Round(time.Second), rejected)

	m := runGatekeeper(t, env, gk, version, "--audit-interval=60")
	logPath, pid := m.log, m.pid
	installTemplate(t, env, logPath)
	applyObjs(t, env, audited(t, gkConstraint))

	// Three audit passes with the constraint in place, or 20 minutes.
	deadline := time.Now().Add(20 * time.Minute)
	var passes []string
	for len(passes) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Second)
		passes = auditPasses(t, logPath)
		t.Logf("after %s: audit passes finished with the constraint: %v; peak memory %s",
			time.Since(start).Round(time.Second), passes, peakMemory(pid))
	}
	t.Logf("Gatekeeper %s, %d Applications, %d objects: audit passes %v, peak resident memory %s",
		version, apps, n, passes, peakMemory(pid))
}

// auditPasses lists the duration of each audit pass that had a constraint to
// audit (Gatekeeper's log: "auditing is complete", after a pass that did not
// say "no constraint is found").
func auditPasses(t *testing.T, logPath string) []string {
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	withConstraint := false
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 16<<20)
	for s.Scan() {
		var e map[string]any
		if json.Unmarshal(s.Bytes(), &e) != nil {
			continue
		}
		msg, _ := e["msg"].(string)
		switch {
		case msg == "auditing constraints and violations":
			withConstraint = true
		case msg == "no constraint is found with apiversion":
			withConstraint = false
		case msg == "auditing is complete" && withConstraint:
			out = append(out, fmt.Sprint(e["duration"]))
		case msg == "audit manager audit() failed" && withConstraint && len(out) > 0:
			out = out[:len(out)-1]
			t.Logf("an audit pass failed: %v", e["error"])
		}
	}
	return out
}

// peakMemory is a process's VmHWM from /proc.
func peakMemory(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "?"
}

// audited is a constraint file of bundles/gatekeeper made one that every
// enforcement point runs, audit included: enforcementAction warn, not scoped.
func audited(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	c := decode(t, mustRead(t, path))[0]
	if a, _, _ := unstructured.NestedString(c.Object, "spec", "enforcementAction"); a != "scoped" {
		t.Fatalf("%s: enforcementAction %q, want scoped", path, a)
	}
	unstructured.RemoveNestedField(c.Object, "spec", "scopedEnforcementActions")
	if err := unstructured.SetNestedField(c.Object, "warn", "spec", "enforcementAction"); err != nil {
		t.Fatal(err)
	}
	return c
}
