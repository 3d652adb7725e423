package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/flipflop-dev/flipflop/internal/estate"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is a number")
	}
}

func TestInts(t *testing.T) {
	got, err := ints("1000, 10000,,50000")
	if err != nil || len(got) != 3 || got[2] != 50000 {
		t.Errorf("ints: %v %v", got, err)
	}
	if _, err := ints("10k"); err == nil {
		t.Error("ints accepted 10k")
	}
}

// The report renders with measurements missing (a cell stopped at the cap, a
// size not measured, Gatekeeper not run) and judges only what was measured;
// the smoke check names what has no number.
func TestReportWithGaps(t *testing.T) {
	_, st := estate.Generate(estate.Options{Objects: 200, Seed: 1})
	s := &sizeResult{objects: 10000, stats: st, cells: map[string]*cell{}}
	for _, r := range processRows {
		s.cells[r] = &cell{}
	}
	s.cells[rowFlipflop].samples = []sample{{wall: 2 * time.Second, rssKB: 1 << 20, findings: 28}}
	s.cells[rowDecode].samples = []sample{{wall: time.Second, findings: st.Objects}}
	s.cells[rowConftest].stopped, s.cells[rowConftest].note = true, "stopped after the 5m0s cap"
	s.e2eOverDecode = []float64{2}
	rep := &report{sizes: []*sizeResult{s}}
	c := config{runs: 5, largeRuns: 3, largeAbove: 10000, pairwiseMax: 10000, gkApps: []int{20}, goBench: true}
	md := rep.markdown(c)
	for _, want := range []string{"**2.00 s** (1 run)", "— (stopped after the 5m0s cap)", "| `flipflop check` ≤ 3× the decode floor at 10k | 2.00× | yes |", "| peak memory at 50k ≤ 1 GiB | — | n/a |", "| time(200k) ÷ time(50k) ≤ 4.4 | not measured (make bench-all stops at 50k) | — |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	problems := strings.Join(rep.smokeProblems(c), "\n")
	s.cells[rowConftest].samples = []sample{{wall: time.Second, findings: 27}}
	problems += "\n" + strings.Join(rep.smokeProblems(c), "\n")
	for _, want := range []string{"conftest at 10000 objects: no number", "BenchmarkEvaluate at 10000 objects", "Gatekeeper at 20 Applications: no number", "flipflop found 28 findings, conftest 27"} {
		if !strings.Contains(problems, want) {
			t.Errorf("smoke problems lack %q:\n%s", want, problems)
		}
	}
}
