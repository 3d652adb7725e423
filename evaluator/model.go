package evaluator

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/rego"
)

// ModelQuery is the model view Model returns; DetailedModelQuery the one it
// returns with the Detailed option.
const (
	ModelQuery         = "data.lib.flipflop.view.estate"
	DetailedModelQuery = "data.lib.flipflop.view.detailed"
)

// ModelOption tunes what Model and Analyze return.
type ModelOption func(*modelOptions)

type modelOptions struct{ detailed, forErrors bool }

func (o modelOptions) view() string {
	if o.detailed {
		return DetailedModelQuery
	}
	return ModelQuery
}

func modelOptionsOf(opts []ModelOption) modelOptions {
	var o modelOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Detailed makes the model also say what a tool that edits the estate needs:
// every promotion step of every Stage (ModelStage.Steps), the steps that
// commit and edit each write's work tree (Write.Commits, Write.Edits), the
// source values the model cannot know (ModelSource.UnknownFields) and the
// Applications that sync each written one (ModelApplication.SyncedBy).
// Without it those fields are empty; computing them costs a second pass over
// the Stages' steps.
func Detailed() ModelOption { return func(o *modelOptions) { o.detailed = true } }

// DetailedForErrors is Detailed for Analyze when some finding is an error,
// and the plain model otherwise (Model.Detailed says which): what a digest of
// the findings needs, since it offers ways out for errors only. Model ignores
// it.
func DetailedForErrors() ModelOption { return func(o *modelOptions) { o.forErrors = true } }

// Pointer is what an Application source tracks, or what a Stage pushes to.
type Pointer struct {
	// Key identifies the pointer: "github.com/acme/deploy@main"; "" when unknown.
	Key      string `json:"key"`
	Known    bool   `json:"known"`
	Floating bool   `json:"floating"`
	Repo     string `json:"repo"`
	// Kind is branch, tag, sha, semver, version or unknown.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Assumed: HEAD was taken to be Name (no default branch configured).
	Assumed bool `json:"assumed"`
	// Text is the pointer for people: "github.com/acme/deploy @ main".
	Text string `json:"text"`
}

// Location is a place in an object: the object (with its file and line) and a
// JSON pointer (RFC 6901) into it, such as "/spec/promotionTemplate/spec/steps/2".
type Location struct {
	Ref  Resource `json:"ref"`
	Path string   `json:"path"`
}

// ModelSource is one tracked source of an Application.
type ModelSource struct {
	Index int `json:"index"`
	// Path is the JSON pointer of the source in the Application's holder
	// (ModelApplication.Object): "/spec/source", "/spec/sources/1",
	// "/spec/sourceHydrator/syncSource", or under an ApplicationSet's template.
	Path           string `json:"path"`
	RepoURL        string `json:"repoURL"`
	TargetRevision any    `json:"targetRevision"`
	Chart          string `json:"chart"`
	Hydrator       bool   `json:"hydrator"`
	// Fields is the source as the Application has it (rendered, for a
	// generated one): path, helm, kustomize, directory, ...
	Fields map[string]any `json:"fields"`
	// UnknownFields are the JSON pointers (into Fields) of the values the
	// model cannot know (an expression, an ApplicationSet parameter nobody can
	// know; with Detailed).
	UnknownFields []string `json:"unknownFields"`
	Pointer       Pointer  `json:"pointer"`
}

// Generator says how an ApplicationSet renders a generated Application.
type Generator struct {
	AppSet Resource `json:"appset"`
	// TemplatePath is the JSON pointer of the template that renders the
	// Application: "/spec/template", or a generator's own template.
	TemplatePath  string `json:"templatePath"`
	TemplatePatch bool   `json:"templatePatch"`
	GoTemplate    bool   `json:"goTemplate"`
	// ParamsKnown is false when a generator's parameters cannot be known
	// (git without --repo-root, clusters, pull requests, ...).
	ParamsKnown bool           `json:"paramsKnown"`
	Params      map[string]any `json:"params"`
	// Elements are the generator elements behind the parameters.
	Elements []Element `json:"elements"`
}

// Element is one generator element: its JSON pointer in the ApplicationSet and
// the generator that wrote it ("list"; "git" for elements expanded from a
// checkout by --repo-root, from a git generator or a matrix with a git child,
// which exist in no file).
type Element struct {
	Path      string `json:"path"`
	Generator string `json:"generator"`
}

// ModelApplication is an Application, written or generated.
type ModelApplication struct {
	Key       string   `json:"key"`
	Ref       Resource `json:"ref"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	AutoSync  any      `json:"autoSync"` // true, false or "unknown"
	NameKnown bool     `json:"nameKnown"`
	// Object is where the Application's spec is written (the Application, or
	// the ApplicationSet that generates it) and SpecPath the spec's JSON
	// pointer there.
	Object   Resource `json:"object"`
	SpecPath string   `json:"specPath"`
	// SourcesField is source, sources or sourceHydrator: where the tracked
	// sources are read from ("" for none).
	SourcesField string `json:"sourcesField"`
	// RevertsSpec says the ApplicationSet that generates the Application
	// writes its template back over a change to its spec (policy sync or
	// create-update, no ignoreApplicationDifferences): a targetRevision Kargo
	// rewrites does not last.
	RevertsSpec          bool          `json:"revertsSpec"`
	DestinationNamespace string        `json:"destinationNamespace"`
	Sources              []ModelSource `json:"sources"`
	// Generator is set for a generated Application.
	Generator *Generator `json:"generator"`
	// SyncedBy are the written Applications whose source path is the
	// directory this Application's file is in (app of apps): syncing them
	// re-applies this Application's manifest (with Detailed).
	SyncedBy []string `json:"syncedBy"`
}

// Step is one promotion step of a Stage, inflated as Kargo runs it.
type Step struct {
	// ID identifies the step in the model (pins and writes name steps by it).
	ID    string `json:"id"`
	Alias string `json:"alias"`
	Uses  string `json:"uses"`
	// Index is the step's position in its scope's steps.
	Index int `json:"index"`
	// Task is the alias of the task step that brought the step in ("" for the
	// Stage's own steps); TaskResolved is false for a task step whose task no
	// input defines (the step is then a placeholder with no Uses).
	Task         string `json:"task"`
	TaskResolved bool   `json:"taskResolved"`
	// Origin is where the step is written.
	Origin Location `json:"origin"`
	// Scope is the list of steps the step belongs to: the Stage's own
	// (Ref the Stage) or a task's (Ref the PromotionTask or
	// ClusterPromotionTask), with that task step's alias.
	Scope Scope `json:"scope"`
	// Via is, for a task's step, the JSON pointer of the Stage's task step.
	Via string `json:"via"`
	// Config is the step's config with ctx and vars substituted as Kargo
	// would; expressions the model cannot know stay as written.
	Config map[string]any `json:"config"`
}

// Scope is a list of promotion steps.
type Scope struct {
	Ref  Resource `json:"ref"`
	Path string   `json:"path"`
	Task string   `json:"task"`
}

// ModelStage is a Stage.
type ModelStage struct {
	Key     string   `json:"key"`
	Ref     Resource `json:"ref"`
	Project string   `json:"project"`
	Name    string   `json:"name"`
	// Upstream are the Stages it takes Freight from.
	Upstream []string `json:"upstream"`
	// Steps are its promotion steps as Kargo runs them (with Detailed).
	Steps []Step `json:"steps"`
}

// Pin is a Stage expecting an Application source at a revision of its choosing.
type Pin struct {
	ID             string   `json:"id"`
	Stage          string   `json:"stage"`
	Application    string   `json:"application"`
	ApplicationRef Resource `json:"applicationRef"`
	Source         int      `json:"source"`
	RepoURL        string   `json:"repoURL"`
	Pointer        Pointer  `json:"pointer"`
	// DesiredRevision as written, with ctx and vars substituted.
	DesiredRevision string `json:"desiredRevision"`
	// DesiredClass: own (the Stage's own commit), freight, literal or expression.
	DesiredClass string `json:"desiredClass"`
	// Step is the id of the argocd-update step, StepAlias its alias.
	Step      string `json:"step"`
	StepAlias string `json:"stepAlias"`
	// Entry is the sources[] entry that makes the pin, AppEntry its apps[] entry.
	Entry    Location `json:"entry"`
	AppEntry Location `json:"appEntry"`
	// Via is how the apps[] entry reaches the Application: name, pattern or selector.
	Via         string `json:"via"`
	LegacyField bool   `json:"legacyField"`
	// Mechanisms marks a pin of a Stage written for Kargo <= 0.8
	// (promotionMechanisms): Entry and AppEntry are then its argoCDAppUpdates
	// entry, and Step names that entry, not a promotion step.
	Mechanisms bool `json:"mechanisms"`
	// AutoSync of the pinned Application: true, false or "unknown".
	AutoSync any `json:"autoSync"`
	// Latent marks the pin of a Stage whose promotions always fail today
	// (an Application that does not authorize it, a source no entry
	// matches, a step config Kargo rejects): Kargo checks it only once that
	// is fixed, so it contradicts nothing now.
	Latent bool `json:"latent"`
}

// Write is a Stage's promotion pushing to a repository and branch.
type Write struct {
	ID      string  `json:"id"`
	Stage   string  `json:"stage"`
	RepoURL string  `json:"repoURL"`
	Pointer Pointer `json:"pointer"`
	// Step is the id of the push step (StepAlias its alias), Origin where it is written.
	Step      string   `json:"step"`
	StepAlias string   `json:"stepAlias"`
	Origin    Location `json:"origin"`
	// BranchFrom says where the branch comes from: targetBranch, checkout (the
	// branch the work tree checked out), pull-request (generateTargetBranch: the
	// target of PullRequest, a git-open-pr step id), generated, or writeBranch
	// (legacy promotionMechanisms).
	BranchFrom  string `json:"branchFrom"`
	PullRequest string `json:"pullRequest"`
	// Clone is the id of the git-clone step whose checkout Checkout (an index
	// into its checkout list) holds the pushed work tree; "" for legacy writes.
	Clone    string `json:"clone"`
	Checkout int    `json:"checkout"`
	// WorkTree is the checkout's path and Path the push's, both resolved and
	// cleaned ("" for the root of the work area).
	WorkTree string `json:"workTree"`
	Path     string `json:"path"`
	// Commits are the ids of the git-commit steps that commit the work tree
	// before the push (same steps list, between clone and push, same path);
	// Edits the ids of the other steps that change files under it before the
	// first commit (both with Detailed).
	Commits []string `json:"commits"`
	Edits   []string `json:"edits"`
}

// Model is the model the rules read, as plain data, with provenance: for
// drawing, explaining and editing an estate.
type Model struct {
	Stages       []ModelStage       `json:"stages"`
	Applications []ModelApplication `json:"applications"`
	Pins         []Pin              `json:"pins"`
	Writes       []Write            `json:"writes"`

	// Detailed says the model was computed with what Detailed adds.
	Detailed bool `json:"-"`

	stages map[string]int
	apps   map[string][]int
	steps  map[string][2]int
	pins   map[string]int
	writes map[string]int
}

func (m *Model) index() {
	m.stages = make(map[string]int, len(m.Stages))
	m.steps = map[string][2]int{}
	for i, s := range m.Stages {
		if _, dup := m.stages[s.Key]; !dup {
			m.stages[s.Key] = i
		}
		for j, st := range s.Steps {
			m.steps[st.ID] = [2]int{i, j}
		}
	}
	m.apps = make(map[string][]int, len(m.Applications))
	for i, a := range m.Applications {
		m.apps[a.Key] = append(m.apps[a.Key], i)
	}
	m.pins = make(map[string]int, len(m.Pins))
	for i, p := range m.Pins {
		m.pins[p.ID] = i
	}
	m.writes = make(map[string]int, len(m.Writes))
	for i, w := range m.Writes {
		m.writes[w.ID] = i
	}
}

// The lookups below use the index a Model read from the policies has; a
// Model built by hand is scanned.

// Stage returns the Stage with key ("project/name"), or nil.
func (m *Model) Stage(key string) *ModelStage {
	if m.stages != nil {
		if i, ok := m.stages[key]; ok {
			return &m.Stages[i]
		}
		return nil
	}
	for i := range m.Stages {
		if m.Stages[i].Key == key {
			return &m.Stages[i]
		}
	}
	return nil
}

// Step returns the step with id, or nil.
func (m *Model) Step(id string) *Step {
	if m.steps != nil {
		if ij, ok := m.steps[id]; ok {
			return &m.Stages[ij[0]].Steps[ij[1]]
		}
		return nil
	}
	for i := range m.Stages {
		for j := range m.Stages[i].Steps {
			if m.Stages[i].Steps[j].ID == id {
				return &m.Stages[i].Steps[j]
			}
		}
	}
	return nil
}

// Application returns the Applications with key ("namespace/name"): usually
// one, more when an estate defines or generates it twice.
func (m *Model) Application(key string) []*ModelApplication {
	var out []*ModelApplication
	if m.apps != nil {
		for _, i := range m.apps[key] {
			out = append(out, &m.Applications[i])
		}
		return out
	}
	for i := range m.Applications {
		if m.Applications[i].Key == key {
			out = append(out, &m.Applications[i])
		}
	}
	return out
}

// Pin returns the pin with id, or nil.
func (m *Model) Pin(id string) *Pin {
	if m.pins != nil {
		if i, ok := m.pins[id]; ok {
			return &m.Pins[i]
		}
		return nil
	}
	for i := range m.Pins {
		if m.Pins[i].ID == id {
			return &m.Pins[i]
		}
	}
	return nil
}

// Write returns the write with id, or nil.
func (m *Model) Write(id string) *Write {
	if m.writes != nil {
		if i, ok := m.writes[id]; ok {
			return &m.Writes[i]
		}
		return nil
	}
	for i := range m.Writes {
		if m.Writes[i].ID == id {
			return &m.Writes[i]
		}
	}
	return nil
}

// PinsOf returns the pins a finding is about, in the finding's order.
func (m *Model) PinsOf(f Finding) []Pin {
	var out []Pin
	for _, id := range f.Pins {
		if p := m.Pin(id); p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// WritesOf returns the writes a finding is about, in the finding's order.
func (m *Model) WritesOf(f Finding) []Write {
	var out []Write
	for _, id := range f.Writes {
		if w := m.Write(id); w != nil {
			out = append(out, *w)
		}
	}
	return out
}

// Model evaluates the model over objs and returns it as plain data. Tools that
// also need the findings call Analyze, which evaluates both at once.
func (e *Evaluator) Model(ctx context.Context, objs []Object, opts ...ModelOption) (*Model, error) {
	pq, err := e.prepare(ctx, modelQuery(modelOptionsOf(opts)))
	if err != nil {
		return nil, err
	}
	in, err := input(objs)
	if err != nil {
		return nil, err
	}
	rs, err := pq.Eval(ctx, rego.EvalParsedInput(in), evalCache())
	if err != nil {
		return nil, fmt.Errorf("evaluating the model: %w", err)
	}
	m, err := newModel(binding(rs, "model"), objs)
	if err != nil {
		return nil, err
	}
	m.Detailed = modelOptionsOf(opts).detailed
	return m, nil
}

// newModel reads the model view value of a query.
func newModel(v any, objs []Object) (*Model, error) {
	if v == nil {
		return nil, fmt.Errorf("evaluating the model: %s is undefined", ModelQuery)
	}
	var m Model
	if err := fromResult(v, &m, bytesToKeep(objs)); err != nil {
		return nil, fmt.Errorf("reading the model: %w", err)
	}
	m.index()
	return &m, nil
}
