package tests

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/internal/kubetest"
)

// A real Gatekeeper, in deny, behind a real API server: the manager built
// from Gatekeeper's module as released (hack/hosts/matrix), its released CRDs,
// the template, the SyncSet, the shipped constraint (scoped, every rule) with
// its action switched to deny, and the webhook registered as the release
// registers it. Each documented way out of the seed contradiction is applied
// one object at a time, in several orders, as a user would apply them, and
// every step is admitted; the changes for the worse are denied by the rule
// that finds them, and by no other; a status write and a label on a Stage of
// a contradiction that exists already are admitted. Then the deny and warn
// pair replaces the constraint, as shipped: a change for the worse that the
// deny constraint's rules find is denied by it, one only the others find is
// admitted with the warn constraint's warning.
//
// Each replay and each change for the worse has an estate of its own (its
// own Kargo project, Argo CD namespace and repository), created before the
// constraints, so that all of them start from their seed and none sees
// another's objects.
func TestCompatGatekeeperInDeny(t *testing.T) {
	// Beside the other host tests: much of its time is waiting (the API
	// server, the manager, its webhook and inventory), when a core is idle.
	t.Parallel()
	for _, gk := range hostsOf(t, "gatekeeper") {
		t.Run(gk.String(), func(t *testing.T) { gatekeeperInDeny(t, gk) })
	}
}

// gatekeeperCluster starts a real API server with Kargo's, Argo CD's and
// Gatekeeper's released CRDs, and returns it with Gatekeeper's version and
// module directory: the release's CRDs and webhook registration come from
// the module of the binary's version (the matrix's default one when
// GATEKEEPER_BIN points outside the host cache).
func gatekeeperCluster(t *testing.T, gk host) (env *kubetest.Env, version, mod string) {
	t.Helper()
	version = gk.Version
	for _, e := range readMatrix(t) {
		if e.Tool == "gatekeeper" && e.Default && version == "default" {
			version = e.Version
		}
	}
	mod = moduleDir(t, "github.com/open-policy-agent/gatekeeper/v3", version)
	env, err := kubetest.Start(kubetest.Options{CRDs: []string{
		kubetest.KargoCRDs, kubetest.ArgoCDCRDs, filepath.Join(mod, "charts", "gatekeeper", "crds"),
	}})
	if errors.Is(err, kubetest.ErrNoBinaries) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	return env, version, mod
}

