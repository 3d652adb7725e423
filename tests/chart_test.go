package tests

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	helmkube "helm.sh/helm/v4/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/flipflop-dev/flipflop/charts"
	"github.com/flipflop-dev/flipflop/internal/kubetest"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// helmConfig is a Helm action configuration for the API server's admin, in
// namespace ns.
func helmConfig(t *testing.T, env *kubetest.Env, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &env.Kubeconfig, &ns
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The chart installed as `helm install` does (Helm's own install action, on a
// real API server with Kargo's and Argo CD's CRDs and no report CRD): the
// report CRDs it installs where absent, the auditor's roles bound to its
// ServiceAccount; the CronJob's own arguments, run once as that
// ServiceAccount (the API server runs no Jobs), write the reports, read back
// here. An upgrade keeps the CRDs it installed; a CRD someone else installed
// is left alone; an uninstall keeps the CRDs (and every tool's reports).
func TestChartInstall(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	env, err := kubetest.Start(kubetest.Options{CRDs: []string{kubetest.KargoCRDs, kubetest.ArgoCDCRDs}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	// OpenReports' CRDs are there already, installed by someone else.
	or, err := upstream.OpenReportsCRDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.ApplyFiles(kctx(t), or...); err != nil {
		t.Fatal(err)
	}
	applyObjs(t, env, example(t, "contradiction", "shop", "argocd")...)

	ch, err := charts.Load("../charts/flipflop")
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"auditor": map[string]any{"reportAPIs": []any{"policyreport", "openreports"}}}
	install := action.NewInstall(helmConfig(t, env, "flipflop"))
	install.ReleaseName, install.Namespace, install.CreateNamespace = "flipflop", "flipflop", true
	// hookOnly: wait for nothing but hooks (the chart has none): the API
	// server runs no controllers, so no Job would ever become ready.
	install.Timeout, install.WaitStrategy = 2*time.Minute, helmkube.HookOnlyStrategy
	if _, err := install.RunWithContext(kctx(t), ch, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	owners := func() map[string]string {
		out := map[string]string{}
		for _, name := range []string{"policyreports.wgpolicyk8s.io", "clusterpolicyreports.wgpolicyk8s.io", "reports.openreports.io", "clusterreports.openreports.io"} {
			crd, err := env.Dynamic().Resource(crds).Get(kctx(t), name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				out[name] = "absent"
			case err != nil:
				t.Fatal(err)
			default:
				out[name] = crd.GetAnnotations()["meta.helm.sh/release-name"] + "/" + crd.GetAnnotations()["helm.sh/resource-policy"]
			}
		}
		return out
	}
	want := map[string]string{
		"policyreports.wgpolicyk8s.io": "flipflop/keep", "clusterpolicyreports.wgpolicyk8s.io": "flipflop/keep",
		"reports.openreports.io": "/", "clusterreports.openreports.io": "/",
	}
	if got := owners(); !maps.Equal(got, want) {
		t.Errorf("after install, CRDs %v, want %v", got, want)
	}

	// The auditor's run: the CronJob's image arguments, as its ServiceAccount.
	cj, err := env.Dynamic().Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}).Namespace("flipflop").Get(kctx(t), "flipflop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := container(t, cj.Object, "auditor")
	if !strings.HasPrefix(c.Image, "ghcr.io/flipflop-dev/flipflop:v") || strings.HasSuffix(c.Image, ":latest") {
		t.Errorf("image %s", c.Image)
	}
	sa, _, _ := unstructured.NestedString(cj.Object, "spec", "jobTemplate", "spec", "template", "spec", "serviceAccountName")
	kc, err := env.AddUser("system:serviceaccount:flipflop:"+sa, "system:serviceaccounts", "system:serviceaccounts:flipflop")
	if err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(c.Args), "--kubeconfig", kc)
	stdout, stderr, code := runAuthorized(t, bin, args...)
	// --fail-on=never: the findings are in the reports; the Job succeeds.
	if code != 0 {
		t.Fatalf("the auditor's run %v: exit %d\n%s\n%s", c.Args, code, stdout, stderr)
	}
	for _, want := range []string{"wgpolicyk8s.io/v1alpha2 PolicyReports: 3 written", "openreports.io/v1alpha1 Reports: 3 written"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	pr, err := env.Dynamic().Resource(policyReports).Namespace("shop").Get(kctx(t), "flipflop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(resultsOf(pr), " "); !strings.Contains(got, "shared-branch-contradiction=fail") {
		t.Errorf("shop's PolicyReport: %s", got)
	}
	if _, err := env.Dynamic().Resource(openReports).Namespace("shop").Get(kctx(t), "flipflop", metav1.GetOptions{}); err != nil {
		t.Errorf("shop's OpenReports Report: %v", err)
	}

	// diagnose's container, the same way: the example's Stages have no
	// status yet, so it finds no flip-flop happening and says why.
	d := container(t, cj.Object, "diagnose")
	stdout, stderr, code = runCmd(t, "..", bin, append(slices.Clone(d.Args), "--kubeconfig", kc)...)
	if code != 0 || !strings.Contains(stdout, `"stages": 2`) {
		t.Errorf("diagnose %v: exit %d\n%s\n%s", d.Args, code, stdout, stderr)
	}

	// An upgrade renders the CRDs it owns again (lookup finds them its own);
	// the other tool's stay untouched.
	upgrade := action.NewUpgrade(helmConfig(t, env, "flipflop"))
	upgrade.Namespace, upgrade.Timeout, upgrade.WaitStrategy = "flipflop", 2*time.Minute, helmkube.HookOnlyStrategy
	if _, err := upgrade.RunWithContext(kctx(t), "flipflop", ch, vals); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	if got := owners(); !maps.Equal(got, want) {
		t.Errorf("after upgrade, CRDs %v, want %v", got, want)
	}
	// Uninstall keeps the CRDs and so the reports.
	uninstall := action.NewUninstall(helmConfig(t, env, "flipflop"))
	uninstall.WaitStrategy = helmkube.HookOnlyStrategy
	if _, err := uninstall.Run("flipflop"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	if got := owners(); !maps.Equal(got, want) {
		t.Errorf("after uninstall, CRDs %v, want %v", got, want)
	}
	if _, err := env.Dynamic().Resource(policyReports).Namespace("shop").Get(kctx(t), "flipflop", metav1.GetOptions{}); err != nil {
		t.Errorf("after uninstall, shop's PolicyReport: %v", err)
	}
}

type containerSpec struct {
	Image string
	Args  []string
}

func container(t *testing.T, cj map[string]any, name string) containerSpec {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(cj, "spec", "jobTemplate", "spec", "template", "spec", "containers")
	i := slices.IndexFunc(cs, func(c any) bool { return c.(map[string]any)["name"] == name })
	if i < 0 {
		t.Fatalf("no container %s among %d", name, len(cs))
	}
	m := cs[i].(map[string]any)
	var out containerSpec
	out.Image, _ = m["image"].(string)
	for _, a := range m["args"].([]any) {
		out.Args = append(out.Args, a.(string))
	}
	return out
}
