package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flipflop-dev/flipflop/internal/estate"
)

// shapeResult is row 7: one estate shape (internal/estate.Shape) at n and 2n,
// flipflop check end to end on each, interleaved run by run; the doubling
// ratio time(2n) ÷ time(n) is taken within each run.
type shapeResult struct {
	name     string
	n        int
	dirs     [2]string
	walls    [2][]float64
	ratios   []float64
	findings [2]int
	note     string
}

// parseShapes reads -shapes: "name:n,name:n".
func parseShapes(s string) ([]*shapeResult, error) {
	var out []*shapeResult
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		name, num, ok := strings.Cut(f, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n <= 0 || !slices.Contains(estate.Shapes, name) {
			return nil, fmt.Errorf("%q: want shape:n with shape one of %s", f, strings.Join(estate.Shapes, ", "))
		}
		out = append(out, &shapeResult{name: name, n: n, findings: [2]int{-1, -1}})
	}
	return out, nil
}

// runShapes writes each shape at n and 2n and measures them: run r times each
// n then 2n, one shape after the other, so the two sizes of a ratio see the
// same machine load.
func runShapes(c config, rep *report, tmp string) error {
	for _, s := range rep.shapes {
		for k, n := range []int{s.n, 2 * s.n} {
			files, err := estate.Shape(s.name, n)
			if err != nil {
				return err
			}
			s.dirs[k] = filepath.Join(tmp, fmt.Sprintf("shape-%s-%d", s.name, n))
			if err := estate.Write(s.dirs[k], files); err != nil {
				return err
			}
		}
	}
	for r := 0; r < c.shapeRuns; r++ {
		for _, s := range rep.shapes {
			if s.note != "" {
				continue
			}
			var w [2]float64
			for k := range 2 {
				args := []string{filepath.Join(c.bin, "flipflop"), "check", "-o", "json", "--fail-on", "never", s.dirs[k]}
				out, smp, err := timed(c, args)
				if err != nil {
					s.note = err.Error()
					break
				}
				var res struct {
					Findings []json.RawMessage `json:"findings"`
				}
				if err := json.Unmarshal(out, &res); err != nil {
					s.note = fmt.Sprintf("flipflop output: %v", err)
					break
				}
				s.findings[k] = len(res.Findings)
				w[k] = smp.wall.Seconds()
				s.walls[k] = append(s.walls[k], w[k])
			}
			if s.note == "" {
				s.ratios = append(s.ratios, w[1]/w[0])
				fmt.Fprintf(os.Stderr, "bench: shape %s %d→%d run %d: %s → %s (×%.2f)\n", s.name, s.n, 2*s.n, r+1, secs(w[0]), secs(w[1]), w[1]/w[0])
			}
		}
	}
	return nil
}

// shapesMarkdown is the section of row 7.
func (r *report) shapesMarkdown(c config) string {
	if len(r.shapes) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("7. **Doubling the shapes that were quadratic** (issue 15): estates built around one join each\n")
	p("(`internal/estate.Shape`): `selector`, n Stages reaching their Application through an\n")
	p("argocd-update label selector; `pattern`, n Stages naming Applications only a git-generator\n")
	p("ApplicationSet's name pattern produces; `merge`, one ApplicationSet merging two list generators of n\n")
	p("elements by key; `branch`, n Stages on one branch of one repository; `monorepo`, n/2 teams of two\n")
	p("Stages, every Application in one repository; `matrix`, one ApplicationSet whose matrix combines two lists\n")
	p("of n elements (n² Applications, past the bound: counted, not built; issue 20). `flipflop check -o json` at n and 2n, the two sizes\n")
	p("one after the other in each of %d run(s); the ratio is taken within each run, then the median.\n\n", c.shapeRuns)
	p("| shape | n → 2n | time at n | time at 2n | time(2n) ÷ time(n) | findings at n / 2n |\n|---|---|---|---|---|---|\n")
	for _, s := range r.shapes {
		if len(s.ratios) == 0 {
			p("| %s | %d → %d | — | — | — (%s) | — |\n", s.name, s.n, 2*s.n, s.note)
			continue
		}
		spread := ""
		if len(s.ratios) > 1 {
			spread = fmt.Sprintf(" (%s–%s)", ratio(slices.Min(s.ratios)), ratio(slices.Max(s.ratios)))
		}
		p("| %s | %d → %d | %s | %s | **%s**%s | %d / %d |\n", s.name, s.n, 2*s.n,
			secs(median(s.walls[0])), secs(median(s.walls[1])), ratio(median(s.ratios)), spread, s.findings[0], s.findings[1])
	}
	p("\n")
	return b.String()
}

// shapeTargets: issue 15's doubling target for each shape.
func (r *report) shapeTargets() []target {
	var ts []target
	for _, s := range r.shapes {
		v := median(s.ratios)
		ts = append(ts, target{fmt.Sprintf("doubling the %s estate (%d → %d) ≤ ×2.2", s.name, s.n, 2*s.n), ratio(v), verdict(v <= 2.2, len(s.ratios) > 0)})
	}
	return ts
}

// shapeProblems: for -smoke, a shape without a number or without the
// findings it was built with.
func (r *report) shapeProblems() []string {
	var ps []string
	for _, s := range r.shapes {
		if len(s.ratios) == 0 {
			ps = append(ps, fmt.Sprintf("shape %s: no number (%s)", s.name, s.note))
		}
	}
	return ps
}

// shapesOnlyMarkdown is the report of -only-shapes: row 7, its targets and the
// machine.
func (r *report) shapesOnlyMarkdown(c config) string {
	var b strings.Builder
	b.WriteString(r.shapesMarkdown(c))
	b.WriteString("| target | measured | met |\n|---|---|---|\n")
	for _, t := range r.shapeTargets() {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.name, t.measured, t.met)
	}
	m := r.machine
	fmt.Fprintf(&b, "\nMeasured %s, commit %s; load average before: %s, after: %s; took %s.\n",
		m.date, orDash(m.commit), m.loadBefore, r.loadAfter, secs(r.elapsed.Seconds()))
	return b.String()
}
