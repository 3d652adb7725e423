package charts

// The chart's tests: helm lint, rendering with the chart's values schema, the
// report CRDs, and the generated Gatekeeper files kept in step with bundles/.
// tests/chart_test.go installs it on a real API server.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	v2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const dir = "flipflop"

// helm lint --strict (Helm's own linter): no error and no warning.
func TestLint(t *testing.T) {
	ch, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := v2util.SaveDir(ch, tmp); err != nil {
		t.Fatal(err)
	}
	for _, vals := range []map[string]any{nil, {"gatekeeper": map[string]any{"enabled": true}}} {
		r := lint.RunAll(filepath.Join(tmp, "flipflop"), vals, "flipflop")
		for _, m := range r.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("lint %v: %s", vals, m)
			}
		}
	}
}

// Render renders the chart as `helm template` does, validating the values
// against values.schema.json, and returns its objects by "Kind/name".
func Render(t *testing.T, vals map[string]any) (map[string]*unstructured.Unstructured, error) {
	t.Helper()
	ch, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return render(t, ch, vals)
}

func render(t *testing.T, ch *chart.Chart, vals map[string]any) (map[string]*unstructured.Unstructured, error) {
	t.Helper()
	top, err := chartutil.ToRenderValuesWithSchemaValidation(ch, vals, common.ReleaseOptions{Name: "flipflop", Namespace: "flipflop", Revision: 1, IsInstall: true}, nil, false)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{}.RenderWithContext(context.Background(), ch, top)
	if err != nil {
		return nil, err
	}
	objs := map[string]*unstructured.Unstructured{}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		dec := yamlutil.NewYAMLReader(bufio.NewReader(strings.NewReader(files[name])))
		for {
			doc, err := dec.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var m map[string]any
			if err := yaml.Unmarshal(doc, &m); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if m == nil {
				continue
			}
			u := &unstructured.Unstructured{Object: m}
			objs[u.GetKind()+"/"+u.GetName()] = u
		}
	}
	return objs, nil
}

