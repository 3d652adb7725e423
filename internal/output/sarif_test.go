package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// sarifSchemaFile is the published OASIS SARIF 2.1.0 JSON schema (errata 01,
// JSON Schema draft-04, "id"
// https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json),
// copied byte for byte from github.com/oasis-tcs/sarif-spec, file
// sarif-2.1/schema/sarif-schema-2.1.0.json at commit
// e0583813964ec43cea53b6b531b402866095ed1f (the same bytes as
// Schemata/sarif-schema-2.1.0.json at ffa72eb4d4d7504ac43736489b0444aff7afdd74,
// "Update the github copies of the schemata to match the Approved Errata").
// sha256 c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e.
const sarifSchemaFile = "testdata/sarif-schema-2.1.0.json"

// offline refuses to load anything: the schema and the draft-04 meta-schema
// (which the validator embeds) are all the test may read.
type offline struct{}

func (offline) Load(url string) (any, error) {
	return nil, errors.New("remote loading is disabled in tests: " + url)
}

// sarifValidator compiles the SARIF schema from testdata, registered under
// its id, with formats asserted and no remote loading.
func sarifValidator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(sarifSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(offline{})
	c.AssertFormat()
	if err := c.AddResource(sarifSchema, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(sarifSchema)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validateSARIF(t *testing.T, sch *jsonschema.Schema, out []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("SARIF does not validate against %s: %v", sarifSchemaFile, err)
	}
}

func TestSARIFSchema(t *testing.T) {
	sch := sarifValidator(t)
	for name, build := range goldenReports {
		t.Run(name, func(t *testing.T) {
			validateSARIF(t, sch, render(t, "sarif", build(), fixtureOptions()))
		})
	}
	t.Run("no rules", func(t *testing.T) {
		validateSARIF(t, sch, render(t, "sarif", fixtureReport(), Options{}))
	})
	t.Run("evaluated", func(t *testing.T) {
		report, rules := evaluatedReport(t)
		validateSARIF(t, sch, render(t, "sarif", report, Options{Rules: rules, Version: "dev"}))
	})
	t.Run("invalid is caught", func(t *testing.T) {
		// Breaking a valid log in ways the schema forbids must fail, or the
		// validator is not really checking.
		for name, breakIt := range map[string]func(run map[string]any){
			"unknown level":       func(run map[string]any) { result(run)["level"] = "fatal" },
			"line 0":              func(run map[string]any) { region(run)["startLine"] = 0 },
			"unknown property":    func(run map[string]any) { result(run)["severity"] = "error" },
			"message not text":    func(run map[string]any) { result(run)["message"] = "text" },
			"driver without name": func(run map[string]any) { delete(run["tool"].(map[string]any)["driver"].(map[string]any), "name") },
		} {
			var doc map[string]any
			if err := json.Unmarshal(render(t, "sarif", fixtureReport(), fixtureOptions()), &doc); err != nil {
				t.Fatal(err)
			}
			breakIt(doc["runs"].([]any)[0].(map[string]any))
			if sch.Validate(doc) == nil {
				t.Errorf("%s: validated", name)
			}
		}
	})
}

func result(run map[string]any) map[string]any {
	return run["results"].([]any)[0].(map[string]any)
}

func region(run map[string]any) map[string]any {
	loc := result(run)["locations"].([]any)[0].(map[string]any)
	return loc["physicalLocation"].(map[string]any)["region"].(map[string]any)
}

// sarifDoc is what the tests read back: the parts of SARIF they check.
type sarifDoc struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID                   string            `json:"id"`
					Name                 string            `json:"name"`
					ShortDescription     map[string]string `json:"shortDescription"`
					FullDescription      map[string]string `json:"fullDescription"`
					Help                 map[string]string `json:"help"`
					HelpURI              string            `json:"helpUri"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful        bool `json:"executionSuccessful"`
			ToolExecutionNotifications []struct {
				Level     string                `json:"level"`
				Message   struct{ Text string } `json:"message"`
				Locations []sarifLocation       `json:"locations"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID              string                `json:"ruleId"`
			RuleIndex           int                   `json:"ruleIndex"`
			Level               string                `json:"level"`
			Message             struct{ Text string } `json:"message"`
			Locations           []sarifLocation       `json:"locations"`
			RelatedLocations    []sarifLocation       `json:"relatedLocations"`
			PartialFingerprints map[string]string     `json:"partialFingerprints"`
			Suppressions        []map[string]string   `json:"suppressions"`
		} `json:"results"`
	} `json:"runs"`
}

