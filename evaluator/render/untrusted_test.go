package render

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// The hostile shapes of issue 20: each test fails on the renderer before it.

// listener counts the connections made to a loopback port.
type listener struct {
	net.Listener
	accepted atomic.Int32
}

func listen(t *testing.T) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{Listener: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nLEAKED"))
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return l
}

// hostileNetwork is a kustomization whose built-in generators and transformers,
// configured in files the kustomization lists (and inline, with the URL spelled
// through a YAML escape), would fetch url.
func hostileNetwork(url string) map[string]string {
	return map[string]string{
		"kustomization.yaml": "resources:\n- stage.yaml\n" +
			"generators:\n- gen.yaml\n" +
			"transformers:\n- patch.yaml\n- repl.yaml\n" +
			"configMapGenerator:\n- name: inline\n  files:\n  - \"\\x68ttp" + strings.TrimPrefix(url, "http") + "/inline\"\n",
		"stage.yaml": "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: s, namespace: p}\n",
		"gen.yaml":   "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: gen}\nfiles:\n- " + url + "/gen\n",
		"patch.yaml": "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: patch}\npath: " + url + "/patch\ntarget: {kind: Stage}\n",
		"repl.yaml":  "apiVersion: builtin\nkind: ReplacementTransformer\nmetadata: {name: repl}\nreplacements:\n- path: " + url + "/replacement\n",
	}
}

// Item 1: a render makes no connection at all, whatever the kustomization
// configures, with the network namespace and without it (the worker's own
// refusal alone).
func TestRenderMakesNoConnection(t *testing.T) {
	for _, noNetns := range []bool{false, true} {
		t.Run(fmt.Sprintf("noNetworkNamespace=%v", noNetns), func(t *testing.T) {
			l := listen(t)
			url := "http://" + l.Addr().String()
			files := hostileNetwork(url)
			// Each generator and transformer alone, so that an early error in
			// one cannot hide a fetch by another.
			for _, only := range []string{"gen.yaml", "patch.yaml", "repl.yaml", "inline"} {
				dir := t.TempDir()
				f := map[string]string{"stage.yaml": files["stage.yaml"]}
				switch only {
				case "inline":
					f["kustomization.yaml"] = "resources:\n- stage.yaml\n" + files["kustomization.yaml"][strings.Index(files["kustomization.yaml"], "configMapGenerator"):]
				case "gen.yaml":
					f[only] = files[only]
					f["kustomization.yaml"] = "resources:\n- stage.yaml\ngenerators:\n- gen.yaml\n"
				default:
					f[only] = files[only]
					f["kustomization.yaml"] = "resources:\n- stage.yaml\ntransformers:\n- " + only + "\n"
				}
				write(t, dir, f)
				out := renderDir(t, &Renderer{noNetworkNamespace: noNetns}, dir)
				if !out.Root.Failed {
					t.Errorf("%s: rendered without the fetched file: %+v", only, out.Objects)
				}
				for _, o := range out.Objects {
					if strings.Contains(fmt.Sprint(o.Value), "LEAKED") {
						t.Errorf("%s: fetched bytes reached the output", only)
					}
				}
			}
			if n := l.accepted.Load(); n != 0 {
				t.Errorf("the listener accepted %d connections", n)
			}
		})
	}
}