func gatekeeperInDeny(t *testing.T, gk host) {
	env, version, mod := gatekeeperCluster(t, gk)

	// Every estate, at its seed, before Gatekeeper enforces anything.
	replays := waysOutReplays(t)
	worse := changesForTheWorse(t)
	seed := loadEstate(t, "../examples/contradiction")
	for i, r := range replays {
		applyEstate(t, env, r.seed, isolated(i))
	}
	for i, w := range worse {
		applyEstate(t, env, w.state, isolated(len(replays)+i))
	}
	existing := isolated(len(replays) + len(worse))
	applyEstate(t, env, seed, existing)

	logPath := startGatekeeper(t, env, gk, version, mod)
	installTemplate(t, env, logPath)
	applyObjs(t, env, decode(t, switchAction(t, gkConstraint, "deny"))...)

	// Ready when the first change for the worse is denied (a dry run): the
	// constraints are enforced and the inventory holds the estates.
	probe := toUnstructured(isolated(len(replays)).apply(worse[0].obj))
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := env.DryRunCreate(kctx(t), probe)
		if err != nil && strings.Contains(err.Error(), "shared-branch-contradiction") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Gatekeeper did not deny the probe within 3 minutes (last answer: %v)\n%s", err, logTail(logPath))
		}
		time.Sleep(time.Second)
	}

	t.Run("ways-out-admitted", func(t *testing.T) {
		for i, r := range replays {
			iso := isolated(i)
			for _, st := range r.steps {
				if err := applyAdmitted(t, env, toUnstructured(iso.apply(st.obj))); err != nil {
					t.Errorf("%s: denied: %v", st.name, err)
				}
			}
		}
	})
	t.Run("worse-denied", func(t *testing.T) {
		for i, w := range worse {
			err := env.Apply(kctx(t), toUnstructured(isolated(len(replays)+i).apply(w.obj)))
			if err == nil {
				t.Errorf("%s: admitted", w.name)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, "denied the request") {
				t.Errorf("%s: failed, but not by a denial: %v", w.name, err)
			}
			for _, rule := range offeredRules(t) {
				if got, want := strings.Contains(msg, "["+rule+"]"), w.want[rule] > 0; got != want {
					t.Errorf("%s: denied by %s: %v, want %v:\n%s", w.name, rule, got, want, msg)
				}
			}
		}
	})
	t.Run("existing-contradiction-still-writable", func(t *testing.T) {
		// Argo CD writes an Application's status with a full update.
		app := existing.apply(seed["Application/dev"])
		meta := app["metadata"].(map[string]any)
		if err := env.SetStatus(kctx(t), "argoproj.io/v1alpha1", "Application", meta["namespace"].(string), meta["name"].(string),
			map[string]any{"sync": map[string]any{"status": "Synced", "revision": "0123456789abcdef0123456789abcdef01234567"}}); err != nil {
			t.Errorf("status write on an Application of a contradiction: %v", err)
		}
		stage := existing.apply(seed["Stage/dev"])
		stage["metadata"].(map[string]any)["labels"] = map[string]any{"team": "platform"}
		if err := env.Apply(kctx(t), toUnstructured(stage)); err != nil {
			t.Errorf("a label on a Stage of a contradiction that was there before: %v", err)
		}
	})
	t.Run("deny-and-warn-pair", func(t *testing.T) {
		pairInDeny(t, env, logPath, worse, len(replays))
	})
	if t.Failed() {
		t.Logf("Gatekeeper's log:\n%s", logTail(logPath))
	}
}

// pairInDeny replaces the one constraint with the deny and warn pair, as
// shipped, and dry-runs each change for the worse (server-side apply) until
// Gatekeeper enforces the pair: one that a rule of the deny constraint finds
// is denied by that constraint, naming those rules; any other is admitted,
// with a warning from the warn constraint naming the rules that find it.
func pairInDeny(t *testing.T, env *kubetest.Env, logPath string, worse []worseChange, first int) {
	if err := env.Delete(kctx(t), decode(t, mustRead(t, gkConstraint))[0]); err != nil {
		t.Fatal(err)
	}
	applyObjs(t, env, append(decode(t, mustRead(t, gkPairDeny)), decode(t, mustRead(t, gkPairWarn))...)...)
	denies := pairDenies(t)
	warnings := &warningLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	for i, w := range worse {
		obj := toUnstructured(isolated(first + i).apply(w.obj))
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		var rules []string // the rules that find the change
		for _, r := range slices.Sorted(maps.Keys(w.want)) {
			if w.want[r] > 0 {
				rules = append(rules, r)
			}
		}
		denied := slices.ContainsFunc(rules, func(r string) bool { return slices.Contains(denies, r) })
		deadline := time.Now().Add(time.Minute)
		for {
			warnings.reset()
			_, err := dyn.Resource(m.Resource).Namespace(obj.GetNamespace()).Apply(kctx(t), obj.GetName(), obj,
				metav1.ApplyOptions{FieldManager: "kubetest", Force: true, DryRun: []string{metav1.DryRunAll}})
			why := pairAnswer(err, warnings.all(), denied, rules)
			if why == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s, the deny and warn pair: %s\n%s", w.name, why, logTail(logPath))
				break
			}
			time.Sleep(time.Second)
		}
	}
}