func readSARIF(t *testing.T, report *evaluator.Report, opts Options) sarifDoc {
	t.Helper()
	var doc sarifDoc
	if err := json.Unmarshal(render(t, "sarif", report, opts), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "2.1.0" || len(doc.Runs) != 1 {
		t.Fatalf("version %q, %d runs", doc.Version, len(doc.Runs))
	}
	return doc
}

func TestSARIFContent(t *testing.T) {
	report := fixtureReport()
	doc := readSARIF(t, report, fixtureOptions())
	run := doc.Runs[0]

	// Every rule of the bundle, plus legacy-mechanism from its finding.
	rules := run.Tool.Driver.Rules
	ids := []string{}
	for _, r := range rules {
		ids = append(ids, r.ID)
		if r.Name == "" || r.ShortDescription["text"] == "" || r.FullDescription["text"] == "" ||
			r.Help["text"] == "" || r.Help["markdown"] == "" || r.DefaultConfiguration.Level == "" {
			t.Errorf("rule %s lacks a field: %+v", r.ID, r)
		}
		if want := "https://github.com/flipflop-dev/flipflop/blob/main/docs/rules/" + r.ID + ".md"; r.HelpURI != want {
			t.Errorf("rule %s helpUri %q, want %q", r.ID, r.HelpURI, want)
		}
	}
	wantIDs := []string{"legacy-mechanism", "shared-application", "shared-branch-contradiction", "shared-write-branch"}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("rules %v, want %v", ids, wantIDs)
	}
	if r := rules[2]; r.Name != "SharedBranchContradiction" || r.ShortDescription["text"] != "Several Stages pin one floating pointer" ||
		r.DefaultConfiguration.Level != "error" {
		t.Errorf("shared-branch-contradiction described as %+v", r)
	}
	if got := rules[0].DefaultConfiguration.Level; got != "note" {
		t.Errorf("info rule level %q, want note", got)
	}

	// One result per finding, pointing at its rule.
	if len(run.Results) != len(report.Findings) {
		t.Fatalf("%d results for %d findings", len(run.Results), len(report.Findings))
	}
	for i, res := range run.Results {
		f := report.Findings[i]
		if res.RuleID != f.Rule || rules[res.RuleIndex].ID != f.Rule {
			t.Errorf("result %d: ruleId %s, ruleIndex %d, want %s", i, res.RuleID, res.RuleIndex, f.Rule)
		}
		if want := sarifLevel(f.Severity); res.Level != want {
			t.Errorf("result %d: level %s, want %s", i, res.Level, want)
		}
		if res.Message.Text != safetext.Text(f.Message) {
			t.Errorf("result %d: message %q", i, res.Message.Text)
		}
		if len(res.Locations) != 1 || len(res.RelatedLocations) != len(f.Resources)-1 {
			t.Errorf("result %d: %d locations, %d related, for %d resources", i, len(res.Locations), len(res.RelatedLocations), len(f.Resources))
		}
		if len(res.PartialFingerprints[fingerprintKey]) != 64 {
			t.Errorf("result %d: fingerprints %v", i, res.PartialFingerprints)
		}
	}
	first := run.Results[0]
	if pl := first.Locations[0].PhysicalLocation; pl == nil || pl.ArtifactLocation.URI != "gitops/kargo.yaml" || pl.Region == nil || pl.Region.StartLine != 18 {
		t.Errorf("first result located at %+v", pl)
	}
	if rl := first.RelatedLocations[2]; rl.PhysicalLocation.ArtifactLocation.URI != "gitops/appsets.yaml" ||
		rl.Message.Text != "Application argocd/qa (generated by ApplicationSet argocd/envs)" {
		t.Errorf("generated Application related as %+v", rl)
	}
	if uri := run.Results[1].Locations[0].PhysicalLocation.ArtifactLocation.URI; uri != "odd%20dir/a,b:%20100%25.yaml" {
		t.Errorf("escaped uri %q", uri)
	}
	if sup := run.Results[2].Suppressions; len(sup) != 1 || sup[0]["kind"] != "external" || sup[0]["status"] != "accepted" ||
		!strings.HasPrefix(sup[0]["justification"], "hotfixes go straight to release") {
		t.Errorf("waived finding suppressed as %v", sup)
	}
	if sup := run.Results[0].Suppressions; sup != nil {
		t.Errorf("unwaived finding suppressed as %v", sup)
	}
	if loc := run.Results[3].Locations[0]; loc.PhysicalLocation != nil || len(loc.LogicalLocations) != 1 ||
		loc.LogicalLocations[0].FullyQualifiedName != "kargo.akuity.io/Stage/acme/prod" {
		t.Errorf("a resource without a file located at %+v", loc)
	}

	// Load errors: a failed invocation with one notification each.
	inv := run.Invocations
	if len(inv) != 1 || inv[0].ExecutionSuccessful || len(inv[0].ToolExecutionNotifications) != 2 {
		t.Fatalf("invocations %+v", inv)
	}
	n := inv[0].ToolExecutionNotifications[0]
	if n.Level != "error" || n.Message.Text != report.Errors[0].Message || len(n.Locations) != 1 ||
		n.Locations[0].PhysicalLocation.ArtifactLocation.URI != "charts/broken.yaml" || n.Locations[0].PhysicalLocation.Region.StartLine != 4 {
		t.Errorf("notification %+v", n)
	}
	if n := inv[0].ToolExecutionNotifications[1]; n.Locations[0].PhysicalLocation.Region != nil {
		t.Errorf("an error without a line got a region: %+v", n)
	}
}

