// Package evaluator runs flipflop's embedded policy bundle on Kubernetes objects
// and returns typed findings. Programs that want flipflop's checks import it,
// with package loader to read manifests from files:
//
//	ev, err := evaluator.New(ctx, evaluator.Settings{})
//	objs, loadErrs := (&loader.Loader{}).Load([]string{"./gitops"})
//	report, err := ev.Evaluate(ctx, objs)
//
// Helm charts and kustomizations are rendered, as the flipflop command renders
// them, when the Loader has the Renderer of package evaluator/render (in a
// confined worker process; its Example shows a whole run):
//
//	l := &loader.Loader{Renderer: render.New("./gitops")}
//
// Objects already in memory (decoded JSON, an unstructured.Unstructured's
// Object) become Objects with NewObject; no caller needs OPA's ast package.
//
// The policies are compiled once per process (by the first New: every
// Evaluator shares them, its settings apart) and the query prepared once in
// New; Evaluate converts
// the objects to one input value and evaluates it. An Evaluator is safe for
// concurrent use.
package evaluator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/suggest"
	"github.com/flipflop-dev/flipflop/policies"
)

// Query is the rule every host evaluates: all findings of every rule.
const Query = "data.flipflop.findings"

// findingsQuery is Query as this host evaluates it: data.flipflop.findings is
// data.flipflop.all_findings under `with data.lib.flipflop.config.settings as
// data.flipflop_settings`, and this host's compiled policies read the settings
// from its store (settingsFromStore), so it evaluates all_findings without a
// `with`. Under any `with`, OPA's evaluator looks every function call up among
// the functions the `with` may replace, by the function's name as a string
// (topdown's functionMocksStack): a string built for each of the model's
// million calls, 3% of the CPU and 2% of the bytes allocated (issue 43).
const findingsQuery = "data.flipflop.all_findings"

// Settings tune the model; the zero value is what conftest and Gatekeeper use
// when given no data.
type Settings struct {
	// DefaultBranch is the branch HEAD and an empty targetRevision stand for.
	// Empty means main or master, whichever the estate names, and findings that
	// rely on that say so.
	DefaultBranch string `json:"default_branch,omitempty"`
	// ArgoCDNamespace is where Applications live when argocd-update omits
	// apps[].namespace and an Application omits metadata.namespace. Empty means argocd.
	ArgoCDNamespace string `json:"argocd_namespace,omitempty"`
	// Namespace is where a namespaced manifest without metadata.namespace is
	// taken to be applied, as kubectl apply -n gives it (a Stage's project).
	// Empty means the files leave it to apply time: the policies look for it
	// in the Argo CD Application that deploys the file's directory, and judge
	// nothing that depends on it when none does.
	Namespace string `json:"namespace,omitempty"`
	// KargoVersion is the Kargo release the estate runs on ("v1.9",
	// "1.10.3"): the policies read every version-dependent field and
	// annotation as that release does. Empty means the newest release the
	// policies model; a newer one is read as that. New rejects anything
	// that is not a version, and a version longer than 128 characters.
	KargoVersion string `json:"kargo_version,omitempty"`
	// Waivers are waivers from a file (see loader.LoadWaivers); annotation waivers need no setting.
	Waivers []Waiver `json:"waivers,omitempty"`
	// Today is the date waivers expire against (YYYY-MM-DD); empty means the clock.
	Today string `json:"today,omitempty"`
	// IgnoreAnnotationWaivers ignores every flipflop.dev/ignore annotation
	// (the policies' annotation_waivers: false), so that only Waivers waive.
	IgnoreAnnotationWaivers bool `json:"-"`
	// Rules limits the run to these rule ids (empty: every rule); the other
	// rules are not evaluated. SkipRules leaves these out (over Rules).
	Rules     []string `json:"rules,omitempty"`
	SkipRules []string `json:"skip_rules,omitempty"`
	// Severity reports the findings of a rule (by id) at another severity
	// (error, warning or info); such a finding keeps its rule's own in
	// Finding.RuleSeverity.
	Severity map[string]string `json:"severity,omitempty"`
}

