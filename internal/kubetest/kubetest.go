// Package kubetest runs a real kube-apiserver and etcd for tests, through
// controller-runtime's envtest, from binaries that hack/kube-tools builds from
// Go modules (no downloads). Everything listens on loopback only.
//
// A test package starts one environment lazily and stops it in TestMain:
//
//	var kube kubetest.Shared
//
//	func TestMain(m *testing.M) { code := m.Run(); kube.Stop(); os.Exit(code) }
//
//	func TestX(t *testing.T) { env := kube.Env(t); ... }
//
// When the binaries are missing the tests skip, unless the environment
// variable CI is set: then they fail, so CI cannot pass without running them.
package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// ErrNoBinaries means kube-apiserver or etcd is missing.
var ErrNoBinaries = errors.New("kube-apiserver and etcd not found: run 'make tools' (or bash hack/kube-tools/build.sh), or set KUBEBUILDER_ASSETS")

// Options shape an environment.
type Options struct {
	// CRDs are CRD files or directories, absolute or relative to the
	// repository root, or KargoCRDs and ArgoCDCRDs; nil means both of these,
	// so objects meet the schemas a real cluster enforces.
	CRDs []string
}

// KargoCRDs and ArgoCDCRDs stand, in Options.CRDs, for the released CRDs of
// Kargo and Argo CD at the versions internal/upstream pins (read from the Go
// module cache, downloaded through the module proxy when missing).
const (
	KargoCRDs  = "upstream:kargo"
	ArgoCDCRDs = "upstream:argocd"
	// ReportCRDs stands for the policy report CRDs: wgpolicyk8s.io/v1alpha2
	// (Kyverno's release) and openreports.io/v1alpha1 (reports-api's).
	ReportCRDs = "upstream:reports"
)

func crdPaths(root string, crds []string) ([]string, error) {
	if crds == nil {
		crds = []string{KargoCRDs, ArgoCDCRDs}
	}
	var paths []string
	for _, p := range crds {
		var more []string
		var err error
		switch {
		case p == KargoCRDs:
			more, err = upstream.KargoCRDs()
		case p == ArgoCDCRDs:
			more, err = upstream.ArgoCDCRDs()
		case p == ReportCRDs:
			if more, err = upstream.PolicyReportCRDs(); err == nil {
				var or []string
				or, err = upstream.OpenReportsCRDs()
				more = append(more, or...)
			}
		case filepath.IsAbs(p):
			more = []string{p}
		default:
			more = []string{filepath.Join(root, p)}
		}
		if err != nil {
			return nil, err
		}
		paths = append(paths, more...)
	}
	return paths, nil
}

// Env is a running API server with an admin user.
type Env struct {
	// Kubeconfig is the path of the admin's kubeconfig file (context "envtest").
	Kubeconfig string
	// Config is the admin's client configuration.
	Config *rest.Config
	// Dir is a temporary directory removed by Stop.
	Dir string

	env *envtest.Environment
	dyn dynamic.Interface

	mu     sync.Mutex
	mapped meta.RESTMapper // cached discovery; refreshed when a kind is unknown
}

// Assets returns the directory holding kube-apiserver and etcd:
// $KUBEBUILDER_ASSETS, or <repo>/hack/kube-tools/bin.
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "hack", "kube-tools", "bin"), nil
}

// RepoRoot finds the repository root: the nearest parent of the working
// directory holding hack/kube-tools/go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "kube-tools", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("kubetest: repository root (with hack/kube-tools/go.mod) not found above the working directory")
		}
		dir = parent
	}
}

// Start starts kube-apiserver and etcd on loopback, installs the CRDs and
// writes an admin kubeconfig. It returns an error wrapping ErrNoBinaries when
// the binaries are missing.
func Start(opts Options) (*Env, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("%w (looked in %s)", ErrNoBinaries, assets)
		}
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	paths, err := crdPaths(root, opts.CRDs)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, err
	}
	e := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		// The released CRDs are large (Argo CD's ApplicationSet alone is
		// thousands of lines): on a busy machine the API server takes longer
		// than envtest's default 10 s to serve them all.
		CRDInstallOptions: envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true, MaxTime: 3 * time.Minute},
	}
	// Loopback only: advertise 127.0.0.1 (which needs the endpoint reconciler
	// off); envtest already binds the secure port and etcd to 127.0.0.1.
	e.ControlPlane.GetAPIServer().Configure().
		Set("advertise-address", "127.0.0.1").
		Set("endpoint-reconciler-type", "none")
	cfg, err := e.Start()
	if err != nil {
		_ = e.Stop()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting kube-apiserver: %w", err)
	}
	env := &Env{Config: cfg, Dir: dir, env: e}
	if env.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		env.Stop()
		return nil, err
	}
	kc := filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(kc, e.KubeConfig, 0o600); err != nil {
		env.Stop()
		return nil, err
	}
	env.Kubeconfig = kc
	return env, nil
}

// Stop stops the API server and etcd and removes the temporary files.
func (e *Env) Stop() error {
	if e == nil {
		return nil
	}
	err := e.env.Stop()
	os.RemoveAll(e.Dir)
	return err
}

// AddUser provisions a user with a client certificate and returns the path of
// its kubeconfig. A user without groups has no permissions until RBAC grants
// some; "system:masters" makes an admin.
func (e *Env) AddUser(name string, groups ...string) (string, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", err
	}
	b, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.Dir, name+".kubeconfig")
	return path, os.WriteFile(path, b, 0o600)
}

