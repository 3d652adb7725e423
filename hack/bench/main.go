// Command bench is flipflop's measuring harness (make bench-all, make
// bench-smoke). It writes generated estates (internal/estate, seed 1) once to a
// temporary directory and measures, on those same files:
//
//  1. flipflop check end to end (the real binary, -o json --fail-on never):
//     wall time and peak RSS of the child process;
//  2. the decode floor: the same files read and decoded by flipflop's loader
//     (hack/bench/decode), nothing evaluated;
//  3. conftest test --combine with flipflop's conftest bundle;
//  4. conftest test --combine with a naive hand-written pairwise policy
//     (tests/bench/pairwise), at the small sizes only;
//  5. evaluation alone through the Go API (evaluator.BenchmarkEvaluate, -benchmem);
//  6. one Gatekeeper admission review of a Stage through gator's driver path
//     against its inventory-read floor (hack/bench/gatekeeper, its own module).
//
// Rows 1-4 are interleaved run by run, so each ratio (end to end over decode,
// conftest over flipflop) is taken within one run and then the median is
// reported. It prints one Markdown report (the tables, the targets and the
// machine) and, with -out, writes it to a file (docs/benchmarks.md).
//
// With -smoke it also checks that every cell produced a number and that
// flipflop and conftest found as many findings as each other, and exits 1
// otherwise. It never judges timings: the targets are reported, not asserted.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/estate"
)

type config struct {
	root string
	bin  string
	// what is measured, copied into the temporary directory at the start so
	// that a concurrent make build or make bundles cannot change it mid-run
	conftestBundle, pairwisePolicy, gkTemplate, gkConstraint, gkFloor, evaluatorTest string
	// gkAll is the copy of bundles/gatekeeper: every template and constraint.
	gkAll       string
	sizes       []int
	runs        int
	largeRuns   int
	largeAbove  int
	pairwiseMax int
	gkApps      []int
	timeout     time.Duration
	budget      time.Duration
	out         string
	smoke       bool
	keep        bool
	goBench     bool
	shapeRuns   int
	onlyShapes  bool
	shapes      []*shapeResult
}

func main() {
	var c config
	var sizes, gkApps, shapes string
	flag.StringVar(&c.root, "root", ".", "repository root (bundles/, tests/bench/, evaluator/)")
	flag.StringVar(&c.bin, "bin", ".bin", "directory holding flipflop, conftest, flipflop-bench-decode and flipflop-bench-gatekeeper")
	flag.StringVar(&sizes, "sizes", "1000,10000,50000", "estate sizes, in objects")
	flag.IntVar(&c.runs, "runs", 5, "runs per measurement up to -large-above objects")
	flag.IntVar(&c.largeRuns, "large-runs", 3, "runs per measurement above -large-above objects")
	flag.IntVar(&c.largeAbove, "large-above", 10000, "sizes above this get -large-runs")
	flag.IntVar(&c.pairwiseMax, "pairwise-max", 10000, "run the naive pairwise policy up to this size")
	flag.StringVar(&gkApps, "gatekeeper-apps", "2000,10000", "Gatekeeper inventory sizes, in Applications (taken from the smallest estate that has enough); empty to skip")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Minute, "cap on one run: a slower run is stopped and reported as such")
	flag.DurationVar(&c.budget, "budget", 150*time.Second, "time per measurement and size: after the first run, only as many runs as fit (at least one)")
	flag.StringVar(&c.out, "out", "", "also write the report to this file")
	flag.BoolVar(&c.smoke, "smoke", false, "check that every cell has a number and that flipflop and conftest agree; exit 1 if not")
	flag.BoolVar(&c.keep, "keep", false, "keep the generated estates")
	flag.BoolVar(&c.goBench, "go-bench", true, "run the Go API benchmark (row 5)")
	flag.StringVar(&shapes, "shapes", "selector:1000,pattern:2000,merge:1000,branch:2000,monorepo:4000,matrix:1000", "estate shapes measured at n and 2n (row 7, shape:n,...); empty to skip")
	flag.IntVar(&c.shapeRuns, "shape-runs", 3, "runs of each shape at n and 2n")
	flag.BoolVar(&c.onlyShapes, "only-shapes", false, "measure only the shapes (row 7)")
	flag.Parse()
	var err error
	if c.shapes, err = parseShapes(shapes); err != nil {
		fatal(fmt.Errorf("-shapes: %v", err))
	}
	if c.sizes, err = ints(sizes); err != nil || len(c.sizes) == 0 {
		fatal(fmt.Errorf("-sizes: %v", err))
	}
	slices.Sort(c.sizes)
	if c.gkApps, err = ints(gkApps); err != nil {
		fatal(fmt.Errorf("-gatekeeper-apps: %v", err))
	}
	rep, err := run(c)
	if err != nil {
		fatal(err)
	}
	text := ""
	if c.onlyShapes {
		text = rep.shapesOnlyMarkdown(c)
	} else {
		text = rep.markdown(c)
	}
	fmt.Print(text)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(text), 0o644); err != nil {
			fatal(err)
		}
		fmt.Fprintf(os.Stderr, "bench: wrote %s\n", c.out)
	}
	if c.smoke {
		if problems := rep.smokeProblems(c); len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintln(os.Stderr, "bench-smoke:", p)
			}
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "bench-smoke: every cell has a number; flipflop and conftest agree")
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ---- measurements -----------------------------------------------------------

// sample is one run of a child process.
type sample struct {
	wall     time.Duration
	rssKB    int64
	findings int
}

// cell is one measurement (row) at one size.
type cell struct {
	samples []sample
	limit   int    // runs to do; lowered by the budget after the first run
	stopped bool   // no more runs (timed out or failed)
	note    string // why there are fewer runs than asked, or none
}

func (c *cell) walls() []float64 {
	var v []float64
	for _, s := range c.samples {
		v = append(v, s.wall.Seconds())
	}
	return v
}