// The defaults: a CronJob that runs the chart's own release (never latest),
// check --cluster --write-reports, resources from measurement, least-privilege
// roles bound to its ServiceAccount; no Gatekeeper object.
func TestDefaults(t *testing.T) {
	objs, err := Render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	cj := objs["CronJob/flipflop"]
	if cj == nil {
		t.Fatalf("no CronJob: %v", keys(objs))
	}
	ch, _ := loader.LoadDir(dir)
	c := container(t, cj)
	if want := "ghcr.io/flipflop-dev/flipflop:v" + ch.Metadata.AppVersion; c["image"] != want {
		t.Errorf("image %v, want %s", c["image"], want)
	}
	args, _ := c["args"].([]any)
	for _, want := range []string{"check", "--cluster", "--write-reports", "--fail-on=never", "--argocd-namespace=argocd"} {
		if !slices.Contains(args, any(want)) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	d := containerNamed(t, cj, "diagnose")
	if dargs, _ := d["args"].([]any); len(dargs) < 2 || dargs[0] != "diagnose" || dargs[1] != "--cluster" || d["image"] != c["image"] {
		t.Errorf("diagnose container %v", d)
	}
	if slices.Contains(args, any("--no-waivers")) {
		t.Errorf("args %v: annotation waivers are honoured by default", args)
	}
	lim, _, _ := unstructured.NestedString(c, "resources", "limits", "memory")
	if lim == "" {
		t.Error("no memory limit")
	}
	for _, k := range []string{"ClusterRole/flipflop-reader", "ClusterRole/flipflop-report-writer", "ClusterRoleBinding/flipflop-reader", "ClusterRoleBinding/flipflop-report-writer", "ServiceAccount/flipflop"} {
		if objs[k] == nil {
			t.Errorf("no %s: %v", k, keys(objs))
		}
	}
	for _, r := range rules(t, objs["ClusterRole/flipflop-reader"]) {
		if slices.ContainsFunc(r.verbs, func(v string) bool { return v != "get" && v != "list" }) || slices.Contains(r.resources, "secrets") || slices.Contains(r.groups, "apps") {
			t.Errorf("reader rule %+v: more than get and list on the kinds read", r)
		}
	}
	for k := range objs {
		if strings.HasPrefix(k, "ConstraintTemplate/") || strings.HasPrefix(k, "SyncSet/") {
			t.Errorf("%s rendered with gatekeeper.enabled false", k)
		}
	}
}

// Values reach the arguments; the values schema refuses what would break
// the auditor (a latest tag, an unknown level, an unknown key).
func TestValues(t *testing.T) {
	objs, err := Render(t, map[string]any{"auditor": map[string]any{
		"kargoVersion": "v1.10", "skipRules": []any{"unknown-application"},
		"severity": map[string]any{"shared-write-branch": "error"}, "failOn": "error", "annotationWaivers": false,
		"reportAPIs": []any{"policyreport"},
	}, "image": map[string]any{"digest": "sha256:" + strings.Repeat("a", 64)}})
	if err != nil {
		t.Fatal(err)
	}
	c := container(t, objs["CronJob/flipflop"])
	args, _ := c["args"].([]any)
	for _, want := range []string{"--kargo-version=v1.10", "--skip-rule=unknown-application", "--severity=shared-write-branch=error", "--fail-on=error", "--no-waivers", "--report-api=policyreport"} {
		if !slices.Contains(args, any(want)) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if img, _ := c["image"].(string); !strings.HasSuffix(img, "@sha256:"+strings.Repeat("a", 64)) {
		t.Errorf("image %s: the digest is not pinned", img)
	}
	for _, bad := range []map[string]any{
		{"image": map[string]any{"tag": "latest"}},
		{"auditor": map[string]any{"failOn": "warn"}},
		{"auditor": map[string]any{"severity": map[string]any{"x": "fatal"}}},
		{"auditor": map[string]any{"shedule": "* * * * *"}},
		{"gatekeeper": map[string]any{"constraints": []any{map[string]any{"name": "x", "action": "block"}}}},
	} {
		if _, err := Render(t, bad); err == nil {
			t.Errorf("values %v accepted", bad)
		}
	}
}

// With gatekeeper.enabled: the one template and the SyncSet, byte for byte
// the generated bundle's; no constraint until Gatekeeper made its kind
// (helm template has no cluster to look it up in).
func TestGatekeeper(t *testing.T) {
	objs, err := Render(t, map[string]any{"gatekeeper": map[string]any{"enabled": true}})
	if err != nil {
		t.Fatal(err)
	}
	if objs["ConstraintTemplate/flipflop"] == nil || objs["SyncSet/flipflop"] == nil {
		t.Errorf("objects %v, want the template and the SyncSet", keys(objs))
	}
	if objs["Flipflop/flipflop"] != nil {
		t.Error("a constraint rendered before its kind exists")
	}
	for _, f := range []string{"template.yaml", "sync.yaml"} {
		chartCopy, err := os.ReadFile("flipflop/files/gatekeeper/" + f)
		if err != nil {
			t.Fatal(err)
		}
		bundle, err := os.ReadFile("../bundles/gatekeeper/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(chartCopy, bundle) {
			t.Errorf("charts/flipflop/files/gatekeeper/%s differs from bundles/gatekeeper/%s: run make bundles", f, f)
		}
	}
}

func keys(m map[string]*unstructured.Unstructured) []string { return slices.Sorted(maps.Keys(m)) }

func container(t *testing.T, cj *unstructured.Unstructured) map[string]any {
	t.Helper()
	return containerNamed(t, cj, "auditor")
}

func containerNamed(t *testing.T, cj *unstructured.Unstructured, name string) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(cj.Object, "spec", "jobTemplate", "spec", "template", "spec", "containers")
	for _, c := range cs {
		if m := c.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no container %s among %d", name, len(cs))
	return nil
}

type rule struct{ groups, resources, verbs []string }

func rules(t *testing.T, role *unstructured.Unstructured) []rule {
	t.Helper()
	if role == nil {
		t.Fatal("no role")
	}
	rs, _, _ := unstructured.NestedSlice(role.Object, "rules")
	var out []rule
	for _, r := range rs {
		m := r.(map[string]any)
		str := func(k string) []string {
			var s []string
			for _, v := range m[k].([]any) {
				s = append(s, v.(string))
			}
			return s
		}
		out = append(out, rule{str("apiGroups"), str("resources"), str("verbs")})
	}
	return out
}

// The report CRDs: those of the APIs the auditor writes (wgpolicyk8s.io by
// default), the releases' own, kept on uninstall; none when turned off; a
// chart without them (this directory, unpackaged) says so instead of
// installing an auditor that cannot write.
func TestReportCRDs(t *testing.T) {
	for _, c := range []struct {
		vals map[string]any
		want []string
	}{
		{nil, []string{"policyreports.wgpolicyk8s.io", "clusterpolicyreports.wgpolicyk8s.io"}},
		{map[string]any{"auditor": map[string]any{"reportAPIs": []any{"openreports"}}}, []string{"reports.openreports.io", "clusterreports.openreports.io"}},
		{map[string]any{"auditor": map[string]any{"reportAPIs": []any{"policyreport", "openreports"}}}, []string{"policyreports.wgpolicyk8s.io", "clusterpolicyreports.wgpolicyk8s.io", "reports.openreports.io", "clusterreports.openreports.io"}},
		{map[string]any{"reportCRDs": map[string]any{"install": false}}, nil},
	} {
		objs, err := Render(t, c.vals)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for k, o := range objs {
			if !strings.HasPrefix(k, "CustomResourceDefinition/") {
				continue
			}
			got = append(got, o.GetName())
			if o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
				t.Errorf("%s: not kept on uninstall", k)
			}
			if v, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions"); len(v) == 0 {
				t.Errorf("%s: no versions", k)
			}
		}
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("values %v: CRDs %v, want %v", c.vals, got, want)
		}
	}
	bare, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	bare.Files = slices.DeleteFunc(bare.Files, func(f *common.File) bool { return strings.HasPrefix(f.Name, CRDDir) })
	if _, err := render(t, bare, nil); err == nil || !strings.Contains(err.Error(), "lacks the report CRDs") {
		t.Errorf("a chart without the CRDs: %v", err)
	}
	if _, err := render(t, bare, map[string]any{"reportCRDs": map[string]any{"install": false}}); err != nil {
		t.Errorf("a chart without the CRDs, not installing them: %v", err)
	}
}