// Rule describes one rule, read from its METADATA.
type Rule struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Severity    string `json:"severity"`
	// AssumedSeverity, when set, is the severity of the rule's findings when
	// they rest only on the Kargo version flipflop assumed (the run named none
	// and read none from a cluster): Severity is then the severity once the
	// version is named (METADATA custom.severity_assumed).
	AssumedSeverity string `json:"assumedSeverity,omitempty"`
	Remediation     string `json:"remediation"`
	// Admission says the rule makes sense at admission (a Gatekeeper template is generated for it).
	Admission bool `json:"admission"`
	// Package is the Rego package of the rule, e.g. lib.flipflop.rules.shared_branch_contradiction.
	Package string `json:"package"`
	// File is the rule's module in the policy tree, e.g. rules/shared_branch_contradiction/rule.rego.
	File string `json:"file"`
	// Why explains how the contradiction breaks a promotion or a Stage's health,
	// quoting what Kargo reports (METADATA custom.why; Markdown-light text).
	Why string `json:"why,omitempty"`
	// RelatedResources are the Kargo and Argo CD documentation pages and issue
	// threads behind the rule (METADATA related_resources), in METADATA order.
	RelatedResources []RelatedResource `json:"relatedResources,omitempty"`
	// Fixable: `flipflop fix` previews ways out of the rule's findings
	// (METADATA custom.fixable).
	Fixable bool `json:"fixable,omitempty"`
	// Timeline: `flipflop explain` replays the rule's findings as promotion
	// timelines (METADATA custom.timeline).
	Timeline bool `json:"timeline,omitempty"`
	// Diagnose is the cause of an Unhealthy Stage the rule's findings explain
	// in `flipflop diagnose` (METADATA custom.diagnose): one of the Cause*
	// constants of internal/diagnose, such as shared-pointer; "" for none.
	Diagnose string `json:"diagnose,omitempty"`
}

// RelatedResource is a link from a rule's METADATA related_resources.
type RelatedResource struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Evaluator holds the compiled policies and the prepared queries. The policies
// are compiled once; the findings query is prepared in New, the queries that
// also return the model are prepared on first use, on the same compiler.
type Evaluator struct {
	compiler *ast.Compiler
	store    storage.Store
	strict   bool
	query    rego.PreparedEvalQuery
	rules    []Rule

	kargo KargoVersion

	mu       sync.Mutex
	prepared map[string]rego.PreparedEvalQuery
}

// Modules returns the embedded policy modules, test files excluded, parsed with
// annotations, keyed by their path in the policy tree.
func Modules() (map[string]*ast.Module, error) { return modulesUnder(".") }

// modulesUnder parses the embedded modules under root (a directory of the
// policy tree), test files excluded.
func modulesUnder(root string) (map[string]*ast.Module, error) {
	res, err := loader.NewFileLoader().
		WithFS(policies.FS).
		WithProcessAnnotation(true).
		WithRegoVersion(ast.RegoV1).
		Filtered([]string{root}, func(_ string, info fs.FileInfo, _ int) bool {
			return !info.IsDir() && (strings.HasSuffix(info.Name(), "_test.rego") || !strings.HasSuffix(info.Name(), ".rego"))
		})
	if err != nil {
		return nil, fmt.Errorf("loading embedded policies: %w", err)
	}
	mods := make(map[string]*ast.Module, len(res.Modules))
	for name, m := range res.Modules {
		mods[name] = m.Parsed
	}
	return mods, nil
}

// Option tunes how an Evaluator evaluates.
type Option func(*options)

type options struct {
	strict bool
}

// StrictBuiltinErrors makes a built-in function error (a type error in the
// policies) fail the evaluation instead of leaving a rule undefined. Tests use
// it to prove the policies never trip on malformed objects.
func StrictBuiltinErrors() Option { return func(o *options) { o.strict = true } }