func (c *cell) rss() []float64 {
	var v []float64
	for _, s := range c.samples {
		v = append(v, float64(s.rssKB)*1024)
	}
	return v
}

func (c *cell) findings() int {
	if len(c.samples) == 0 {
		return -1
	}
	return c.samples[len(c.samples)-1].findings
}

// row names, in table order.
const (
	rowFlipflop = "flipflop"
	rowDecode   = "decode"
	rowConftest = "conftest"
	rowPairwise = "pairwise"
)

var processRows = []string{rowDecode, rowFlipflop, rowConftest, rowPairwise}

type sizeResult struct {
	objects int
	stats   estate.Stats
	dir     string
	cells   map[string]*cell
	// ratios taken within one run (iteration)
	e2eOverDecode        []float64
	conftestOverFlipflop []float64
	conftestOverDecode   []float64
	rules                map[string]int // flipflop's findings by rule (last run)
	goBench              *goBench
	// evalsPerObject is the policies' expression evaluations per object
	// (OPA's profiler; evaluator.EvaluationBudget holds it at 2k); 0 when not
	// measured (over maxProfiled objects).
	evalsPerObject float64
}

// maxProfiled is the largest estate whose evaluations are counted: the
// profiler roughly triples an evaluation's time.
const maxProfiled = 10000

// evaluationsPerObject counts the policies' evaluations over the estate's
// objects with OPA's profiler (exact: the figure TestEvaluationBudget holds).
func evaluationsPerObject(files []estate.File) (float64, error) {
	var objs []evaluator.Object
	for _, f := range files {
		o, errs := loader.LoadBytes(f.Path, f.Content)
		if len(errs) > 0 {
			return 0, fmt.Errorf("%s: %s", errs[0].Path, errs[0].Message)
		}
		objs = append(objs, o...)
	}
	e, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		return 0, err
	}
	n, err := e.Evaluations(context.Background(), objs)
	if err != nil {
		return 0, err
	}
	return float64(n) / float64(len(objs)), nil
}

type goBench struct {
	nsPerOp, bytesPerOp, allocsPerOp []float64
	note                             string
}

type gkResult struct {
	Applications int       `json:"applications"`
	Objects      int       `json:"objects"`
	Stage        string    `json:"stage"`
	Violations   int       `json:"violations"`
	FloorCount   string    `json:"floor_count"`
	ReviewMS     []float64 `json:"review_ms"`
	FloorMS      []float64 `json:"floor_ms"`
	Ratios       []float64 `json:"ratios"`
	AddDataMS    float64   `json:"add_data_ms"`
	TimedOut     bool      `json:"timed_out"`
	// Config names what was reviewed (gkConfigs); set by runGatekeeper.
	Config string `json:"-"`
}

type report struct {
	sizes     []*sizeResult
	gk        []gkResult
	gkConfigs []gkConfig
	gkNote    string
	gkEstate  int
	machine   machine
	start     time.Time
	elapsed   time.Duration
	loadAfter string
	shapes    []*shapeResult
}

func run(c config) (*report, error) {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "flipflop-bench-")
	if err != nil {
		return nil, err
	}
	if c.keep {
		fmt.Fprintf(os.Stderr, "bench: estates kept in %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	if err := snapshot(&c, tmp); err != nil {
		return nil, err
	}
	rep := &report{start: start, machine: probeMachine(c), shapes: c.shapes}
	if c.onlyShapes {
		if err := runShapes(c, rep, tmp); err != nil {
			return nil, err
		}
		rep.elapsed = time.Since(rep.start)
		rep.loadAfter = loadavg()
		return rep, nil
	}

	// The estates, written once.
	for _, n := range c.sizes {
		files, st := estate.Generate(estate.Options{Objects: n, Seed: 1})
		dir := filepath.Join(tmp, fmt.Sprintf("estate-%d", n))
		if err := estate.Write(dir, files); err != nil {
			return nil, err
		}
		s := &sizeResult{objects: n, stats: st, dir: dir, cells: map[string]*cell{}}
		for _, r := range processRows {
			s.cells[r] = &cell{}
		}
		if n <= maxProfiled {
			if s.evalsPerObject, err = evaluationsPerObject(files); err != nil {
				return nil, err
			}
		}
		rep.sizes = append(rep.sizes, s)
		fmt.Fprintf(os.Stderr, "bench: estate %d: %d objects in %d files (%.1f MB)\n", n, st.Objects, st.Files, float64(st.Bytes)/1e6)
	}

	// One untimed run of each program on the smallest estate: binaries in
	// the page cache, no first-run outlier.
	first := rep.sizes[0]
	for _, r := range processRows {
		if r == rowPairwise && first.objects > c.pairwiseMax {
			continue
		}
		if _, err := runRow(c, r, first); err != nil {
			fmt.Fprintf(os.Stderr, "bench: warm-up %s: %v\n", r, err)
		}
	}

	var prev *sizeResult
	for _, s := range rep.sizes {
		measureSize(c, s, prev)
		prev = s
	}
	if err := runShapes(c, rep, tmp); err != nil {
		return nil, err
	}
	if c.goBench {
		runGoBench(c, rep)
	}
	if len(c.gkApps) > 0 {
		runGatekeeper(c, rep, tmp)
	}
	rep.elapsed = time.Since(rep.start)
	rep.loadAfter = loadavg()
	return rep, nil
}