// The packaged chart: the release's version, the CRDs inside.
func TestPackage(t *testing.T) {
	p, err := Package(dir, "v1.2.3", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != "flipflop-1.2.3.tgz" {
		t.Errorf("archive %s", p)
	}
	ch, err := loader.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.Version != "1.2.3" || ch.Metadata.AppVersion != "1.2.3" {
		t.Errorf("version %s, appVersion %s", ch.Metadata.Version, ch.Metadata.AppVersion)
	}
	n := 0
	for _, f := range ch.Files {
		if strings.HasPrefix(f.Name, CRDDir) {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d report CRDs in the archive, want 4", n)
	}
	objs, err := render(t, ch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := container(t, objs["CronJob/flipflop"]); c["image"] != "ghcr.io/flipflop-dev/flipflop:v1.2.3" {
		t.Errorf("image %v", c["image"])
	}
}

// The chart's roles are deploy/rbac.yaml's, which people bind to run
// flipflop check --cluster by hand.
func TestRolesMatchDeploy(t *testing.T) {
	objs, err := Render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	deploy := map[string]*unstructured.Unstructured{}
	dec := yamlutil.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		if m != nil {
			u := &unstructured.Unstructured{Object: m}
			deploy[u.GetName()] = u
		}
	}
	for _, name := range []string{"flipflop-reader", "flipflop-report-writer"} {
		want := rules(t, deploy[name])
		got := rules(t, objs["ClusterRole/"+name])
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the chart's rules %+v, deploy/rbac.yaml's %+v", name, got, want)
		}
	}
}
