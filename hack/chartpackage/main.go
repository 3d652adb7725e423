// Command chartpackage packages charts/flipflop for a release: the chart with
// its version and appVersion set to the release's and the report CRDs of
// their releases added (package charts), as dist/flipflop-VERSION.tgz.
//
//	go run ./hack/chartpackage -version v1.2.3 -out dist
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/flipflop-dev/flipflop/charts"
)

func main() {
	version := flag.String("version", "", "the release (v1.2.3)")
	out := flag.String("out", "dist", "directory to write the archive to")
	dir := flag.String("chart", "charts/flipflop", "the chart")
	flag.Parse()
	p, err := charts.Package(*dir, *version, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartpackage:", err)
		os.Exit(1)
	}
	fmt.Println(p)
}