// New prepares the query once, on the embedded policies compiled by the
// first New of the process.
func New(ctx context.Context, s Settings, opts ...Option) (*Evaluator, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if len(s.KargoVersion) > maxKargoVersion {
		return nil, &SettingError{Setting: "Kargo version", Value: s.KargoVersion, Want: kargoVersionWant}
	}
	c, err := compiledPolicies()
	if err != nil {
		return nil, err
	}
	settings := map[string]any{}
	if s.DefaultBranch != "" {
		settings["default_branch"] = s.DefaultBranch
	}
	if s.ArgoCDNamespace != "" {
		settings["argocd_namespace"] = s.ArgoCDNamespace
	}
	if s.Namespace != "" {
		settings["namespace"] = s.Namespace
	}
	if s.Today != "" {
		settings["today"] = s.Today
	}
	if s.KargoVersion != "" {
		settings["kargo_version"] = s.KargoVersion
	}
	if s.IgnoreAnnotationWaivers {
		settings["annotation_waivers"] = false
	}
	if err := checkSelection(s, c.rules); err != nil {
		return nil, err
	}
	if len(s.Rules) > 0 {
		settings["rules"] = anySlice(s.Rules)
	}
	if len(s.SkipRules) > 0 {
		settings["skip_rules"] = anySlice(s.SkipRules)
	}
	if len(s.Severity) > 0 {
		m := make(map[string]any, len(s.Severity))
		for id, level := range s.Severity {
			m[id] = level
		}
		settings["severity"] = m
	}
	if len(s.Waivers) > 0 {
		ws := make([]any, 0, len(s.Waivers))
		for _, w := range s.Waivers {
			ws = append(ws, w.data())
		}
		settings["waivers"] = ws
	}
	store := inmem.NewFromObject(map[string]any{"flipflop_settings": settings})
	pq, err := rego.New(rego.Compiler(c.compiler), rego.Store(store), rego.Query(findingsQuery), rego.StrictBuiltinErrors(o.strict)).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("preparing policy query %s: %w", Query, err)
	}
	e := &Evaluator{compiler: c.compiler, store: store, strict: o.strict, query: pq, rules: c.rules}
	newer := false
	if e.kargo, newer, err = e.kargoVersion(ctx); err != nil {
		return nil, err
	}
	if s.KargoVersion != "" && e.kargo.Assumed {
		return nil, &SettingError{Setting: "Kargo version", Value: s.KargoVersion, Want: kargoVersionWant}
	}
	if newer {
		e.kargo.Named = s.KargoVersion
	}
	return e, nil
}

