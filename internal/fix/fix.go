// Package fix previews the ways out of flipflop's findings as changes to the
// manifests that were read: for each finding of shared-branch-contradiction,
// foreign-branch-writer, shared-application and unreachable-desired-revision,
// the ways that apply (drop desiredRevision, set updateTargetRevision, or move
// the Stages to branches of their own), each as minimal edits of the input
// files that keep their comments and formatting, rendered as a unified diff
// (for git apply) or as the patched documents.
//
//	report, _ := ev.Evaluate(ctx, objs)
//	model, _ := ev.Model(ctx, objs)
//	plan, _ := fix.New(objs, report, model, fix.Options{})
//	patch, _ := plan.Patch(fix.StageBranches)
//	fmt.Print(patch.Diff())
package fix

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Way is one way out of a finding.
type Way string

// The ways out, in the order they are offered.
const (
	// StageBranches moves each pinning Stage to a branch only it writes
	// (env/<stage>) and points its Application there (recommended).
	StageBranches Way = "stage-branches"
	// NoDesiredRevision drops desiredRevision from the argocd-update step.
	NoDesiredRevision Way = "no-desired-revision"
	// UpdateTargetRevision sets updateTargetRevision: true next to desiredRevision.
	UpdateTargetRevision Way = "update-target-revision"
)

// Ways lists every way, in the order they are offered.
func Ways() []Way { return []Way{StageBranches, NoDesiredRevision, UpdateTargetRevision} }

// TradeOff is a one-line summary of what a way costs.
func (w Way) TradeOff() string {
	switch w {
	case StageBranches:
		return "recommended: each Stage renders into a branch only it writes (env/<stage>) and its Application tracks it; the revision check stays"
	case NoDesiredRevision:
		return "smallest change: the flip-flop ends, but Kargo no longer checks that the Application runs the promoted commit"
	case UpdateTargetRevision:
		return `Kargo points the live Application at the pinned commit ("pseudo-GitOps", advised against in production); whatever re-applies the Application undoes it`
	}
	return ""
}

// Rules lists the rules whose findings fix handles: those whose METADATA says
// custom.fixable.
func Rules(rules []evaluator.Rule) []string {
	return evaluator.RuleIDs(rules, func(r evaluator.Rule) bool { return r.Fixable })
}

// Options tune New.
type Options struct {
	// Rules are the bundle's rules (Evaluator.Rules): fix handles the findings
	// of those marked fixable.
	Rules []evaluator.Rule
	// ReadFile reads an input file again (to patch it); nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// Dir is the directory the diff's paths are relative to; "" means the
	// root of the Git work tree that holds the current directory (git apply
	// reads paths from there, whatever directory it runs in), or the current
	// directory outside a work tree.
	Dir string
}

// Option is one way out of one finding.
type Option struct {
	Way Way
	// Applicable says whether the way applies; Reason says why not.
	Applicable bool
	Reason     string
	// Partial says the preview covers only part of the change (Notes say
	// which part is left to do by hand).
	Partial bool
	// Notes are what the user must know about this way for this finding:
	// warnings, and what was left out.
	Notes []string

	ops []op
}

// Proposal is a finding with its ways out.
type Proposal struct {
	Finding evaluator.Finding
	Options []Option
}

// Option returns the proposal's option for way w.
func (p *Proposal) Option(w Way) *Option {
	for i := range p.Options {
		if p.Options[i].Way == w {
			return &p.Options[i]
		}
	}
	return nil
}

// Plan holds the ways out of every finding fix handles.
type Plan struct {
	Proposals []Proposal
	estate    *estate
	dir       string
}

// op is one change a way makes, named by key so that findings asking for the
// same change make it once.
type op struct {
	key string
	run func(p *patchSet) error
}

// New works out the ways out of every finding of report that fix handles.
// objs are the objects report and model were computed from; their files are
// read again to be patched.
func New(objs []evaluator.Object, report *evaluator.Report, model *evaluator.Model, opt Options) (*Plan, error) {
	dir := opt.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = WorkTreeRoot(wd)
	}
	fixable := Rules(opt.Rules)
	if len(fixable) == 0 {
		return nil, fmt.Errorf("fix: no rule is fixable (pass the bundle's rules in Options.Rules)")
	}
	pl := &planner{e: newEstate(objs, model, opt.ReadFile), m: model, stagePlans: map[string]planResult{}}
	plan := &Plan{estate: pl.e, dir: dir}
	for _, f := range report.Findings {
		if !slices.Contains(fixable, f.Rule) || f.Waived != nil {
			continue // waived findings were accepted as they are
		}
		pins := model.PinsOf(f)
		prop := Proposal{Finding: f}
		for _, w := range Ways() {
			prop.Options = append(prop.Options, pl.option(w, f, pins))
		}
		plan.Proposals = append(plan.Proposals, prop)
	}
	return plan, nil
}