// Dynamic returns the admin's dynamic client.
func (e *Env) Dynamic() dynamic.Interface { return e.dyn }

// mapper resolves kinds through discovery (CRDs included), cached until
// refresh.
func (e *Env) mapper(refresh bool) (meta.RESTMapper, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mapped != nil && !refresh {
		return e.mapped, nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, err
	}
	e.mapped = restmapper.NewDiscoveryRESTMapper(groups)
	return e.mapped, nil
}

// Resource returns the client for an object's kind, in its namespace.
func (e *Env) Resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	var mapping *meta.RESTMapping
	for _, refresh := range []bool{false, true} {
		m, err := e.mapper(refresh)
		if err != nil {
			return nil, err
		}
		mapping, err = m.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			break
		}
		if !meta.IsNoMatchError(err) || refresh {
			return nil, err
		}
	}
	ri := e.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return ri.Namespace(u.GetNamespace()), nil
	}
	return ri, nil
}

// Apply creates or replaces objects (server-side apply), creating their
// namespaces first. A status in an object is written with it, and through the
// status subresource afterwards where the kind has one (Stages do,
// Applications do not: their status is part of the object).
func (e *Env) Apply(ctx context.Context, objs ...*unstructured.Unstructured) error {
	for _, u := range objs {
		if ns := u.GetNamespace(); ns != "" {
			if err := e.ensureNamespace(ctx, ns); err != nil {
				return err
			}
		}
		rc, err := e.Resource(u)
		if err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		status, hasStatus := u.Object["status"]
		applied, err := rc.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "kubetest", Force: true})
		if err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		if hasStatus {
			applied.Object["status"] = status
			if _, err := rc.UpdateStatus(ctx, applied, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("status of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
			}
		}
	}
	return nil
}

// SetStatus replaces an object's status through the status subresource.
func (e *Env) SetStatus(ctx context.Context, apiVersion, kind, namespace, name string, status map[string]any) error {
	probe := &unstructured.Unstructured{}
	probe.SetAPIVersion(apiVersion)
	probe.SetKind(kind)
	probe.SetNamespace(namespace)
	rc, err := e.Resource(probe)
	if err != nil {
		return err
	}
	u, err := rc.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	u.Object["status"] = status
	_, err = rc.UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) { // no status subresource: the status is part of the object
		_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
	}
	return err
}

// DryRunCreate asks the API server to validate objects as a create, without
// storing them: schema, required fields and unknown fields (strict field
// validation). Namespaces are created as needed.
func (e *Env) DryRunCreate(ctx context.Context, u *unstructured.Unstructured) error {
	return e.DryRunCreateWith(ctx, u, metav1.FieldValidationStrict)
}

// DryRunCreateWith is DryRunCreate with the field validation given: Strict
// (an unknown field fails), Warn or Ignore (the API server prunes unknown
// fields, as the CRD's structural schema says, and judges the rest).
func (e *Env) DryRunCreateWith(ctx context.Context, u *unstructured.Unstructured, fieldValidation string) error {
	if ns := u.GetNamespace(); ns != "" {
		if err := e.ensureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	rc, err := e.Resource(u)
	if err != nil {
		return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	_, err = rc.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: fieldValidation})
	return err
}

// Delete deletes an object; a missing one is fine.
func (e *Env) Delete(ctx context.Context, u *unstructured.Unstructured) error {
	rc, err := e.Resource(u)
	if err != nil {
		return err
	}
	if err := rc.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func (e *Env) ensureNamespace(ctx context.Context, ns string) error {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	_, err := e.dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	return nil
}

// ApplyFiles applies every object of YAML or JSON files (multi-document YAML
// and kind: List included).
func (e *Env) ApplyFiles(ctx context.Context, paths ...string) error {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		objs, err := Decode(b)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := e.Apply(ctx, objs...); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

// Decode reads every object of a YAML or JSON stream; List items are expanded.
func Decode(b []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if strings.HasSuffix(u.GetKind(), "List") {
			items, _, _ := unstructured.NestedSlice(m, "items")
			for _, it := range items {
				if im, ok := it.(map[string]any); ok {
					out = append(out, &unstructured.Unstructured{Object: im})
				}
			}
			continue
		}
		out = append(out, u)
	}
}

// Shared is one environment for a whole test package, started on first use.
type Shared struct {
	// Options shape the environment.
	Options Options

	once sync.Once
	env  *Env
	err  error
}

// Env returns the running environment, starting it on first use. It skips the
// test when the binaries are missing and CI is unset, and fails it otherwise.
func (s *Shared) Env(t testing.TB) *Env {
	t.Helper()
	s.once.Do(func() { s.env, s.err = Start(s.Options) })
	if s.err != nil {
		if errors.Is(s.err, ErrNoBinaries) && os.Getenv("CI") == "" {
			t.Skip(s.err)
		}
		t.Fatal(s.err)
	}
	return s.env
}

// Stop stops the environment if it was started.
func (s *Shared) Stop() {
	s.once.Do(func() {}) // nothing starts after Stop
	if s.env != nil {
		if err := s.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "kubetest: stopping:", err)
		}
	}
}

// TokenKubeconfig writes, in a temporary directory of t, a kubeconfig whose
// only context (named context) reaches server with a bearer token: for tests
// that the token never shows up in output.
func TokenKubeconfig(t testing.TB, server string, ca []byte, context, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[context] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = context
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