// checkSelection refuses a rule id the bundle does not define in Rules,
// SkipRules or Severity, and a severity that is none of error, warning and
// info: a typo must not silently select nothing.
func checkSelection(s Settings, rules []Rule) error {
	ids := RuleIDs(rules, func(Rule) bool { return true })
	check := func(setting, id string) error {
		if slices.Contains(ids, id) {
			return nil
		}
		return &SettingError{Setting: setting, Value: id, Want: "a rule id (flipflop rules lists them)" + suggest.DidYouMean(id, ids)}
	}
	for _, id := range s.Rules {
		if err := check("rule", id); err != nil {
			return err
		}
	}
	for _, id := range s.SkipRules {
		if err := check("rule to skip", id); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(s.Severity)) {
		if err := check("rule of a severity", id); err != nil {
			return err
		}
		if level := s.Severity[id]; SeverityRank(level) == 0 {
			return &SettingError{Setting: "severity for " + id, Value: level, Want: "error, warning or info"}
		}
	}
	return nil
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// maxKargoVersion bounds a Kargo version setting: a release with a
// pre-release and build suffix ("v1.10.0-rc.1+build.5") is far shorter, and a
// longer value would be repeated whole in every report.
const maxKargoVersion = 128

const kargoVersionWant = "a release such as v1.9 or 1.10.3"

// maxQuoted is how much of a rejected value an error quotes.
const maxQuoted = 64

// SettingError is a setting New cannot use.
type SettingError struct {
	Setting, Value, Want string
}

// Error quotes the value cut to its first 64 characters and escaped (see
// safetext.Quote): a setting may come from a file a pull request brings.
func (e *SettingError) Error() string {
	return fmt.Sprintf("invalid %s %s: want %s", e.Setting, safetext.Quote(safetext.Cut(e.Value, maxQuoted)), e.Want)
}

// kargoQuery reads the Kargo version the policies follow under the settings.
const kargoQuery = "x = data.lib.flipflop.config.kargo_report"

// kargoVersion asks the policies which Kargo version they follow, whether
// the settings named it, and whether they named a newer one than the
// policies model: the one model of versions is theirs.
func (e *Evaluator) kargoVersion(ctx context.Context) (KargoVersion, bool, error) {
	pq, err := e.prepare(ctx, kargoQuery)
	if err != nil {
		return KargoVersion{}, false, err
	}
	rs, err := pq.Eval(ctx, rego.EvalParsedInput(ast.NewArray()))
	if err != nil {
		return KargoVersion{}, false, fmt.Errorf("evaluating policies: %w", err)
	}
	x, _ := binding(rs, "x").(map[string]any)
	v, _ := x["version"].(string)
	named, _ := x["named"].(bool)
	newer, _ := x["newer"].(bool)
	if v == "" {
		return KargoVersion{}, false, fmt.Errorf("evaluating policies: the Kargo version is undefined")
	}
	return KargoVersion{Version: v, Assumed: !named}, newer, nil
}

// Kargo returns the Kargo version the policies follow.
func (e *Evaluator) Kargo() KargoVersion { return e.kargo }

// compiled is the embedded policies compiled, with the rules their METADATA
// describes: the same for every Evaluator, whatever its settings (they live
// in each Evaluator's store), so a process compiles them once.
type compiled struct {
	compiler *ast.Compiler
	rules    []Rule
}

// compiledPolicies compiles the embedded policies on first use. Queries are
// prepared on the compiler afterwards without compiling it again (rego
// compiles modules only when given some), and a compiled compiler is only
// read when queries are prepared and evaluated, as OPA's server shares one.
var compiledPolicies = sync.OnceValues(func() (compiled, error) {
	mods, err := Modules()
	if err != nil {
		return compiled{}, err
	}
	if err := settingsFromStore(mods); err != nil {
		return compiled{}, err
	}
	names := make([]string, 0, len(mods))
	for name := range mods {
		names = append(names, name)
	}
	slices.Sort(names)
	// The type and recursion checks only find errors, which
	// TestPoliciesCompileStrictly proves there are none of, and cost half of
	// the compilation (about 110 ms of every run).
	compiler := ast.NewCompiler().WithSkipStages(ast.StageCheckTypes, ast.StageCheckRecursion)
	ropts := []func(*rego.Rego){rego.Compiler(compiler), rego.Query(Query), rego.Store(inmem.New())}
	for _, name := range names {
		if strings.HasPrefix(name, gatekeeperDir) {
			continue // Gatekeeper's adapter: nothing this host queries reads it
		}
		ropts = append(ropts, rego.ParsedModule(mods[name]))
	}
	if _, err := rego.New(ropts...).PrepareForEval(context.Background()); err != nil {
		return compiled{}, fmt.Errorf("compiling the policies for %s: %w", Query, err)
	}
	return compiled{compiler: compiler, rules: rulesFrom(mods)}, nil
})

// gatekeeperDir holds the Gatekeeper host's adapter modules.
const gatekeeperDir = "hosts/gatekeeper/"

// settingsPackage is the package whose settings rule every host overrides.
var settingsPackage = ast.MustParseRef("data.lib.flipflop.config")

// settingsFromStore rewrites, in this host's copy of the policies, the rule
// lib.flipflop.config.settings (`settings := {}`, which conftest and
// Gatekeeper replace with `with`) to read the settings New puts in the store
// at data.flipflop_settings, where conftest's entrypoint reads them
// (flipflop.configured): the same value, without a `with` around the whole
// evaluation (findingsQuery). Gatekeeper's templates may read no data but
// data.inventory, so the policies themselves keep the empty default.
func settingsFromStore(mods map[string]*ast.Module) error {
	for _, m := range mods {
		if !m.Package.Path.Equal(settingsPackage) {
			continue
		}
		for i, r := range m.Rules {
			if r.Head.Name != "settings" || len(r.Head.Args) > 0 {
				continue
			}
			rule, err := ast.ParseRuleWithOpts(
				"settings := s if {\n\ts := data.flipflop_settings\n\tis_object(s)\n} else := {}",
				ast.ParserOptions{RegoVersion: ast.RegoV1},
			)
			if err != nil {
				return fmt.Errorf("reading the settings from the store: %w", err)
			}
			for x := rule; x != nil; x = x.Else {
				x.Module = m
			}
			m.Rules[i] = rule
			return nil
		}
	}
	return errors.New("reading the settings from the store: the policies define no lib.flipflop.config.settings")
}

// prepared returns the query q prepared on the compiler New built, preparing
// it on first use.
func (e *Evaluator) prepare(ctx context.Context, q string) (rego.PreparedEvalQuery, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if pq, ok := e.prepared[q]; ok {
		return pq, nil
	}
	pq, err := rego.New(rego.Compiler(e.compiler), rego.Store(e.store), rego.Query(q), rego.StrictBuiltinErrors(e.strict)).PrepareForEval(ctx)
	if err != nil {
		return pq, fmt.Errorf("preparing policy query %s: %w", q, err)
	}
	if e.prepared == nil {
		e.prepared = map[string]rego.PreparedEvalQuery{}
	}
	e.prepared[q] = pq
	return pq, nil
}

// modelQuery is the query behind Model: the model view under the settings.
func modelQuery(o modelOptions) string {
	return "model = " + o.view()
}

// analyzeQuery is the query behind Analyze: findings and the model view as
// one rule's value (data.flipflop.analysis), so the model is computed once
// for both: each reference of a query expression is evaluated under its
// `with` in a scope of its own.
func analyzeQuery(o modelOptions) string {
	rule := "data.flipflop.analysis"
	switch {
	case o.detailed:
		rule = "data.flipflop.detailed_analysis"
	case o.forErrors:
		rule = "data.flipflop.digest_analysis"
	}
	return "x = " + rule
}

// KindsQuery counts the objects the model reads, by kind.
const KindsQuery = "{k: count(v) | some k, v in data.lib.flipflop.objects.by_kind}"

// Kinds counts, by kind, the objects of objs that the model reads (Kargo
// Stages, PromotionTasks and ClusterPromotionTasks, Argo CD Applications and
// ApplicationSets of the right API groups); every kind is present, zeros
// included. A caller uses it to tell an input that holds nothing to check.
func (e *Evaluator) Kinds(ctx context.Context, objs []Object) (map[string]int, error) {
	pq, err := e.prepare(ctx, "kinds = "+KindsQuery)
	if err != nil {
		return nil, err
	}
	in, err := input(objs)
	if err != nil {
		return nil, err
	}
	rs, err := pq.Eval(ctx, rego.EvalParsedInput(in), evalCache())
	if err != nil {
		return nil, fmt.Errorf("counting objects: %w", err)
	}
	v := binding(rs, "kinds")
	if v == nil {
		return nil, fmt.Errorf("counting objects: %s is undefined", KindsQuery)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var kinds map[string]int
	if err := json.Unmarshal(raw, &kinds); err != nil {
		return nil, fmt.Errorf("counting objects: %w", err)
	}
	return kinds, nil
}

// Rules lists every rule of the bundle, sorted by id.
func (e *Evaluator) Rules() []Rule { return slices.Clone(e.rules) }

// BundleRules lists every rule of the embedded bundle from its METADATA,
// sorted by id, without compiling the policies (for help texts and listings).
func BundleRules() ([]Rule, error) {
	rules, err := bundleRules()
	return slices.Clone(rules), err
}

// bundleRules reads the rules' METADATA once a process: only the rule
// modules, the largest part of the tree (the generated schemas) unparsed.
var bundleRules = sync.OnceValues(func() ([]Rule, error) {
	mods, err := modulesUnder(rulesDir)
	if err != nil {
		return nil, err
	}
	return rulesFrom(mods), nil
})

// rulesDir is the directory of the policy tree that holds every rule's
// module (rules/<rule>/rule.rego), and so every package rulesFrom reads.
const rulesDir = "rules"

// RuleIDs returns the ids of the rules for which keep is true, sorted.
func RuleIDs(rules []Rule, keep func(Rule) bool) []string {
	var out []string
	for _, r := range rules {
		if keep(r) {
			out = append(out, r.ID)
		}
	}
	return out
}

func rulesFrom(mods map[string]*ast.Module) []Rule {
	var rules []Rule
	for file, m := range mods {
		pkg := strings.TrimPrefix(m.Package.Path.String(), "data.")
		if !strings.HasPrefix(pkg, "lib.flipflop.rules.") && !strings.HasPrefix(pkg, "lib.flipflop.meta.") {
			continue
		}
		for _, a := range m.Annotations {
			if a.Scope != "package" || a.Custom == nil {
				continue
			}
			id, _ := a.Custom["id"].(string)
			if id == "" {
				continue
			}
			sev, _ := a.Custom["severity"].(string)
			assumed, _ := a.Custom["severity_assumed"].(string)
			rem, _ := a.Custom["remediation"].(string)
			adm, _ := a.Custom["admission"].(bool)
			why, _ := a.Custom["why"].(string)
			fixable, _ := a.Custom["fixable"].(bool)
			timeline, _ := a.Custom["timeline"].(bool)
			diagnose, _ := a.Custom["diagnose"].(string)
			var related []RelatedResource
			for _, rr := range a.RelatedResources {
				if rr == nil || rr.Ref.String() == "" {
					continue
				}
				related = append(related, RelatedResource{URL: rr.Ref.String(), Description: rr.Description})
			}
			rules = append(rules, Rule{
				ID: id, Title: a.Title, Description: a.Description, Severity: sev, AssumedSeverity: assumed, Remediation: rem, Admission: adm,
				Package: pkg, File: file, Why: why, RelatedResources: related,
				Fixable: fixable, Timeline: timeline, Diagnose: diagnose,
			})
		}
	}
	slices.SortFunc(rules, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	return rules
}

// input builds the policy input from objects: conftest's combined shape
// [{path, line, contents}] (plus renderedBy for rendered objects and
// duplicateKeys for documents that repeat a key), converted to an AST value
// once. An object without a value is an error.
func input(objs []Object) (ast.Value, error) {
	terms, err := inputTerms(objs)
	if err != nil {
		return nil, err
	}
	return ast.NewArray(terms...), nil
}

// eval evaluates the prepared query pq over objs, in one query, as conftest
// and Gatekeeper do.
func (e *Evaluator) eval(ctx context.Context, pq rego.PreparedEvalQuery, objs []Object) (rego.ResultSet, error) {
	in, err := input(objs)
	if err != nil {
		return nil, err
	}
	return pq.Eval(ctx, rego.EvalParsedInput(in), evalCache())
}

// inputTerms is input's entries, one term per object.
func inputTerms(objs []Object) ([]*ast.Term, error) {
	terms := make([]*ast.Term, 0, len(objs))
	for i := range objs {
		o := &objs[i]
		if o.Value == nil {
			return nil, fmt.Errorf("object %d (%s) has no value: build objects with NewObject or a loader.Loader", i, o.where())
		}
		items := [][2]*ast.Term{
			ast.Item(ast.StringTerm("path"), ast.StringTerm(o.Path)),
			ast.Item(ast.StringTerm("line"), ast.IntNumberTerm(o.Line)),
			ast.Item(ast.StringTerm("contents"), ast.NewTerm(o.Value)),
		}
		if o.RenderedBy != "" {
			items = append(items, ast.Item(ast.StringTerm("renderedBy"), ast.StringTerm(o.RenderedBy)))
		}
		if len(o.Duplicates) > 0 {
			dups := make([]*ast.Term, 0, len(o.Duplicates))
			for _, d := range o.Duplicates {
				dups = append(dups, ast.ObjectTerm(
					ast.Item(ast.StringTerm("key"), ast.StringTerm(d.Key)),
					ast.Item(ast.StringTerm("line"), ast.IntNumberTerm(d.Line)),
					ast.Item(ast.StringTerm("first"), ast.IntNumberTerm(d.First)),
					ast.Item(ast.StringTerm("mapping"), ast.ArrayTerm(ast.IntNumberTerm(d.MappingLine), ast.IntNumberTerm(d.MappingColumn))),
				))
			}
			items = append(items, ast.Item(ast.StringTerm("duplicateKeys"), ast.ArrayTerm(dups...)))
		}
		terms = append(terms, ast.ObjectTerm(items...))
	}
	return terms, nil
}

// Evaluate runs every rule over objs and returns the findings, sorted by
// severity, rule and resources. Load errors are the caller's to add.
func (e *Evaluator) Evaluate(ctx context.Context, objs []Object) (*Report, error) {
	rs, err := e.eval(ctx, e.query, objs)
	if err != nil {
		return nil, fmt.Errorf("evaluating policies: %w", err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("evaluating policies: %s is undefined", findingsQuery)
	}
	report, err := newReport(rs[0].Expressions[0].Value, objs)
	if err != nil {
		return nil, err
	}
	k := e.kargo
	report.Kargo = &k
	return report, nil
}

// Analyze evaluates findings and the model together, in one evaluation: for
// tools that need both (explain, graph, fix, diagnose). The report is
// Evaluate's, the model Model's with the same options.
func (e *Evaluator) Analyze(ctx context.Context, objs []Object, opts ...ModelOption) (*Report, *Model, error) {
	q := analyzeQuery(modelOptionsOf(opts))
	pq, err := e.prepare(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	rs, err := e.eval(ctx, pq, objs)
	if err != nil {
		return nil, nil, fmt.Errorf("evaluating policies: %w", err)
	}
	x, ok := binding(rs, "x").(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("evaluating policies: findings and model are undefined")
	}
	report, err := newReport(x["findings"], objs)
	if err != nil {
		return nil, nil, err
	}
	k := e.kargo
	report.Kargo = &k
	m, err := newModel(x["model"], objs)
	if err != nil {
		return nil, nil, err
	}
	o := modelOptionsOf(opts)
	m.Detailed = o.detailed || (o.forErrors && x["detailed"] == true)
	return report, m, nil
}

// binding returns the value bound to name in the first result.
func binding(rs rego.ResultSet, name string) any {
	if len(rs) == 0 {
		return nil
	}
	return rs[0].Bindings[name]
}

// newReport reads the findings value of a query into a Report.
func newReport(v any, objs []Object) (*Report, error) {
	report := &Report{Findings: []Finding{}, Errors: []LoadError{}, Summary: Summary{Objects: len(objs)}}
	if err := fromResult(v, &report.Findings, bytesToKeep(objs)); err != nil {
		return nil, fmt.Errorf("reading findings: %w", err)
	}
	sortFindings(report.Findings)
	for _, f := range report.Findings {
		if f.Waived != nil {
			report.Summary.Waived++
			continue
		}
		switch f.Severity {
		case SeverityError:
			report.Summary.Error++
		case SeverityWarning:
			report.Summary.Warning++
		case SeverityInfo:
			report.Summary.Info++
		}
	}
	return report, nil
}