// pairAnswer says what is wrong with the pair's answer to a change the rules
// given find ("" when nothing is): denied by flipflop-deny naming them when
// denied, else admitted with flipflop-warn's warning naming them.
func pairAnswer(err error, warnings []string, denied bool, rules []string) string {
	if denied {
		if err == nil || !strings.Contains(err.Error(), "[flipflop-deny]") {
			return fmt.Sprintf("want a denial by flipflop-deny, got %v", err)
		}
		for _, r := range rules {
			if !strings.Contains(err.Error(), "["+r+"]") {
				return fmt.Sprintf("the denial does not name %s: %v", r, err)
			}
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("want it admitted with a warning, got %v", err)
	}
	text := strings.Join(warnings, "\n")
	if !strings.Contains(text, "[flipflop-warn]") {
		return fmt.Sprintf("admitted without flipflop-warn's warning (warnings: %q)", warnings)
	}
	for _, r := range rules {
		if !strings.Contains(text, "["+r+"]") {
			return fmt.Sprintf("the warning does not name %s: %q", r, warnings)
		}
	}
	return ""
}

// warningLog keeps the warnings the API server sends (Gatekeeper's warn
// constraints answer with them).
type warningLog struct {
	mu   sync.Mutex
	msgs []string
}

// HandleWarningHeader is rest.WarningHandler's.
func (w *warningLog) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warningLog) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = nil
}

func (w *warningLog) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kubetest.Decode(b)
	if err != nil || len(objs) == 0 {
		t.Fatalf("decoding: %v (%d objects)", err, len(objs))
	}
	return objs
}

// applyAdmitted applies obj, and when it is denied, tries again for a few
// seconds: Gatekeeper reviews against its synced copy of the cluster, which
// follows the previous step a moment later. A step denied every time fails.
func applyAdmitted(t *testing.T, env *kubetest.Env, obj *unstructured.Unstructured) error {
	t.Helper()
	var err error
	for try := 0; try < 10; try++ {
		if err = env.Apply(kctx(t), obj); err == nil || !strings.Contains(err.Error(), "denied the request") {
			if try > 0 && err == nil {
				t.Logf("%s %s/%s admitted at try %d (the inventory lagged)", obj.GetKind(), obj.GetNamespace(), obj.GetName(), try+1)
			}
			return err
		}
		time.Sleep(time.Second)
	}
	return err
}

// isolation moves an example estate into a Kargo project, an Argo CD
// namespace and a repository of its own.
type isolation struct{ project, argocd, repo string }

const exampleRepo = "https://github.com/acme/deploy.git"

func isolated(i int) isolation {
	return isolation{
		project: fmt.Sprintf("acme-%d", i),
		argocd:  fmt.Sprintf("argocd-%d", i),
		repo:    fmt.Sprintf("https://github.com/acme/deploy-%d.git", i),
	}
}

// apply returns a copy of an example object (project acme, Applications in
// argocd) moved into the isolation: namespaces, the Project, the
// authorized-stage annotations, the repository, and the Argo CD namespace of
// each argocd-update app.
func (iso isolation) apply(obj map[string]any) map[string]any {
	b, _ := json.Marshal(obj)
	var o map[string]any
	_ = json.Unmarshal(b, &o)
	meta := o["metadata"].(map[string]any)
	switch {
	case o["kind"] == "Project":
		meta["name"] = iso.project
	case meta["namespace"] == "argocd":
		meta["namespace"] = iso.argocd
	case meta["namespace"] == "acme":
		meta["namespace"] = iso.project
	}
	if ann, ok := meta["annotations"].(map[string]any); ok {
		if v, ok := ann["kargo.akuity.io/authorized-stage"].(string); ok {
			ann["kargo.akuity.io/authorized-stage"] = strings.Replace(v, "acme:", iso.project+":", 1)
		}
	}
	return iso.walk(o).(map[string]any)
}

