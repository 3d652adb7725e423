package tests

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// Two runs on the same input print the same bytes in every format. The runs
// are independent processes: they go GOMAXPROCS at a time, and each format's
// two runs are compared once both have ended.
func TestDeterministicOutput(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	type run struct {
		out  string
		code int
		err  error
	}
	type pair struct {
		format, dir string
		runs        [2]run
	}
	var pairs []*pair
	for _, format := range []string{"text", "json", "sarif", "junit", "github", "gitlab"} {
		for _, dir := range []string{"examples", "policies/rules"} {
			pairs = append(pairs, &pair{format: format, dir: dir})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, p := range pairs {
		for i := range p.runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				out, _, code, err := runProcess("..", bin, "check", "-o", p.format, "--color", "never", "--fail-on", "never", p.dir)
				p.runs[i] = run{out, code, err}
			}()
		}
	}
	wg.Wait()
	for _, p := range pairs {
		first, second := p.runs[0], p.runs[1]
		if first.err != nil || second.err != nil {
			t.Errorf("%s on %s: %v", p.format, p.dir, fmt.Sprint(first.err, second.err))
			continue
		}
		if first.code != second.code || first.out != second.out {
			t.Errorf("%s on %s: two runs differ (exit %d vs %d)", p.format, p.dir, first.code, second.code)
		}
		if len(first.out) == 0 {
			t.Errorf("%s on %s: no output", p.format, p.dir)
		}
	}
}