// Item 1, the outer wall: in its network namespace a worker cannot even open
// a TCP connection to a loopback port that accepts them.
func TestWorkerHasNoNetwork(t *testing.T) {
	l := listen(t)
	probe := func(r *Renderer) string {
		resp, err := r.run(request{Mode: modeProbeNetwork, Dir: l.Addr().String(), MaxOutput: 1 << 20, Memory: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Errors) != 1 {
			t.Fatalf("probe: %+v", resp.Errors)
		}
		return resp.Errors[0].Message
	}
	// Without the namespace the probe connects: it measures what it says.
	if got := probe(&Renderer{noNetworkNamespace: true}); got != "dial: connected" {
		t.Fatalf("probe without a namespace: %s", got)
	}
	r := &Renderer{}
	got := probe(r)
	if r.isolated() == 0 {
		t.Skip("this system refuses network namespaces to this user: the worker's own refusal is the only wall (TestRenderMakesNoConnection)")
	}
	if got == "dial: connected" {
		t.Errorf("a worker in its own network namespace reached %s", l.Addr())
	}
	if n := l.accepted.Load(); n != 1 {
		t.Errorf("the listener accepted %d connections, want the 1 of the probe without a namespace", n)
	}
}

// loadWith loads paths through a Loader with the real renderer, as the
// command line does.
func loadWith(t *testing.T, l *loader.Loader, paths ...string) (loader.Loaded, *Renderer) {
	t.Helper()
	r := &Renderer{roots: rootsOf(paths)}
	l.Renderer = r
	return l.LoadAll(paths), r
}

func hasError(errs []evaluator.LoadError, substr string) bool {
	return slices.ContainsFunc(errs, func(e evaluator.LoadError) bool { return strings.Contains(e.Message, substr) })
}

const stageText = "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: %s, namespace: p}\n"

func stage(name string) string { return fmt.Sprintf(stageText, name) }

// Item 2: what the run excludes is never read by a render: a base, a
// generator's data file, a chart's template. The render fails naming it.
func TestRenderNeverReadsExcluded(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"overlay/kustomization.yaml":     "resources:\n- ../secret-base\n- s.yaml\n",
		"overlay/s.yaml":                 stage("overlay"),
		"secret-base/kustomization.yaml": "resources:\n- hidden.yaml\n",
		"secret-base/hidden.yaml":        stage("hidden-base"),
		"gen/kustomization.yaml":         "resources:\n- s.yaml\nconfigMapGenerator:\n- name: c\n  files:\n  - data/secret.txt\n",
		"gen/s.yaml":                     stage("gen"),
		"gen/data/secret.txt":            "hidden-data\n",
		"chart/Chart.yaml":               chartYAML,
		"chart/templates/ok.yaml":        stage("chart"),
		"chart/templates/private.yaml":   stage("hidden-template"),
		"chart/.flipflopignore":          "templates/private.yaml\n",
	})
	l := &loader.Loader{
		IgnoreFile: loader.DefaultIgnoreFile,
		Exclude: []loader.Exclude{
			{Pattern: "secret-base/", Dir: dir, Source: "--exclude"},
			{Pattern: "secret.txt", Dir: dir, Source: "--exclude"},
		},
	}
	got, _ := loadWith(t, l, dir)
	for _, o := range got.Objects {
		if strings.HasPrefix(o.Name, "hidden") {
			t.Errorf("an excluded file was rendered: %s from %s", o.Name, o.Path)
		}
	}
	for _, want := range []string{"secret-base is excluded", "secret.txt is excluded", "private.yaml is excluded"} {
		if !hasError(got.Errors, want) {
			t.Errorf("no error %q: %+v", want, got.Errors)
		}
	}
}

// Item 3: a kustomization another one reads only as data (a generator's file)
// is no base: its own objects stay in the estate.
func TestKustomizationReadAsDataIsNoBase(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"parent/kustomization.yaml":       "resources:\n- s.yaml\nconfigMapGenerator:\n- name: c\n  files:\n  - other/kustomization.yaml\n",
		"parent/s.yaml":                   stage("parent"),
		"parent/other/kustomization.yaml": "resources:\n- s.yaml\n",
		"parent/other/s.yaml":             stage("other"),
	})
	got, _ := loadWith(t, &loader.Loader{}, dir)
	if len(got.Errors) > 0 {
		t.Fatal(got.Errors)
	}
	var names []string
	for _, o := range got.Objects {
		names = append(names, o.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"other", "parent"}) {
		t.Errorf("objects %v, want other and parent", names)
	}
	for _, r := range got.Rendered {
		if r.BaseOf != "" {
			t.Errorf("%s counted as a base of %s", r.Path, r.BaseOf)
		}
	}
}