// snapshot copies what is measured into tmp and points c at the copies: the
// binaries, the policies, and the evaluator's test binary compiled now.
func snapshot(c *config, tmp string) error {
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	progs := []string{"flipflop", "conftest", "flipflop-bench-decode"}
	if len(c.gkApps) > 0 {
		progs = append(progs, "flipflop-bench-gatekeeper")
	}
	if c.onlyShapes {
		progs = []string{"flipflop"}
	}
	for _, b := range progs {
		if err := copyFile(filepath.Join(c.bin, b), filepath.Join(bin, b), 0o755); err != nil {
			return fmt.Errorf("%v (make bench-programs builds what is missing)", err)
		}
	}
	c.bin = bin
	policy := filepath.Join(tmp, "policy")
	copies := []struct{ from, to string }{
		{"bundles/conftest", "conftest"},
		{"tests/bench/pairwise", "pairwise"},
		{"hack/bench/gatekeeper/floor-template.yaml", "gatekeeper/floor-template.yaml"},
		{"bundles/gatekeeper", "gatekeeper-all"},
	}
	for _, cp := range copies {
		if err := copyTree(filepath.Join(c.root, cp.from), filepath.Join(policy, cp.to)); err != nil {
			return err
		}
	}
	c.conftestBundle = filepath.Join(policy, "conftest")
	c.pairwisePolicy = filepath.Join(policy, "pairwise")
	c.gkAll = filepath.Join(policy, "gatekeeper-all")
	c.gkTemplate = filepath.Join(c.gkAll, "template.yaml")
	c.gkConstraint = filepath.Join(c.gkAll, "constraint.yaml")
	c.gkFloor = filepath.Join(policy, "gatekeeper/floor-template.yaml")
	if c.goBench {
		c.evaluatorTest = filepath.Join(bin, "evaluator.test")
		build := exec.Command("go", "test", "-c", "-o", c.evaluatorTest, "./evaluator/")
		build.Dir, build.Stderr = c.root, os.Stderr
		fmt.Fprintln(os.Stderr, "bench: go test -c ./evaluator/")
		if err := build.Run(); err != nil {
			return fmt.Errorf("building the evaluator benchmark: %w", err)
		}
	}
	return nil
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, mode)
}

// copyTree copies a file, or a directory's files, recursively.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		return copyFile(p, filepath.Join(to, rel), 0o644)
	})
}

func (c config) runsFor(n int) int {
	if n > c.largeAbove {
		return c.largeRuns
	}
	return c.runs
}

// measureSize runs rows 1-4 at one size, interleaved run by run.
func measureSize(c config, s *sizeResult, prev *sizeResult) {
	runs := c.runsFor(s.objects)
	for _, r := range processRows {
		cl := s.cells[r]
		cl.limit = runs
		if r == rowPairwise && s.objects > c.pairwiseMax {
			cl.stopped, cl.note = true, fmt.Sprintf("not run above %d objects", c.pairwiseMax)
			continue
		}
		// Skip what cannot finish: even growing linearly from the last size,
		// one run would exceed the cap.
		if prev != nil {
			p := prev.cells[r]
			if w := p.walls(); len(w) > 0 {
				if est := median(w) * float64(s.objects) / float64(prev.objects); est > c.timeout.Seconds() {
					cl.stopped, cl.note = true, fmt.Sprintf("skipped: at least %s expected (%s at %s, linear), over the %s cap", secs(est), secs(median(w)), kObjects(prev.objects), c.timeout)
				}
			} else if p.stopped && p.note != "" && !strings.HasPrefix(p.note, "not run") {
				cl.stopped, cl.note = true, "skipped: "+kObjects(prev.objects)+" did not finish"
			}
		}
	}
	for i := 0; i < runs; i++ {
		var iter = map[string]time.Duration{}
		for _, r := range processRows {
			cl := s.cells[r]
			if cl.stopped || len(cl.samples) >= cl.limit {
				continue
			}
			fmt.Fprintf(os.Stderr, "bench: %s %s run %d/%d ... ", r, kObjects(s.objects), i+1, cl.limit)
			smp, err := runRow(c, r, s)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				cl.stopped, cl.note = true, err.Error()
				continue
			}
			fmt.Fprintf(os.Stderr, "%s, %s\n", secs(smp.wall.Seconds()), mib(float64(smp.rssKB)*1024))
			cl.samples = append(cl.samples, smp)
			iter[r] = smp.wall
			if len(cl.samples) == 1 && runs > 1 {
				if fit := int(c.budget / smp.wall); fit < runs {
					cl.limit = max(1, fit)
					cl.note = fmt.Sprintf("%d of %d runs: the %s budget", cl.limit, runs, c.budget)
				}
			}
		}
		if d, f := iter[rowDecode], iter[rowFlipflop]; d > 0 && f > 0 {
			s.e2eOverDecode = append(s.e2eOverDecode, f.Seconds()/d.Seconds())
		}
		if f, ct := iter[rowFlipflop], iter[rowConftest]; f > 0 && ct > 0 {
			s.conftestOverFlipflop = append(s.conftestOverFlipflop, ct.Seconds()/f.Seconds())
		}
		if d, ct := iter[rowDecode], iter[rowConftest]; d > 0 && ct > 0 {
			s.conftestOverDecode = append(s.conftestOverDecode, ct.Seconds()/d.Seconds())
		}
	}
}

// runRow runs one measured program once on the estate of s.
func runRow(c config, row string, s *sizeResult) (sample, error) {
	var args []string
	switch row {
	case rowFlipflop:
		args = []string{filepath.Join(c.bin, "flipflop"), "check", "-o", "json", "--fail-on", "never", s.dir}
	case rowDecode:
		args = []string{filepath.Join(c.bin, "flipflop-bench-decode"), s.dir}
	case rowConftest:
		args = []string{filepath.Join(c.bin, "conftest"), "test", "--combine", "--namespace", "flipflop", "-p", c.conftestBundle, "--no-fail", "-o", "json", s.dir}
	case rowPairwise:
		args = []string{filepath.Join(c.bin, "conftest"), "test", "--combine", "--namespace", "pairwise", "-p", c.pairwisePolicy, "--no-fail", "-o", "json", s.dir}
	}
	out, smp, err := timed(c, args)
	if err != nil {
		return smp, err
	}
	switch row {
	case rowFlipflop:
		var r struct {
			Findings []struct {
				Rule   string `json:"rule"`
				Waived any    `json:"waived"`
			} `json:"findings"`
			Errors []any `json:"errors"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			return smp, fmt.Errorf("flipflop output: %w", err)
		}
		if len(r.Errors) > 0 {
			return smp, fmt.Errorf("flipflop: %d load errors", len(r.Errors))
		}
		s.rules = map[string]int{}
		for _, f := range r.Findings {
			if f.Waived == nil {
				smp.findings++
				s.rules[f.Rule]++
			}
		}
	case rowDecode:
		var r struct{ Objects, Errors int }
		if err := json.Unmarshal(out, &r); err != nil {
			return smp, fmt.Errorf("decode output: %w", err)
		}
		if r.Errors > 0 || r.Objects != s.stats.Objects {
			return smp, fmt.Errorf("decode: %d objects, %d errors; want %d objects", r.Objects, r.Errors, s.stats.Objects)
		}
		smp.findings = r.Objects
	case rowConftest, rowPairwise:
		var r []struct {
			Failures []json.RawMessage `json:"failures"`
			Warnings []json.RawMessage `json:"warnings"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			return smp, fmt.Errorf("conftest output: %w", err)
		}
		for _, x := range r {
			smp.findings += len(x.Failures) + len(x.Warnings)
		}
	}
	return smp, nil
}

