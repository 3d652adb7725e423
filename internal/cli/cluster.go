package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/cluster"
	"github.com/flipflop-dev/flipflop/internal/version"
)

// clusterFlags select reading objects from a live cluster (--cluster) and how.
type clusterFlags struct {
	on            bool
	kubeconfig    string
	context       string
	namespaces    []string
	allNamespaces bool
	timeout       time.Duration
	chunkSize     int64
	maxResponse   int64
	// keepStatus keeps the objects' status (diagnose reads it); every other
	// command drops it as it reads (cluster.Options.KeepStatus).
	keepStatus bool
	fs         *pflag.FlagSet
}

// clusterOnly are the flags that mean nothing without --cluster.
// -n/--namespace means something without it too: the namespace of manifests
// that name none (see validate).
var clusterOnly = []string{"kubeconfig", "context", "all-namespaces", "request-timeout", "chunk-size", "max-response-size"}

func (c *clusterFlags) register(fs *pflag.FlagSet) {
	c.fs = fs
	fs.BoolVar(&c.on, "cluster", false, "also read Applications, ApplicationSets, Stages, PromotionTasks, ClusterPromotionTasks, Warehouses and Projects from a live cluster (get and list only; see deploy/rbac.yaml)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG or ~/.kube/config; in a Pod without one, the in-cluster service account)")
	fs.StringVar(&c.context, "context", "", "kubeconfig context (default the current context)")
	fs.StringArrayVarP(&c.namespaces, "namespace", "n", nil, "without --cluster: the namespace of manifests that name none, as kubectl apply -n (a Stage's project; default: from the Argo CD Application that deploys the file's directory, else unknown); with --cluster: a Kargo project namespace to read Stages, Warehouses and PromotionTasks from (repeatable; default all namespaces)")
	fs.BoolVarP(&c.allNamespaces, "all-namespaces", "A", false, "read Kargo objects from every namespace (the default without -n), and Applications and ApplicationSets from every namespace too")
	fs.DurationVar(&c.timeout, "request-timeout", 30*time.Second, "time limit of each request to the API server (0: none)")
	fs.Int64Var(&c.chunkSize, "chunk-size", cluster.DefaultChunkSize, "objects per list request (pages are read until the end; 0: one request)")
	fs.Int64Var(&c.maxResponse, "max-response-size", cluster.DefaultMaxResponseBytes, "largest response of the API server read, in bytes after decompression; a longer one is reported as an error (lower --chunk-size for smaller pages)")
	setFlagGroup(fs, groupCluster, "cluster", "kubeconfig", "context", "namespace", "all-namespaces", "request-timeout", "chunk-size", "max-response-size")
	setFlagFiles(fs, nil, "kubeconfig")
}

func (c *clusterFlags) enabled() bool { return c.on }

// manifestNamespace is the namespace -n gives manifests without one: only
// without --cluster, where -n selects what is read instead.
func (c *clusterFlags) manifestNamespace() string {
	if c.on || len(c.namespaces) != 1 {
		return ""
	}
	return c.namespaces[0]
}

func (c *clusterFlags) validate() error {
	if !c.on {
		for _, name := range clusterOnly {
			if c.fs != nil && c.fs.Changed(name) {
				return usagef("--%s needs --cluster", name)
			}
		}
		if len(c.namespaces) > 1 {
			return usagef("without --cluster, -n/--namespace names one namespace: where manifests without metadata.namespace are applied")
		}
		if len(c.namespaces) == 1 && strings.TrimSpace(c.namespaces[0]) == "" {
			return usagef("-n/--namespace needs a namespace name")
		}
		return nil
	}
	if c.allNamespaces && len(c.namespaces) > 0 {
		return usagef("-n/--namespace and -A/--all-namespaces exclude each other")
	}
	for _, ns := range c.namespaces {
		if strings.TrimSpace(ns) == "" {
			return usagef("-n/--namespace needs a namespace name")
		}
	}
	if c.timeout < 0 {
		return usagef("--request-timeout must not be negative")
	}
	if c.chunkSize < 0 {
		return usagef("--chunk-size must not be negative")
	}
	if c.maxResponse <= 0 {
		return usagef("--max-response-size must be positive")
	}
	return nil
}

// argocdNamespaces returns the --argocd-namespace values of the shared input
// flags: where Applications and ApplicationSets are read.
func (c *clusterFlags) argocdNamespaces() []string {
	if c.fs == nil {
		return nil
	}
	nss, _ := c.fs.GetStringArray("argocd-namespace")
	return nss
}

// load reads the objects of the cluster. Whatever cannot be read (the cluster
// itself, or a resource in a namespace) becomes a LoadError naming it, and the
// rest is returned; an ApplicationSet whose generated Applications were read is
// left out (cluster.Merge).
func (c *clusterFlags) load(ctx context.Context, _ IO) ([]evaluator.Object, []evaluator.LoadError, error) {
	cfg, label, err := c.config()
	if err != nil {
		return nil, []evaluator.LoadError{{Path: "cluster", Message: err.Error() + "; nothing was read from the cluster"}}, nil
	}
	nss := c.argocdNamespaces()
	objs, errs := cluster.Read(ctx, cfg, cluster.Options{
		Label:            label,
		Namespaces:       c.namespaces,
		ArgoCDNamespaces: nss,
		AllNamespaces:    c.allNamespaces,
		ChunkSize:        c.chunkSize,
		MaxResponseBytes: c.maxResponse,
		KeepStatus:       c.keepStatus,
	})
	first := ""
	if len(nss) > 0 {
		first = nss[0]
	}
	return cluster.Merge(objs, first), errs, nil
}

// kargoVersion reads the Kargo version of the cluster's controller, and where
// it was read or why it could not be ("" and why).
func (c *clusterFlags) kargoVersion(ctx context.Context) (string, string) {
	cfg, _, err := c.config()
	if err != nil {
		return "", "the cluster's Kargo version could not be read"
	}
	return cluster.KargoVersion(ctx, cfg)
}

// config is the client configuration the flags name (kubeconfig, context,
// timeout), and the label of the objects read through it.
func (c *clusterFlags) config() (*rest.Config, string, error) {
	return cluster.Config(cluster.ConfigOptions{
		Kubeconfig: c.kubeconfig,
		Context:    c.context,
		Timeout:    c.timeout,
		UserAgent:  "flipflop/" + version.String(),
	})
}

// programName is how the user invoked flipflop: "kubectl flipflop" when the
// binary runs as the kubectl plugin kubectl-flipflop, else "flipflop".
func programName() string {
	base := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	if strings.HasPrefix(base, "kubectl-") {
		return "kubectl " + strings.ReplaceAll(strings.TrimPrefix(base, "kubectl-"), "_", "-")
	}
	return "flipflop"
}