// planner works out options; it remembers per-Stage plans so that every
// finding asks for the same change of a Stage.
type planner struct {
	e          *estate
	m          *evaluator.Model
	stagePlans map[string]planResult
}

func (pl *planner) option(w Way, f evaluator.Finding, pins []evaluator.Pin) Option {
	o := Option{Way: w}
	if len(pins) == 0 {
		o.Reason = "the model names no pin for this finding"
		return o
	}
	var err error
	switch w {
	case NoDesiredRevision:
		err = pl.noDesiredRevision(&o, f, pins)
	case UpdateTargetRevision:
		err = pl.updateTargetRevision(&o, f, pins)
	case StageBranches:
		err = pl.stageBranches(&o, f, pins)
	}
	if err == nil {
		err = dryRun(o.ops)
	}
	if err != nil {
		o.Applicable, o.Reason, o.ops, o.Partial, o.Notes = false, err.Error(), nil, false, nil
		return o
	}
	o.Applicable = true
	return o
}

// dryRun makes an option's changes on the side, so that a change that cannot
// be made (an anchor, two edits that overlap) makes the option inapplicable
// rather than the patch fail.
func dryRun(ops []op) error {
	ps := &patchSet{files: map[*source]*edits{}, strip: map[*yaml.Node]*stripReq{}}
	for _, x := range ops {
		if err := x.run(ps); err != nil {
			return err
		}
	}
	if err := ps.resolveStrips(); err != nil {
		return err
	}
	for _, s := range ps.order {
		if _, err := ps.files[s].sorted(); err != nil {
			return err
		}
	}
	return nil
}

// pinLoc is where a pin is written: the sources[] entry of an argocd-update
// step, with the step and the collections that hold it.
type pinLoc struct {
	pin      evaluator.Pin
	stage    *stage
	step     *step
	appEntry *yaml.Node // the apps[] item
	sources  *yaml.Node // its sources sequence
	entry    *yaml.Node // the sources[] item
}

// locate finds where pin p is written: the model names its step and its
// apps[] and sources[] entries.
func (pl *planner) locate(p evaluator.Pin) (*pinLoc, error) {
	if p.Mechanisms {
		return nil, fmt.Errorf("Stage %s is written for Kargo <= 0.8 (promotionMechanisms): fix edits promotion steps only; move the Stage to promotionTemplate steps first", p.Stage)
	}
	st, err := pl.e.stage(p.Stage)
	if err != nil {
		return nil, err
	}
	sp, err := pl.e.step(p.Stage, p.Step)
	if err != nil {
		return nil, err
	}
	_, app, err := pl.e.node(p.AppEntry)
	if err != nil {
		return nil, err
	}
	_, e, err := pl.e.node(p.Entry)
	if err != nil {
		return nil, err
	}
	return &pinLoc{pin: p, stage: st, step: sp, appEntry: app, sources: lookup(app, "sources"), entry: e}, nil
}

// where names the place a pin is written, for messages: "kargo.yaml:56".
func (l *pinLoc) where() string {
	k, _ := entry(l.entry, "desiredRevision")
	if k == nil {
		k, _ = entry(l.entry, "desiredCommitFromStep")
	}
	return fmt.Sprintf("%s:%d", l.step.scope.src.path, k.Line)
}

// WorkTreeRoot returns the root of the Git work tree that holds dir (the
// nearest directory with a .git entry), or dir itself outside a work tree.
func WorkTreeRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}

// outside reports whether diff name n points out of the diff's directory.
func outside(n string) bool {
	return n == ".." || strings.HasPrefix(n, "../") || filepath.IsAbs(filepath.FromSlash(n))
}

// diffName is the path of file p for a diff: relative to dir when p lies
// under it, slash-separated.
func diffName(dir, p string) string {
	fp := filepath.FromSlash(p)
	if abs, err := filepath.Abs(fp); err == nil {
		if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(filepath.Clean(fp))
}