// Item 4: every spelling of a kustomization's directory reads it the same way
// (once, through kustomize).
func TestEverySpellingOfAPath(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"kustomization.yaml":     "resources:\n- a.yaml\n- sub\n",
		"a.yaml":                 stage("a"),
		"sub/kustomization.yaml": "resources:\n- b.yaml\n",
		"sub/b.yaml":             stage("b"),
		"unlisted.yaml":          stage("unlisted"),
	})
	t.Chdir(dir)
	summary := func(paths ...string) string {
		got, _ := loadWith(t, &loader.Loader{}, paths...)
		var b strings.Builder
		for _, o := range got.Objects {
			fmt.Fprintf(&b, "%s %s:%d;", o.Name, filepath.Base(o.Path), o.Line)
		}
		for _, e := range got.Errors {
			fmt.Fprintf(&b, "error %s;", e.Message)
		}
		for _, r := range got.Rendered {
			fmt.Fprintf(&b, "root base=%v notlisted=%d failed=%v;", r.BaseOf != "", len(r.NotListed), r.Failed)
		}
		return b.String()
	}
	want := summary(dir)
	if strings.Contains(want, "error") || !strings.Contains(want, "a a.yaml") || strings.Contains(want, "unlisted a") {
		t.Fatalf("absolute path: %s", want)
	}
	for _, spelling := range []string{".", "./", ".//", dir + "/", dir + "/.", "sub/.."} {
		if got := summary(spelling); got != want {
			t.Errorf("%q reads\n  %s\nwant (the absolute path)\n  %s", spelling, got, want)
		}
	}
}

// Item 5: rendered documents of kinds no rule reads are dropped in the worker
// (counted, never sent to flipflop, never converted there).
func TestRenderedKindsFilteredInTheWorker(t *testing.T) {
	race.Sequential(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":           chartYAML,
		"templates/many.yaml":  "{{- range until 20000 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{- end }}\n",
		"templates/stage.yaml": stage("s"),
	})
	r := &Renderer{}
	root, _ := newRoot(dir)
	r.roots = []rootDir{root}
	resp, err := r.run(request{Mode: evaluator.ModeHelm, Dir: dir, Roots: r.roots, MaxFile: 32 << 20, MaxOutput: 32 << 20, Budget: 1 << 30, Memory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Documents) != 1 || resp.Skipped != 20000 {
		t.Errorf("the worker sent %d documents and skipped %d, want 1 and 20000", len(resp.Documents), resp.Skipped)
	}
	out := renderDir(t, &Renderer{}, dir)
	if len(out.Objects) != 1 || out.Skipped != 20000 {
		t.Errorf("objects %d, skipped %d", len(out.Objects), out.Skipped)
	}
}

// Item 5: an error message is bounded, however large the template makes it.
func TestRenderErrorsBounded(t *testing.T) {
	race.Sequential(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":          chartYAML,
		"templates/fail.yaml": "{{ fail (\"x\" | repeat 10000000) }}\n",
	})
	out := renderDir(t, &Renderer{}, dir)
	if !out.Root.Failed || len(out.Errors) == 0 {
		t.Fatalf("no error: %+v", out)
	}
	for _, e := range out.Errors {
		if n := len(e.Message) + len(e.Path); n > 2*maxMessage+200 {
			t.Errorf("an error of %d bytes", n)
		}
	}
}

// Item 5: one time budget for the whole run. Four looping charts with a
// budget the first one spends: one worker starts, the other three charts fail
// without one (the count, not the clock, is checked).
func TestRenderBudgetIsTheRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("spends a render budget")
	}
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 4 {
		files[fmt.Sprintf("c%d/Chart.yaml", i)] = chartYAML
		files[fmt.Sprintf("c%d/templates/loop.yaml", i)] = "{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n"
	}
	write(t, dir, files)
	l := &loader.Loader{}
	r := &Renderer{roots: rootsOf([]string{dir}), Timeout: 2 * time.Second}
	l.Renderer = r
	got := l.LoadAll([]string{dir})
	started, _ := r.workers()
	if started != 1 {
		t.Errorf("%d workers started, want 1 (the budget is the run's)", started)
	}
	spent := 0
	for _, e := range got.Errors {
		if strings.Contains(e.Message, "render budget") {
			spent++
		}
	}
	if spent != 4 {
		t.Errorf("%d charts report the budget, want 4: %+v", spent, got.Errors)
	}
}

