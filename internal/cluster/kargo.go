package cluster

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// KargoControllerSelector selects the Kargo controller's Deployment as Kargo's
// Helm chart labels it (charts/kargo/templates/_helpers.tpl: kargo.labels,
// kargo.controller.labels); its app.kubernetes.io/version label is the
// chart's appVersion, the Kargo release.
const KargoControllerSelector = "app.kubernetes.io/name=kargo,app.kubernetes.io/component=controller"

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// releaseLabel is what a Kargo release's version label looks like.
var releaseLabel = regexp.MustCompile(`^v?[0-9]{1,4}\.[0-9]{1,4}(\.[0-9]{1,6})?([-+][0-9A-Za-z.+-]{0,64})?$`)

// KargoVersion reads the version of the Kargo controller the cluster runs,
// from the labels of its Deployment, and says where it found it. It returns
// "" and why not when it cannot tell (not installed under the chart's labels,
// no permission to list Deployments, a label that is no version): the
// caller then assumes a version and says so. With several controllers
// (shards) of different versions, the oldest is returned: a field or format
// the oldest lacks fails the promotions it runs.
func KargoVersion(ctx context.Context, cfg *rest.Config) (version, source string) {
	red := newRedactor(cfg)
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &guard{next: rt, maxBytes: 4 << 20} })
	ctx = klog.NewContext(ctx, logr.Discard())
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return "", "the cluster's Kargo version could not be read: " + safetext.Text(red.clean(err.Error()))
	}
	list, err := dyn.Resource(deployments).List(ctx, metav1.ListOptions{LabelSelector: KargoControllerSelector, Limit: 50})
	if err != nil {
		msg := statusMessage(err)
		if msg == "" {
			msg = err.Error()
		}
		return "", "the cluster's Kargo version could not be read (listing Deployments labelled " + KargoControllerSelector + ": " + safetext.Text(red.clean(msg)) + ")"
	}
	type found struct{ version, where string }
	var fs []found
	for _, d := range list.Items {
		v := d.GetLabels()["app.kubernetes.io/version"]
		if !releaseLabel.MatchString(v) {
			continue
		}
		fs = append(fs, found{v, d.GetNamespace() + "/" + d.GetName()})
	}
	if len(fs) == 0 {
		return "", "the cluster's Kargo version could not be read (no Deployment labelled " + KargoControllerSelector + " carries a version)"
	}
	slices.SortFunc(fs, func(a, b found) int { return compareRelease(a.version, b.version) })
	where := "cluster: Deployment " + safetext.Text(fs[0].where) + " (app.kubernetes.io/version)"
	if len(fs) > 1 && fs[0].version != fs[len(fs)-1].version {
		where += fmt.Sprintf("; the oldest of %d controllers", len(fs))
	}
	return fs[0].version, where
}

// compareRelease orders two release labels by major, minor and patch.
func compareRelease(a, b string) int {
	pa, pb := releaseParts(a), releaseParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}

func releaseParts(v string) [3]int {
	var p [3]int
	core, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), "-")
	core, _, _ = strings.Cut(core, "+")
	for i, s := range strings.SplitN(core, ".", 3) {
		n := 0
		for _, c := range s {
			n = n*10 + int(c-'0')
		}
		p[i] = n
	}
	return p
}
