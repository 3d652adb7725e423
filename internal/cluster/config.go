package cluster

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	// The oidc auth provider; exec credential plugins (gke-gcloud-auth-plugin,
	// kubelogin, aws eks get-token, ...) are built into client-go.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

// ConfigOptions say how to reach the cluster.
type ConfigOptions struct {
	// Kubeconfig is a kubeconfig file; empty means $KUBECONFIG or
	// ~/.kube/config, and the in-cluster service account when there is none.
	Kubeconfig string
	// Context is the kubeconfig context; empty means the current one.
	Context string
	// Timeout bounds every request (0: no limit).
	Timeout time.Duration
	// UserAgent identifies flipflop to the API server.
	UserAgent string
}

// Config loads the client configuration and returns it with the label that
// names the cluster in object paths: "cluster:<context>", or "cluster" with
// the in-cluster configuration. Errors never contain credentials.
func Config(o ConfigOptions) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("no kubeconfig found ($KUBECONFIG, ~/.kube/config or --kubeconfig) and not running in a cluster")
		}
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	label := "cluster"
	if raw, err := cc.RawConfig(); err == nil && len(raw.Contexts) > 0 {
		name := o.Context
		if name == "" {
			name = raw.CurrentContext
		}
		if name != "" {
			label = "cluster:" + name
		}
	}
	cfg.Timeout = o.Timeout
	if o.UserAgent != "" {
		cfg.UserAgent = o.UserAgent
	}
	// flipflop lists a handful of resources in pages: no need for client-side
	// throttling, and deprecation warnings are not the user's business here.
	cfg.QPS, cfg.Burst = 50, 100
	cfg.WarningHandler = rest.NoWarnings{}
	return cfg, label, nil
}
