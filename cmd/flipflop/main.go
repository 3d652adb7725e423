// Command flipflop finds the configuration contradictions between Kargo and
// Argo CD before they bite. See `flipflop help`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/flipflop-dev/flipflop/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := cli.Run(ctx, os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(cli.ExitCode(err, os.Stderr))
}