// gnuTime is GNU time, which reports the peak RSS of the command it forks.
// getrusage of a child started from Go is not enough on its own: Go starts
// children with vfork, and Linux carries the parent's high-water RSS into the
// child's maxrss across execve, so a small child would report at least the
// harness's own peak. Without GNU time that is what is reported (and said).
const gnuTime = "/usr/bin/time"

func rssMethod() string {
	if _, err := os.Stat(gnuTime); err == nil {
		return "GNU time (`/usr/bin/time -f %M`)"
	}
	return "getrusage of the child (no /usr/bin/time here: small children report at least the harness's own peak RSS)"
}

// timed runs a child process from the repository root and measures its wall
// time and peak RSS.
func timed(c config, args []string) ([]byte, sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var rssFile string
	if _, err := os.Stat(gnuTime); err == nil {
		f, err := os.CreateTemp("", "flipflop-bench-rss-")
		if err != nil {
			return nil, sample{}, err
		}
		f.Close()
		rssFile = f.Name()
		defer os.Remove(rssFile)
		args = append([]string{gnuTime, "-f", "%M", "-o", rssFile}, args...)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = c.root
	// Its own process group, so that the cap stops the measured program and
	// not only GNU time.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	smp := sample{wall: time.Since(start)}
	if rssFile != "" {
		b, _ := os.ReadFile(rssFile)
		// GNU time writes "Command exited with non-zero status N" first on failure.
		f := strings.Fields(string(b))
		if len(f) > 0 {
			smp.rssKB, _ = strconv.ParseInt(f[len(f)-1], 10, 64)
		}
	} else if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			smp.rssKB = ru.Maxrss
		}
	}
	if ctx.Err() != nil {
		return nil, smp, fmt.Errorf("stopped after the %s cap", c.timeout)
	}
	if err != nil {
		name := args[0]
		if rssFile != "" {
			name = args[5]
		}
		return nil, smp, fmt.Errorf("%s: %v: %s", filepath.Base(name), err, firstLine(stderr.String()))
	}
	return stdout.Bytes(), smp, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// ---- row 5: the Go API --------------------------------------------------------

var benchLine = regexp.MustCompile(`^BenchmarkEvaluate/objects=(\d+)(?:-\d+)?\s+\d+\s+(.*)$`)

// runGoBench runs BenchmarkEvaluate (the test binary compiled by snapshot)
// at each size: -count is the runs asked for, fewer when the end-to-end time
// at that size says they would not fit the budget; one iteration per count
// (-benchtime 1x) when one evaluation takes seconds.
func runGoBench(c config, rep *report) {
	test := c.evaluatorTest
	for _, s := range rep.sizes {
		g := &goBench{}
		s.goBench = g
		runs := c.runsFor(s.objects)
		est := 0.0
		if w := s.cells[rowFlipflop].walls(); len(w) > 0 {
			est = median(w)
		}
		if est > c.timeout.Seconds() || (len(s.cells[rowFlipflop].walls()) == 0 && s.cells[rowFlipflop].stopped) {
			g.note = "skipped: end to end did not fit the cap"
			continue
		}
		count, benchtime := runs, "1s"
		if est > 1 {
			benchtime = "1x"
			if fit := int(c.budget.Seconds() / est); fit < runs {
				count = max(1, fit)
				g.note = fmt.Sprintf("%d of %d runs: the %s budget", count, runs, c.budget)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout*time.Duration(count+1))
		cmd := exec.CommandContext(ctx, test, "-test.run=^$", "-test.bench=^BenchmarkEvaluate$", "-test.benchmem",
			"-test.count="+strconv.Itoa(count), "-test.benchtime="+benchtime, "-test.timeout=0")
		cmd.Dir = filepath.Join(c.root, "evaluator")
		cmd.Env = append(os.Environ(), "FLIPFLOP_BENCH_SIZES="+strconv.Itoa(s.objects))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		fmt.Fprintf(os.Stderr, "bench: BenchmarkEvaluate %s, -count %d -benchtime %s ... ", kObjects(s.objects), count, benchtime)
		err := cmd.Run()
		cancel()
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			m := benchLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			f := strings.Fields(m[2])
			for i := 0; i+1 < len(f); i += 2 {
				v, perr := strconv.ParseFloat(f[i], 64)
				if perr != nil {
					continue
				}
				switch f[i+1] {
				case "ns/op":
					g.nsPerOp = append(g.nsPerOp, v)
				case "B/op":
					g.bytesPerOp = append(g.bytesPerOp, v)
				case "allocs/op":
					g.allocsPerOp = append(g.allocsPerOp, v)
				}
			}
		}
		if err != nil || len(g.nsPerOp) == 0 {
			g.note = fmt.Sprintf("failed: %v: %s", err, firstLine(out.String()))
			fmt.Fprintln(os.Stderr, g.note)
			continue
		}
		fmt.Fprintf(os.Stderr, "%s\n", secs(median(g.nsPerOp)/1e9))
	}
}