// Item 5: the kernel holds a worker to its memory limit: a 30-byte template
// that would take gigabytes ends with a memory error, and the worker's peak
// resident set stays under the limit (bytes counted by the kernel, not time).
func TestWorkerMemoryHeldByTheKernel(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory counts as data: the kernel limit is off in race builds")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":          chartYAML,
		"templates/bomb.yaml": `{{ "x" | repeat 2000000000 }}`,
	})
	const limit = 512 << 20
	r := &Renderer{Memory: limit}
	out := renderDir(t, r, dir)
	if !hasError(out.Errors, "memory") {
		t.Fatalf("no memory error: %+v", out.Errors)
	}
	_, peak := r.workers()
	if peak == 0 {
		t.Skip("the system does not report a worker's peak memory")
	}
	if peak > limit+64<<20 {
		t.Errorf("the worker reached %d MiB, over its %d MiB limit", peak>>20, limit>>20)
	}
}

// Item 5: the kernel refuses a worker an allocation past its limit when the
// allocation is made, not after its pages are touched. Linux checks
// RLIMIT_DATA only on the part of a mapping that does not overlap an earlier
// one, and the Go heap maps over its own reservations: with the data limit
// alone, a 1 GiB allocation under a 512 MiB limit was granted in about two
// runs in five (whether the runtime's next mapping fails depends on where
// the heap lands) and touched until the watchdog noticed ("used more than"):
// twenty runs all refused leave such a limit a chance of about 1 in 30,000.
func TestWorkerAllocationRefusedWhenMade(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory counts as data: the kernel limit is off in race builds")
	}
	const limit = 512 << 20
	probe := func(size int) string {
		r := &Renderer{Memory: limit}
		resp, err := r.run(request{Mode: modeProbeMemory, Dir: strconv.Itoa(size), MaxOutput: 1 << 20, Memory: limit})
		if err != nil {
			return err.Error()
		}
		if len(resp.Errors) != 1 {
			t.Fatalf("probe: %+v", resp.Errors)
		}
		return resp.Errors[0].Message
	}
	// Under the limit the probe allocates: it measures what it says.
	if got := probe(64 << 20); got != "allocated" {
		t.Fatalf("64 MiB under a 512 MiB limit: %s", got)
	}
	for range 20 {
		if got := probe(1 << 30); !strings.Contains(got, "ran out of memory") {
			t.Fatalf("1 GiB under a 512 MiB limit: %s (want the kernel's refusal, \"ran out of memory\")", got)
		}
	}
}

