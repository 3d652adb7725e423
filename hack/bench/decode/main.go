// Command decode is the floor of the end-to-end benchmark (make bench-all):
// it reads and decodes its inputs with flipflop's loader (loader.Loader, as
// flipflop check does) and evaluates nothing, then prints how many objects and
// load errors it found, as JSON.
//
//	decode PATH...
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: decode PATH...")
		os.Exit(2)
	}
	var l loader.Loader
	objs, errs := l.Load(os.Args[1:])
	out, _ := json.Marshal(map[string]int{"objects": len(objs), "errors": len(errs)})
	fmt.Println(string(out))
}