// ---- row 6: Gatekeeper ----------------------------------------------------------

// gkConfig is one Gatekeeper measurement: which constraints review a Stage of
// which estate, and how (the bench's -form).
type gkConfig struct {
	name                   string
	templates, constraints []string
	monorepo               bool   // the monorepo shape instead of the benchmark estate
	violations             bool   // the reviewed Stage must have a violation
	form                   string // audit (default), status, update
	status                 int    // entries of the status every inventory object gets (the bench's -status)
}

// The configurations row 6 measures: the shipped constraint (the one
// template, every rule) in audit form, as an admission UPDATE the model
// reads, as a status write, and on the monorepo shape, where every
// Application is in one repository (issue 21's hardest case for a review's
// neighbourhood); and the deny and warn pair (two constraints of the same
// template: Gatekeeper evaluates each on its own). One more gives every
// synced object a 50-entry status, as a cluster's live objects carry and the
// files do not: a review must not convert what it does not test
// (docs/performance.md, step 4c).
func gkConfigs(c config) ([]gkConfig, error) {
	one := []string{c.gkTemplate}
	oneC := []string{c.gkConstraint}
	pairC := []string{filepath.Join(c.gkAll, "deny-and-warn", "deny.yaml"), filepath.Join(c.gkAll, "deny-and-warn", "warn.yaml")}
	for _, f := range append(append(slices.Clone(one), oneC...), pairC...) {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	const shipped, pair = "the shipped constraint", "the deny and warn pair"
	return []gkConfig{
		{name: shipped, templates: one, constraints: oneC, violations: true},
		{name: shipped + ", UPDATE adding a label", templates: one, constraints: oneC, form: "update"},
		{name: shipped + ", status write", templates: one, constraints: oneC, form: "status"},
		{name: shipped + ", every synced object with a 50-entry status", templates: one, constraints: oneC, violations: true, status: 50},
		{name: shipped + ", monorepo shape", templates: one, constraints: oneC, monorepo: true},
		{name: pair, templates: one, constraints: pairC, violations: true},
		{name: pair + ", monorepo shape", templates: one, constraints: pairC, monorepo: true},
	}, nil
}

func runGatekeeper(c config, rep *report, tmp string) {
	bin := filepath.Join(c.bin, "flipflop-bench-gatekeeper")
	if _, err := os.Stat(bin); err != nil {
		rep.gkNote = err.Error()
		return
	}
	need := slices.Max(c.gkApps)
	var from *sizeResult
	for _, s := range rep.sizes {
		if s.stats.Applications >= need {
			from = s
			break
		}
	}
	if from == nil {
		rep.gkNote = fmt.Sprintf("no estate holds %d Applications", need)
		return
	}
	rep.gkEstate = from.objects
	configs, err := gkConfigs(c)
	if err != nil {
		rep.gkNote = err.Error()
		return
	}
	// The monorepo shape at n holds n Applications (n/2 teams of two Stages).
	mono := filepath.Join(tmp, "gatekeeper-monorepo")
	files, err := estate.Shape("monorepo", need)
	if err == nil {
		err = estate.Write(mono, files)
	}
	if err != nil {
		rep.gkNote = fmt.Sprintf("monorepo estate: %v", err)
		return
	}
	var apps []string
	for _, n := range c.gkApps {
		apps = append(apps, strconv.Itoa(n))
	}
	runs := c.runs
	for _, g := range configs {
		dir := from.dir
		if g.monorepo {
			dir = mono
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout*time.Duration(len(apps)*(runs+3)))
		cmd := exec.CommandContext(ctx, bin, "-dir", dir, "-apps", strings.Join(apps, ","), "-runs", strconv.Itoa(runs),
			"-timeout", c.timeout.String(), "-budget", c.budget.String(),
			"-template", strings.Join(g.templates, ","), "-constraint", strings.Join(g.constraints, ","), "-floor", c.gkFloor,
			"-form", cmp.Or(g.form, "audit"), "-status", strconv.Itoa(g.status))
		cmd.Dir = c.root
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
		fmt.Fprintf(os.Stderr, "bench: Gatekeeper review, %s, %s Applications ...\n", g.name, strings.Join(apps, ", "))
		err := cmd.Run()
		cancel()
		dec := json.NewDecoder(&stdout)
		for {
			var res gkResult
			if dec.Decode(&res) != nil {
				break
			}
			res.Config = g.name
			rep.gk = append(rep.gk, res)
		}
		if err != nil {
			rep.gkNote += fmt.Sprintf("gatekeeper bench (%s): %v. ", g.name, err)
		}
	}
	rep.gkConfigs = configs
}

// ---- the machine ----------------------------------------------------------------

type machine struct {
	cpu, memory, goVersion, loadBefore, date, commit string
	cores                                            int
	opa                                              map[string]string
}

func probeMachine(c config) machine {
	m := machine{
		cores:      runtime.NumCPU(),
		goVersion:  runtime.Version(),
		loadBefore: loadavg(),
		date:       time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		opa:        map[string]string{},
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m.memory = fmt.Sprintf("%.1f GiB", kb/(1<<20))
			}
		}
	}
	if out, err := exec.Command("go", "version", "-m", filepath.Join(c.bin, "flipflop")).Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "dep" && f[1] == "github.com/open-policy-agent/opa" {
				m.opa["flipflop"] = f[2]
			}
		}
	}
	if out, err := exec.Command(filepath.Join(c.bin, "conftest"), "--version").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "OPA: "); ok {
				m.opa["conftest"] = "v" + strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "Conftest: "); ok && strings.TrimSpace(v) != "dev" {
				m.opa["conftest version"] = strings.TrimSpace(v)
			}
		}
	}
	if out, err := exec.Command(filepath.Join(c.bin, "flipflop-bench-gatekeeper"), "-version").Output(); err == nil {
		m.opa["gatekeeper"] = strings.TrimSpace(string(out))
	}
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = c.root
	if out, err := cmd.Output(); err == nil {
		m.commit = strings.TrimSpace(string(out))
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// ---- numbers ---------------------------------------------------------------------

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func secs(s float64) string {
	switch {
	case math.IsNaN(s):
		return "—"
	case s < 0.01:
		return fmt.Sprintf("%.1f ms", s*1000)
	case s < 1:
		return fmt.Sprintf("%.0f ms", s*1000)
	case s < 10:
		return fmt.Sprintf("%.2f s", s)
	default:
		return fmt.Sprintf("%.1f s", s)
	}
}

func mib(b float64) string {
	if math.IsNaN(b) {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", b/(1<<20))
}

func ratio(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", r)
}

func kObjects(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// ---- the report -----------------------------------------------------------------

func (r *report) size(n int) *sizeResult {
	for _, s := range r.sizes {
		if s.objects == n {
			return s
		}
	}
	return nil
}

func (r *report) gkAt(config string, apps int) *gkResult {
	for i := range r.gk {
		if r.gk[i].Config == config && r.gk[i].Applications == apps {
			return &r.gk[i]
		}
	}
	return nil
}

// wallCell is a cell's median wall time, runs, and spread.
func wallCell(c *cell) string {
	w := c.walls()
	if len(w) == 0 {
		if c.note != "" {
			return "— (" + c.note + ")"
		}
		return "—"
	}
	s := fmt.Sprintf("**%s**", secs(median(w)))
	if len(w) > 1 {
		s += fmt.Sprintf(" (%s–%s, %d runs)", secs(slices.Min(w)), secs(slices.Max(w)), len(w))
	} else {
		s += " (1 run)"
	}
	return s
}

func rssCell(c *cell) string {
	v := c.rss()
	if len(v) == 0 {
		return "—"
	}
	return mib(median(v))
}

func (r *report) markdown(c config) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	title := "Benchmarks"
	if c.smoke {
		title = "Benchmark smoke run (sizes too small to mean anything)"
	}
	p("# %s\n\n", title)
	p("<!-- Generated by `make bench-all` (go run ./hack/bench); do not edit by hand. -->\n\n")
	p("Generated estates (`internal/estate`, seed 1: Applications, Stages with inline steps and with\n")
	p("PromotionTasks, ApplicationSets, 25 documents a file, 50 files a directory), written once and\n")
	p("measured by every row. Times are medians of the runs (range and runs in brackets); ratios are\n")
	p("taken within each run (the rows are interleaved run by run) and then the median is reported.\n")
	p("Peak RSS is the child process's, measured with %s. The binaries and policies\n", rssMethod())
	p("measured are copied when the run starts, so a concurrent build cannot change them midway. The\n")
	p("machine is shared: see the load average below, and trust ratios more than absolute times.\n\n")

	// estate table
	p("| estate | ")
	for _, s := range r.sizes {
		p("%s | ", kObjects(s.objects))
	}
	p("\n|---|")
	for range r.sizes {
		p("---|")
	}
	p("\n")
	line := func(name string, f func(s *sizeResult) string) {
		p("| %s | ", name)
		for _, s := range r.sizes {
			p("%s | ", f(s))
		}
		p("\n")
	}
	line("objects (Applications / Stages)", func(s *sizeResult) string {
		return fmt.Sprintf("%d (%d / %d)", s.stats.Objects, s.stats.Applications, s.stats.Stages)
	})
	line("files, size", func(s *sizeResult) string {
		return fmt.Sprintf("%d, %.1f MB", s.stats.Files, float64(s.stats.Bytes)/1e6)
	})
	line("policy evaluations per object (budget "+strconv.Itoa(evaluator.EvaluationBudget)+" at 2k)", func(s *sizeResult) string {
		if s.evalsPerObject == 0 {
			return "—"
		}
		return fmt.Sprintf("%.0f", s.evalsPerObject)
	})
	line("1. `flipflop check -o json` end to end", func(s *sizeResult) string { return wallCell(s.cells[rowFlipflop]) })
	line("&nbsp;&nbsp;&nbsp;peak RSS", func(s *sizeResult) string { return rssCell(s.cells[rowFlipflop]) })
	line("2. decode floor (`loader.Loader.Load`)", func(s *sizeResult) string { return wallCell(s.cells[rowDecode]) })
	line("&nbsp;&nbsp;&nbsp;peak RSS", func(s *sizeResult) string { return rssCell(s.cells[rowDecode]) })
	line("&nbsp;&nbsp;&nbsp;end to end ÷ decode floor", func(s *sizeResult) string { return ratio(median(s.e2eOverDecode)) })
	line("3. `conftest test --combine`, flipflop's bundle", func(s *sizeResult) string { return wallCell(s.cells[rowConftest]) })
	line("&nbsp;&nbsp;&nbsp;peak RSS", func(s *sizeResult) string { return rssCell(s.cells[rowConftest]) })
	line("&nbsp;&nbsp;&nbsp;conftest ÷ flipflop", func(s *sizeResult) string { return ratio(median(s.conftestOverFlipflop)) })
	line("4. `conftest test --combine`, naive pairwise policy", func(s *sizeResult) string { return wallCell(s.cells[rowPairwise]) })
	line("&nbsp;&nbsp;&nbsp;peak RSS", func(s *sizeResult) string { return rssCell(s.cells[rowPairwise]) })
	line("5. Go API: `BenchmarkEvaluate` time/op", func(s *sizeResult) string {
		g := s.goBench
		if g == nil || len(g.nsPerOp) == 0 {
			if g != nil && g.note != "" {
				return "— (" + g.note + ")"
			}
			return "—"
		}
		out := fmt.Sprintf("**%s** (%d runs)", secs(median(g.nsPerOp)/1e9), len(g.nsPerOp))
		if len(g.nsPerOp) == 1 {
			out = fmt.Sprintf("**%s** (1 run)", secs(median(g.nsPerOp)/1e9))
		}
		return out
	})
	line("&nbsp;&nbsp;&nbsp;B/op, allocs/op", func(s *sizeResult) string {
		g := s.goBench
		if g == nil || len(g.bytesPerOp) == 0 {
			return "—"
		}
		return fmt.Sprintf("%s, %.2fM", mib(median(g.bytesPerOp)), median(g.allocsPerOp)/1e6)
	})
	line("findings: flipflop / conftest / pairwise denials", func(s *sizeResult) string {
		f := func(cl *cell) string {
			if n := cl.findings(); n >= 0 {
				return strconv.Itoa(n)
			}
			return "—"
		}
		return fmt.Sprintf("%s / %s / %s", f(s.cells[rowFlipflop]), f(s.cells[rowConftest]), f(s.cells[rowPairwise]))
	})
	line("findings the estate was built with", func(s *sizeResult) string {
		want := s.stats.Findings()
		total := 0
		for _, n := range want {
			total += n
		}
		got := ""
		if s.rules != nil && !mapsEqual(s.rules, want) {
			got = fmt.Sprintf(" (flipflop by rule: %v)", s.rules)
		}
		return strconv.Itoa(total) + got
	})
	var notes []string
	rowNames := map[string]string{rowFlipflop: "flipflop check", rowDecode: "decode floor", rowConftest: "conftest", rowPairwise: "pairwise policy"}
	for _, s := range r.sizes {
		for _, row := range processRows {
			if cl := s.cells[row]; cl.note != "" && len(cl.samples) > 0 {
				notes = append(notes, fmt.Sprintf("%s at %s: %s", rowNames[row], kObjects(s.objects), cl.note))
			}
		}
		if g := s.goBench; g != nil && g.note != "" && len(g.nsPerOp) > 0 {
			notes = append(notes, fmt.Sprintf("BenchmarkEvaluate at %s: %s", kObjects(s.objects), g.note))
		}
	}
	if len(notes) > 0 {
		p("\nFewer runs than asked: %s.\n", strings.Join(notes, "; "))
	}
	p("\n")

	// Gatekeeper table
	p("6. **Gatekeeper**: one admission review of a Stage (`Review`, through gator's driver: the\n")
	p("frameworks constraint client with the Rego driver, %s), in audit form\n", orDash(r.machine.opa["gatekeeper"]))
	p("(no admission request, so every constraint runs its rule), against the floor: the same review\n")
	p("with a template that only reads `data.inventory` and counts the Applications\n")
	p("(`hack/bench/gatekeeper/floor-template.yaml`). Reviewed by `bundles/gatekeeper`'s template\n")
	p("and its shipped constraint (`constraint.yaml`, every rule), then by the deny and warn pair\n")
	p("(`deny-and-warn/`: Gatekeeper reviews each matching constraint on every request). The\n")
	p("inventory is the first files of the %s estate up to the given number of Applications, with\n", kObjects(r.gkEstate))
	p("the Stages, ApplicationSets and PromotionTasks beside them; or the `monorepo` shape (every\n")
	p("Application in one repository, each Stage on a branch of its own: clean).\n\n")
	p("| reviewed by | Applications (inventory objects) | review | inventory floor | review ÷ floor | runs | violations | adding the inventory |\n")
	p("|---|---|---|---|---|---|---|---|\n")
	for _, g := range r.gk {
		note := ""
		if g.TimedOut {
			note = " (stopped: cap)"
		}
		if len(g.ReviewMS) == 0 {
			p("| %s | %d (%d) | — | — | — | 0%s | — | %s |\n", g.Config, g.Applications, g.Objects, note, secs(g.AddDataMS/1000))
			continue
		}
		spread := ""
		if len(g.ReviewMS) > 1 {
			spread = fmt.Sprintf(" (%s–%s)", secs(slices.Min(g.ReviewMS)/1000), secs(slices.Max(g.ReviewMS)/1000))
		}
		p("| %s | %d (%d) | **%s**%s | %s | **%s** | %d%s | %d (Stage %s) | %s |\n", g.Config, g.Applications, g.Objects,
			secs(median(g.ReviewMS)/1000), spread,
			secs(median(g.FloorMS)/1000), ratio(median(g.Ratios)), len(g.ReviewMS), note, g.Violations, g.Stage, secs(g.AddDataMS/1000))
	}
	if r.gkNote != "" {
		p("\n%s\n", r.gkNote)
	}
	p("\n")

	p("%s", r.shapesMarkdown(c))
	if !c.smoke {
		p("## Targets (issue 21)\n\n")
		p("| target | measured | met |\n|---|---|---|\n")
		for _, t := range append(r.targets(), r.shapeTargets()...) {
			p("| %s | %s | %s |\n", t.name, t.measured, t.met)
		}
		p("\n")
	}

	// machine
	m := r.machine
	p("## Machine and versions\n\n")
	p("- Date: %s; commit %s\n", m.date, orDash(m.commit))
	p("- CPU: %s, %d cores; memory %s\n", orDash(m.cpu), m.cores, orDash(m.memory))
	p("- Load average (1, 5, 15 min) before: %s; after: %s\n", m.loadBefore, r.loadAfter)
	p("- Go: %s\n", m.goVersion)
	p("- OPA: flipflop %s; conftest %s", orDash(m.opa["flipflop"]), orDash(m.opa["conftest"]))
	if v := m.opa["conftest version"]; v != "" {
		p(" (conftest %s)", v)
	}
	p("; Gatekeeper bench: %s\n", orDash(m.opa["gatekeeper"]))
	p("- Settings: %d run(s) a measurement up to %s objects, %d above; one run is capped at %s, and a measurement at a size gets only the runs that fit in %s\n",
		c.runs, kObjects(c.largeAbove), c.largeRuns, c.timeout, c.budget)
	p("- The whole run took %s\n", secs(r.elapsed.Seconds()))
	p("\nRegenerate with `make bench-all` (several minutes); `make bench-smoke` is the quick CI check.\n")
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func mapsEqual(a, b map[string]int) bool {
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

type target struct{ name, measured, met string }

func verdict(ok bool, known bool) string {
	switch {
	case !known:
		return "n/a"
	case ok:
		return "yes"
	default:
		return "**no**"
	}
}

func (r *report) targets() []target {
	var ts []target
	flip := func(n int) []float64 {
		if s := r.size(n); s != nil {
			return s.cells[rowFlipflop].walls()
		}
		return nil
	}
	ev := math.NaN()
	if s := r.size(10000); s != nil && s.evalsPerObject > 0 {
		ev = s.evalsPerObject
	}
	ts = append(ts, target{"policy evaluations per object ≤ 100 (10k estate; the budget test holds the 2k figure)", fmt.Sprintf("%.0f", ev), verdict(ev <= 100, !math.IsNaN(ev))})
	for _, n := range []int{10000, 50000} {
		v := math.NaN()
		if s := r.size(n); s != nil {
			v = median(s.e2eOverDecode)
		}
		ts = append(ts, target{fmt.Sprintf("`flipflop check` ≤ 3× the decode floor at %s", kObjects(n)), ratio(v), verdict(v <= 3, !math.IsNaN(v))})
	}
	rss := math.NaN()
	if s := r.size(50000); s != nil {
		rss = median(s.cells[rowFlipflop].rss())
	}
	ts = append(ts, target{"peak memory at 50k ≤ 1 GiB", mib(rss), verdict(rss <= 1<<30, !math.IsNaN(rss))})
	w10, w50 := median(flip(10000)), median(flip(50000))
	g := w50 / w10
	ts = append(ts, target{"time(50k) ÷ time(10k) ≤ 5.5", ratio(g), verdict(g <= 5.5, !math.IsNaN(g))})
	ts = append(ts, target{"time(200k) ÷ time(50k) ≤ 4.4", "not measured (make bench-all stops at 50k)", "—"})
	ct := math.NaN()
	if s := r.size(10000); s != nil {
		ct = median(s.conftestOverDecode)
	}
	ts = append(ts, target{"conftest with the exported bundle ≤ 15× the decode floor, 10k", ratio(ct), verdict(ct <= 15, !math.IsNaN(ct))})
	for _, g := range r.gkConfigs {
		for _, apps := range []int{2000, 10000} {
			v, at := math.NaN(), math.NaN()
			if gk := r.gkAt(g.name, apps); gk != nil {
				v, at = median(gk.Ratios), median(gk.ReviewMS)/1000
			}
			ts = append(ts, target{fmt.Sprintf("Gatekeeper review ≤ 10× the inventory-read floor and under 0.3 s, %s Applications, %s", kObjects(apps), g.name),
				fmt.Sprintf("%s, %s", ratio(v), secs(at)), verdict(v <= 10 && at < 0.3, !math.IsNaN(v))})
		}
	}
	return ts
}

// smokeProblems: a cell without a number, or flipflop and conftest
// disagreeing on how many findings there are.
func (r *report) smokeProblems(c config) []string {
	var ps []string
	for _, s := range r.sizes {
		for _, row := range processRows {
			if row == rowPairwise && s.objects > c.pairwiseMax {
				continue
			}
			if len(s.cells[row].samples) == 0 {
				ps = append(ps, fmt.Sprintf("%s at %d objects: no number (%s)", row, s.objects, s.cells[row].note))
			}
		}
		if c.goBench && (s.goBench == nil || len(s.goBench.nsPerOp) == 0) {
			note := ""
			if s.goBench != nil {
				note = s.goBench.note
			}
			ps = append(ps, fmt.Sprintf("BenchmarkEvaluate at %d objects: no number (%s)", s.objects, note))
		}
		if f, ct := s.cells[rowFlipflop].findings(), s.cells[rowConftest].findings(); f >= 0 && ct >= 0 && f != ct {
			ps = append(ps, fmt.Sprintf("at %d objects flipflop found %d findings, conftest %d", s.objects, f, ct))
		}
		if f := s.cells[rowFlipflop].findings(); f == 0 {
			ps = append(ps, fmt.Sprintf("at %d objects flipflop found nothing", s.objects))
		}
		if p := s.cells[rowPairwise].findings(); s.objects <= c.pairwiseMax && p == 0 {
			ps = append(ps, fmt.Sprintf("at %d objects the pairwise policy denied nothing", s.objects))
		}
	}
	ps = append(ps, r.shapeProblems()...)
	if len(c.gkApps) > 0 {
		if r.gkNote != "" {
			ps = append(ps, r.gkNote)
		}
		if len(r.gkConfigs) == 0 {
			for _, apps := range c.gkApps {
				ps = append(ps, fmt.Sprintf("Gatekeeper at %d Applications: no number (not run)", apps))
			}
		}
		for _, cfg := range r.gkConfigs {
			for _, apps := range c.gkApps {
				g := r.gkAt(cfg.name, apps)
				switch {
				case g == nil || len(g.ReviewMS) == 0:
					ps = append(ps, fmt.Sprintf("Gatekeeper (%s) at %d Applications: no number", cfg.name, apps))
				case cfg.violations && g.Violations == 0:
					ps = append(ps, fmt.Sprintf("Gatekeeper (%s) at %d Applications: no violation for Stage %s", cfg.name, apps, g.Stage))
				case !cfg.violations && g.Violations > 0:
					ps = append(ps, fmt.Sprintf("Gatekeeper (%s) at %d Applications: %d violations for Stage %s, which must have none", cfg.name, apps, g.Violations, g.Stage))
				case g.FloorCount != fmt.Sprintf("%d Applications in the inventory", apps):
					ps = append(ps, fmt.Sprintf("Gatekeeper floor at %d Applications counted %q", apps, g.FloorCount))
				}
			}
		}
	}
	return ps
}
