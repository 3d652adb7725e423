package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// clusterFlags select reading objects from a live cluster (--cluster).
type clusterFlags struct {
	on bool
}

func (c *clusterFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&c.on, "cluster", false, "read Applications, ApplicationSets, Stages and PromotionTasks from the current kubeconfig context")
}

func (c *clusterFlags) enabled() bool { return c.on }

func (c *clusterFlags) validate() error {
	if c.on {
		return usagef("--cluster is not available in this build")
	}
	return nil
}

func (c *clusterFlags) load(context.Context, IO) ([]evaluator.Object, []evaluator.LoadError, error) {
	return nil, nil, nil
}
