package evaluator

import (
	"context"
	"encoding/json"
	"fmt"
)

// ModelQuery is the query behind Model.
const ModelQuery = "data.lib.flipflop.view.estate"

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

// ModelSource is one tracked source of an Application.
type ModelSource struct {
	Index          int     `json:"index"`
	RepoURL        string  `json:"repoURL"`
	TargetRevision any     `json:"targetRevision"`
	Pointer        Pointer `json:"pointer"`
}

// ModelApplication is an Application, written or generated.
type ModelApplication struct {
	Key       string        `json:"key"`
	Ref       Resource      `json:"ref"`
	AutoSync  any           `json:"autoSync"` // true, false or "unknown"
	NameKnown bool          `json:"nameKnown"`
	Sources   []ModelSource `json:"sources"`
}

// ModelStage is a Stage.
type ModelStage struct {
	Key string   `json:"key"`
	Ref Resource `json:"ref"`
}

// Pin is a Stage expecting an Application source at a revision of its choosing.
type Pin struct {
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
	// Step is the alias of the argocd-update step.
	Step        string `json:"step"`
	LegacyField bool   `json:"legacyField"`
}

// Write is a Stage's promotion pushing to a repository and branch.
type Write struct {
	Stage   string  `json:"stage"`
	RepoURL string  `json:"repoURL"`
	Pointer Pointer `json:"pointer"`
	Step    string  `json:"step"`
}

// Model is the model the rules read, as plain data: for drawing and
// explaining an estate.
type Model struct {
	Stages       []ModelStage       `json:"stages"`
	Applications []ModelApplication `json:"applications"`
	Pins         []Pin              `json:"pins"`
	Writes       []Write            `json:"writes"`
}

// Model evaluates the model over objs and returns it as plain data.
func (e *Evaluator) Model(ctx context.Context, objs []Object) (*Model, error) {
	rs, err := e.model.Eval(ctx, evalInput(Input(objs)))
	if err != nil {
		return nil, fmt.Errorf("evaluating the model: %w", err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("evaluating the model: %s is undefined", ModelQuery)
	}
	raw, err := json.Marshal(rs[0].Expressions[0].Value)
	if err != nil {
		return nil, err
	}
	var s Model
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("reading the model: %w", err)
	}
	return &s, nil
}