func (iso isolation) walk(v any) any {
	switch x := v.(type) {
	case string:
		if x == exampleRepo {
			return iso.repo
		}
		return x
	case []any:
		for i := range x {
			x[i] = iso.walk(x[i])
		}
		return x
	case map[string]any:
		for k := range x {
			x[k] = iso.walk(x[k])
		}
		if x["uses"] == "argocd-update" {
			cfg, _ := x["config"].(map[string]any)
			apps, _ := cfg["apps"].([]any)
			for _, a := range apps {
				if m, ok := a.(map[string]any); ok {
					m["namespace"] = iso.argocd
				}
			}
		}
		return x
	}
	return v
}

func applyEstate(t *testing.T, env *kubetest.Env, state map[string]map[string]any, iso isolation) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(state)) {
		applyObjs(t, env, toUnstructured(iso.apply(state[k])))
	}
}

func toUnstructured(o map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: o}
}

// moduleDir is the directory of a module version in the module cache,
// downloaded through the module proxy when missing.
func moduleDir(t *testing.T, module, version string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GO111MODULE=on")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v", module, version, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v\n%s", module, version, err, out)
	}
	return info.Dir
}

// startGatekeeper runs one manager on loopback with the operations the
// release splits over its two Deployments (webhook; audit, status and
// generate, which makes each template's constraint CRD) and the released flags
// that apply outside a pod, serving a
// certificate the API server trusts, and registers its validating webhook as
// the release does (deploy/gatekeeper.yaml), with two changes for a test:
// the URL of the local server instead of the Service, and failurePolicy Fail
// with Gatekeeper's maximum timeout, so that a step admitted was reviewed
// (the release fails open after 3 s). It returns the path of the manager's log.
func startGatekeeper(t *testing.T, env *kubetest.Env, gk host, version, mod string) string {
	t.Helper()
	m := runGatekeeper(t, env, gk, version)
	registerWebhook(t, env, mod, m)
	return m.log
}

// gatekeeperProcess is a running manager.
type gatekeeperProcess struct {
	log  string // the path of its log
	pid  int
	port int    // the webhook server's
	ca   []byte // the CA of its serving certificate, PEM
}

// runGatekeeper starts the manager (see startGatekeeper) and waits until it
// is ready; extra flags are added to the released ones.
func runGatekeeper(t *testing.T, env *kubetest.Env, gk host, version string, extra ...string) gatekeeperProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	ca := servingCert(t, dir)
	port, health := freePort(t), freePort(t)
	// Gatekeeper owns its status objects by its Pod: this one is never
	// scheduled (the test has no kubelet), it only names the process.
	if err := env.Apply(kctx(t), toUnstructured(map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "gatekeeper-test", "namespace": "gatekeeper-system"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "manager", "image": "openpolicyagent/gatekeeper:" + version}}},
	})); err != nil {
		t.Fatal(err)
	}
	// The audit's cache directory is an emptyDir in the release.
	if err := os.MkdirAll(filepath.Join(dir, "audit"), 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "gatekeeper.log")
	if d := os.Getenv("FLIPFLOP_GATEKEEPER_LOG"); d != "" { // keep the log after the test
		logPath = d
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, gk.Path,
		"--port="+fmt.Sprint(port), "--host=127.0.0.1", "--cert-dir="+dir, "--disable-cert-rotation",
		"--health-addr=127.0.0.1:"+fmt.Sprint(health), "--metrics-addr=0",
		"--operation=webhook", "--operation=status", "--operation=audit", "--operation=generate",
		"--exempt-namespace=gatekeeper-system", "--disable-opa-builtin={http.send}",
		"--logtostderr", "--api-cache-dir="+filepath.Join(dir, "audit"))
	cmd.Args = append(cmd.Args, extra...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "POD_NAMESPACE=gatekeeper-system", "POD_NAME=gatekeeper-test", "NAMESPACE=gatekeeper-system")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		logFile.Close()
	})

	// The manager answers /readyz once its caches and trackers are up.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-done:
			t.Fatalf("Gatekeeper exited:\n%s", logTail(logPath))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Gatekeeper not ready in 3 minutes:\n%s", logTail(logPath))
		}
		time.Sleep(500 * time.Millisecond)
	}
	return gatekeeperProcess{log: logPath, pid: cmd.Process.Pid, port: port, ca: ca}
}