func TestSARIFClean(t *testing.T) {
	doc := readSARIF(t, cleanReport(), fixtureOptions())
	run := doc.Runs[0]
	if len(run.Tool.Driver.Rules) != len(fixtureRules()) {
		t.Errorf("%d rules, want every rule of the bundle (%d)", len(run.Tool.Driver.Rules), len(fixtureRules()))
	}
	if run.Results == nil || len(run.Results) != 0 {
		t.Errorf("results %v, want []", run.Results)
	}
	if len(run.Invocations) != 1 || !run.Invocations[0].ExecutionSuccessful || len(run.Invocations[0].ToolExecutionNotifications) != 0 {
		t.Errorf("invocations %+v", run.Invocations)
	}
}

func TestFingerprint(t *testing.T) {
	base := fixtureReport().Findings[0]
	fp := fingerprint(&base)

	moved := fixtureReport().Findings[0]
	for i := range moved.Resources {
		moved.Resources[i].File = "elsewhere/" + moved.Resources[i].File
		moved.Resources[i].Line += 10
	}
	moved.Resources[0], moved.Resources[1] = moved.Resources[1], moved.Resources[0]
	moved.Message += " (reworded)"
	moved.Resources[0].APIVersion = "kargo.akuity.io/v1beta1"
	if got := fingerprint(&moved); got != fp {
		t.Error("fingerprint changed with files, lines, order, message or API version")
	}

	for name, change := range map[string]func(*evaluator.Finding){
		"rule":     func(f *evaluator.Finding) { f.Rule = "other" },
		"key":      func(f *evaluator.Finding) { f.Key = "github.com/acme/deploy@release" },
		"resource": func(f *evaluator.Finding) { f.Resources[1].Name = "staging" },
		"fewer":    func(f *evaluator.Finding) { f.Resources = f.Resources[:3] },
		"kind":     func(f *evaluator.Finding) { f.Resources[0].Kind = "Warehouse" },
	} {
		f := fixtureReport().Findings[0]
		change(&f)
		if fingerprint(&f) == fp {
			t.Errorf("fingerprint unchanged when the %s changes", name)
		}
	}
}

func TestFileURI(t *testing.T) {
	for in, want := range map[string]string{
		"examples/contradiction/kargo.yaml": "examples/contradiction/kargo.yaml",
		"./a.yaml":                          "./a.yaml",
		"../x/a b.yaml":                     "../x/a%20b.yaml",
		"<stdin>":                           "%3Cstdin%3E",
		"/tmp/x/a.yaml":                     "file:///tmp/x/a.yaml",
		"c:d.yaml":                          "./c:d.yaml",
		"#1.yaml":                           "%231.yaml",
	} {
		if got := fileURI(in); got != want {
			t.Errorf("fileURI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	in := "naming `<project>:<stage>` or env/<stage>"
	if got, want := markdown(in), "naming `<project>:<stage>` or env/&lt;stage>"; got != want {
		t.Errorf("markdown = %q, want %q", got, want)
	}
	if got, want := unwrap("a\nb\n\nc\n d\n"), "a b\n\nc d"; got != want {
		t.Errorf("unwrap = %q, want %q", got, want)
	}
	if got := pascalCase("shared-branch-contradiction"); got != "SharedBranchContradiction" {
		t.Errorf("pascalCase = %q", got)
	}
}