// Item 5: a worker dies with its parent. The parent (this test binary, in
// parentMode) renders a looping chart and is killed; its worker must be gone
// soon after, not loop on.
func TestWorkerDiesWithItsParent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a parent process")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":          chartYAML,
		"templates/loop.yaml": "{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n",
	})
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerDiesWithItsParent$")
	cmd.Env = append(os.Environ(), parentEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the parent said nothing: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "worker "))
	if err != nil {
		t.Fatalf("the parent said %q", line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for range 100 {
		if !alive(pid) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("worker %d still runs 10 s after its parent was killed", pid)
}

// alive reports whether a process runs (a zombie has ended).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// parentEnv makes this test binary the parent of TestWorkerDiesWithItsParent.
const parentEnv = "FLIPFLOP_TEST_RENDER_PARENT"

func init() {
	dir := os.Getenv(parentEnv)
	if dir == "" || os.Getenv(workerEnv) == "1" {
		return
	}
	root, err := newRoot(dir)
	if err != nil {
		os.Exit(2)
	}
	r := &Renderer{roots: []rootDir{root}, Timeout: 5 * time.Minute}
	r.onStart = func(pid int) { fmt.Printf("worker %d\n", pid) }
	r.Render(dir, dir, evaluator.ModeHelm)
	os.Exit(0)
}

// Item 5, the parent's share: the objects renders hand to flipflop (the kinds
// it converts and evaluates) share one budget for the run, --max-file-size in
// all, so small templates cannot make flipflop hold many times what one plain
// file may. Two charts that each render about 60% of it: the first is read,
// the second refused by the budget (bytes counted, not time).
func TestRenderedObjectsShareTheRunsBudget(t *testing.T) {
	race.Sequential(t)
	dir := t.TempDir()
	const maxFile = 1 << 20
	tmpl := "{{- range until 6500 }}\n---\napiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: s{{ . }}, namespace: p}\nspec: {}\n{{- end }}\n"
	write(t, dir, map[string]string{
		"a/Chart.yaml": chartYAML, "a/templates/s.yaml": tmpl,
		"b/Chart.yaml": chartYAML, "b/templates/s.yaml": tmpl,
	})
	r := &Renderer{roots: rootsOf([]string{dir}), MaxFileSize: maxFile}
	a := r.Render(filepath.Join(dir, "a"), "a", evaluator.ModeHelm)
	if a.Root.Failed || len(a.Objects) != 6500 {
		t.Fatalf("the first chart: %d objects, errors %+v", len(a.Objects), a.Errors)
	}
	if k := r.kept.Load(); k < maxFile/2 || k > maxFile {
		t.Fatalf("the first chart handed over %d bytes, want about 60%% of %d", k, maxFile)
	}
	b := r.Render(filepath.Join(dir, "b"), "b", evaluator.ModeHelm)
	if !b.Root.Failed || len(b.Objects) != 0 || !hasError(b.Errors, "budget") {
		t.Errorf("the second chart: %d objects, errors %+v", len(b.Objects), b.Errors)
	}
	if k := r.kept.Load(); k > maxFile {
		t.Errorf("renders handed over %d bytes, over the run's %d", k, maxFile)
	}
}

// laughingStage is a Stage whose aliases expand to 135,740 values.
func laughingStage(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: %s, namespace: p}\nspec:\n", name)
	b.WriteString("  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 5; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	return b.String()
}

// What renders hand back shares the run's alias budget with the files: the
// documents of a chart, each far under what one document may expand to, are
// read while the budget pays for them (1,000,000 values, and one for each
// byte read) and are errors after, where each document had a budget of its
// own (the objects, not the clock, are counted).
func TestRenderedAliasesShareTheRunsBudget(t *testing.T) {
	race.Sequential(t)
	dir := t.TempDir()
	var docs strings.Builder
	for i := range 12 {
		fmt.Fprintf(&docs, "---\n%s", laughingStage(fmt.Sprintf("rendered-%d", i)))
	}
	write(t, dir, map[string]string{
		"chart/Chart.yaml":            chartYAML,
		"chart/templates/stages.yaml": docs.String(),
		"plain.yaml":                  stage("plain"),
	})
	got, _ := loadWith(t, &loader.Loader{}, dir)
	rendered, cut := 0, 0
	for _, o := range got.Objects {
		if strings.HasPrefix(o.Name, "rendered-") {
			rendered++
		}
	}
	for _, e := range got.Errors {
		if !strings.Contains(e.Message, "left of the run's budget") {
			t.Errorf("error %+v", e)
		}
		cut++
	}
	// 7 x 135,740 values fit in 1,000,000 and the bytes' share, 8 do not.
	if rendered != 7 || cut != 5 {
		t.Errorf("%d rendered Stages read and %d errors, want 7 and 5: %+v", rendered, cut, got.Errors)
	}
	if !slices.ContainsFunc(got.Objects, func(o evaluator.Object) bool { return o.Name == "plain" }) {
		t.Error("the plain Stage beside the chart was not read")
	}
}