// registerWebhook registers the manager's validating webhook as the release
// does, with the test's two changes (see startGatekeeper).
func registerWebhook(t *testing.T, env *kubetest.Env, mod string, m gatekeeperProcess) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mod, "deploy", "gatekeeper.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubetest.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var vwc *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ValidatingWebhookConfiguration" {
			vwc = o
		}
	}
	if vwc == nil {
		t.Fatal("no ValidatingWebhookConfiguration in the release's deploy/gatekeeper.yaml")
	}
	hooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
	var keep []any
	for _, h := range hooks {
		w := h.(map[string]any)
		if w["name"] != "validation.gatekeeper.sh" {
			continue
		}
		w["clientConfig"] = map[string]any{"url": fmt.Sprintf("https://127.0.0.1:%d/v1/admit", m.port), "caBundle": base64.StdEncoding.EncodeToString(m.ca)}
		w["failurePolicy"] = "Fail"
		w["timeoutSeconds"] = int64(30)
		keep = append(keep, w)
	}
	if len(keep) != 1 {
		t.Fatalf("want the release's validation.gatekeeper.sh webhook, found %d", len(keep))
	}
	_ = unstructured.SetNestedSlice(vwc.Object, keep, "webhooks")
	applyObjs(t, env, vwc)
}

// installTemplate installs bundles/gatekeeper's first step as docs/hosts.md
// says (the kustomization: the SyncSet and the template) and waits until
// Gatekeeper has created the template, so that its constraints can be
// applied.
func installTemplate(t *testing.T, env *kubetest.Env, logPath string) {
	t.Helper()
	var k struct{ Resources []string }
	if err := yaml.Unmarshal(mustRead(t, gkDir+"/kustomization.yaml"), &k); err != nil {
		t.Fatal(err)
	}
	var templates []string
	for _, r := range k.Resources {
		path := filepath.Join(gkDir, r)
		if err := env.ApplyFiles(kctx(t), path); err != nil {
			t.Fatal(err)
		}
		if objs := decodeFile(t, path); objs[0].GetKind() == "ConstraintTemplate" {
			templates = append(templates, path)
		}
	}
	if len(templates) != 1 {
		t.Fatalf("want the one template in step 1, found %v", templates)
	}
	objs := decodeFile(t, templates[0])
	name := objs[0].GetName()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rc, err := env.Resource(objs[0])
		if err != nil {
			t.Fatal(err)
		}
		got, err := rc.Get(kctx(t), name, metav1.GetOptions{})
		if err == nil {
			if created, _, _ := unstructured.NestedBool(got.Object, "status", "created"); created {
				return
			}
		}
		if time.Now().After(deadline) {
			crds, _ := env.Dynamic().Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).List(kctx(t), metav1.ListOptions{})
			for _, c := range crds.Items {
				if strings.Contains(c.GetName(), "constraints.gatekeeper") {
					conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
					t.Logf("CRD %s: %v", c.GetName(), conds)
				}
			}
			t.Fatalf("template %s not created in 2 minutes:\n%s", name, logTail(logPath))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubetest.Decode(b)
	if err != nil || len(objs) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}

// servingCert writes a CA-signed serving certificate for 127.0.0.1 into dir
// (tls.crt, tls.key, as Gatekeeper's cert directory holds them) and returns
// the CA certificate, PEM-encoded, base64 in the webhook's caBundle.
func servingCert(t *testing.T, dir string) []byte {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flipflop test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFile(t, filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// logTail is the end of a log file.
func logTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if len(line) > 300 {
			line = line[:300] + "..."
		}
		lines = append(lines, line)
		if len(lines) > 40 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
