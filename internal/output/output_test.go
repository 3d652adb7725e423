package output

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenReports are the reports the golden files render.
var goldenReports = map[string]func() *evaluator.Report{
	"report": fixtureReport,
	"clean":  cleanReport,
}

func render(t *testing.T, format string, report *evaluator.Report, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, format, report, opts); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return buf.Bytes()
}

// fixtureOptions are the options of the golden files: the fixture bundle, a
// fixed version, no colour, a fixed time (2027-01-01).
func fixtureOptions() Options {
	return Options{Rules: fixtureRules(), Color: ColorNever, Version: "1.2.3", Now: time.Unix(1798761600, 0)}
}

// TestGolden compares every format over the fixed reports with
// testdata/<report>.<format>.golden; go test -update rewrites them.
func TestGolden(t *testing.T) {
	type golden struct {
		report, format string
		opts           Options
	}
	var cases []golden
	for name := range goldenReports {
		for _, format := range Formats() {
			cases = append(cases, golden{name, format, fixtureOptions()})
		}
	}
	colour := fixtureOptions()
	colour.Color = ColorAlways
	cases = append(cases, golden{"report", "text-color", colour})
	for _, c := range cases {
		file := filepath.Join("testdata", c.report+"."+c.format+".golden")
		t.Run(c.report+"/"+c.format, func(t *testing.T) {
			got := render(t, strings.TrimSuffix(c.format, "-color"), goldenReports[c.report](), c.opts)
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the rendering (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", file, got, want)
			}
		})
	}
}

// TestDeterministic renders each report twice, from separately built values,
// and wants the same bytes.
func TestDeterministic(t *testing.T) {
	for name, build := range goldenReports {
		for _, format := range Formats() {
			a := render(t, format, build(), fixtureOptions())
			for range 5 {
				if b := render(t, format, build(), fixtureOptions()); !bytes.Equal(a, b) {
					t.Fatalf("%s/%s: two renderings differ:\n%s\n---\n%s", name, format, a, b)
				}
			}
		}
	}
}

// TestWriteDoesNotModify checks that rendering leaves the report and the
// rules as they were (renderers sort copies).
func TestWriteDoesNotModify(t *testing.T) {
	report, opts := fixtureReport(), fixtureOptions()
	for _, format := range Formats() {
		render(t, format, report, opts)
	}
	if got, want := render(t, "json", report, opts), render(t, "json", fixtureReport(), fixtureOptions()); !bytes.Equal(got, want) {
		t.Error("rendering changed the report")
	}
	if opts.Rules[0].ID != fixtureRules()[0].ID {
		t.Error("rendering reordered Options.Rules")
	}
}

func TestWriteRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, "xml", fixtureReport(), Options{}); err == nil {
		t.Error("unknown format accepted")
	}
	if err := Write(&buf, "text", fixtureReport(), Options{Color: "sometimes"}); err == nil {
		t.Error("unknown colour mode accepted")
	}
}

func TestFormats(t *testing.T) {
	want := []string{"github", "gitlab", "json", "junit", "markdown", "openreports", "policyreport", "sarif", "text"}
	if got := Formats(); !slices.Equal(got, want) {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
}

// evaluatedReport evaluates examples/contradiction plus a broken file, as
// flipflop check does.
func evaluatedReport(t *testing.T) (*evaluator.Report, []evaluator.Rule) {
	t.Helper()
	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, loadErrs := (&loader.Loader{}).Load([]string{"../../examples/contradiction", broken})
	report, err := ev.Evaluate(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	report.Errors = append(report.Errors, loadErrs...)
	if len(report.Findings) == 0 || len(report.Errors) == 0 {
		t.Fatalf("want findings and a load error, got %d findings, %d errors", len(report.Findings), len(report.Errors))
	}
	return report, ev.Rules()
}

// TestEvaluatedReport renders a real report in every format: every finding
// and the load error must show.
func TestEvaluatedReport(t *testing.T) {
	report, rules := evaluatedReport(t)
	for _, format := range Formats() {
		out := string(render(t, format, report, Options{Rules: rules, Color: ColorNever}))
		for _, f := range report.Findings {
			if !strings.Contains(out, f.Rule) {
				t.Errorf("%s: no %s", format, f.Rule)
			}
		}
		if !strings.Contains(out, "broken.yaml") {
			t.Errorf("%s: the load error is missing", format)
		}
	}
}
