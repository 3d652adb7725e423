package fix

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// locateAll finds where every pin is written.
func (pl *planner) locateAll(pins []evaluator.Pin) ([]*pinLoc, error) {
	var out []*pinLoc
	for _, p := range pins {
		l, err := pl.locate(p)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

func names(ss []string) string {
	ss = slices.Clone(ss)
	slices.Sort(ss)
	ss = slices.Compact(ss)
	return strings.Join(ss, ", ")
}

// appsPinnedTwice lists the Applications several Stages pin among pins.
func appsPinnedTwice(pins []evaluator.Pin) []string {
	by := map[string]map[string]bool{}
	for _, p := range pins {
		if by[p.Application] == nil {
			by[p.Application] = map[string]bool{}
		}
		by[p.Application][p.Stage] = true
	}
	var out []string
	for a, s := range by {
		if len(s) > 1 {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// noDesiredRevision: drop desiredRevision (or desiredCommitFromStep) from
// every pin of the finding.
func (pl *planner) noDesiredRevision(o *Option, f evaluator.Finding, pins []evaluator.Pin) error {
	locs, err := pl.locateAll(pins)
	if err != nil {
		return err
	}
	var stages, pairs []string
	for _, l := range locs {
		stages = append(stages, l.pin.Stage)
		pairs = append(pairs, fmt.Sprintf("%s (Stage %s)", l.pin.Application, l.pin.Stage))
		o.ops = append(o.ops, op{
			key: fmt.Sprintf("strip %s:%d:%d", l.step.scope.src.path, l.entry.Line, l.entry.Column),
			run: func(p *patchSet) error { p.stripEntry(l); return nil },
		})
	}
	o.Notes = append(o.Notes, fmt.Sprintf(
		"Without desiredRevision, Kargo no longer checks that these Applications run the commit their Stage promoted: %s. Add an argocd-wait step (Kargo v1.10+) after argocd-update if a promotion should wait for a healthy sync.",
		names(pairs)))
	o.Notes = append(o.Notes, pl.sharedTaskNotes(locs, pins)...)
	if len(appsPinnedTwice(pins)) > 0 {
		o.Notes = append(o.Notes, fmt.Sprintf("To keep the revision check for one of %s, keep that Stage's desiredRevision line and apply the rest of the patch.", names(stages)))
	}
	return nil
}

var shaRE = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

// updateTargetRevision: set updateTargetRevision: true next to every pin's
// desiredRevision, so that Kargo points the live Application at the pinned
// commit.
func (pl *planner) updateTargetRevision(o *Option, f evaluator.Finding, pins []evaluator.Pin) error {
	if twice := appsPinnedTwice(pins); len(twice) > 0 {
		return fmt.Errorf("the Stages would move one Application back and forth between their commits (%s); give each Stage its own Application, or drop desiredRevision", strings.Join(twice, ", "))
	}
	if err := pl.reverted(pins); err != nil {
		return err
	}
	for _, p := range pins {
		if p.DesiredClass == "literal" && !shaRE.MatchString(p.DesiredRevision) {
			return fmt.Errorf("desiredRevision %q is a ref, not a commit: the Application would track %q and Argo CD would still report a commit SHA", p.DesiredRevision, p.DesiredRevision)
		}
	}
	locs, err := pl.locateAll(pins)
	if err != nil {
		return err
	}
	for _, l := range locs {
		o.ops = append(o.ops, op{
			key: fmt.Sprintf("utr %s:%d:%d", l.step.scope.src.path, l.entry.Line, l.entry.Column),
			run: func(p *patchSet) error {
				return p.at(l.step.scope.src).set(l.entry, "updateTargetRevision", true, "desiredRevision", "desiredCommitFromStep")
			},
		})
		if p := l.pin; p.DesiredClass == "expression" {
			o.Notes = append(o.Notes, fmt.Sprintf("desiredRevision %s (Stage %s) must evaluate to a commit SHA (or, for a chart, its version): updateTargetRevision sets the Application's targetRevision to it.", p.DesiredRevision, p.Stage))
		}
	}
	o.Notes = append(o.Notes, pl.sharedTaskNotes(locs, pins)...)
	o.Notes = append(o.Notes, pl.revertWarnings(pins)...)
	return nil
}

// reverted refuses the way when an ApplicationSet generates a pinned
// Application and writes its template back over the change (the model's
// RevertsSpec): the rewrite would not last, and the contradiction would stay.
func (pl *planner) reverted(pins []evaluator.Pin) error {
	var appsets []string
	apps := map[string][]string{}
	fields := map[string][]string{}
	where := map[string]evaluator.Resource{}
	for _, p := range pins {
		ma, ms := pl.source(p)
		if ma == nil || !ma.RevertsSpec {
			continue
		}
		as := p.ApplicationRef.GeneratedBy
		if _, ok := apps[as]; !ok {
			appsets = append(appsets, as)
			where[as] = p.ApplicationRef
		}
		if !slices.Contains(apps[as], p.Application) {
			apps[as] = append(apps[as], p.Application)
		}
		field := strings.TrimPrefix(ms.Path, strings.TrimSuffix(ma.SpecPath, "/spec")) + "/targetRevision"
		if !slices.Contains(fields[as], field) {
			fields[as] = append(fields[as], field)
		}
	}
	if len(appsets) == 0 {
		return nil
	}
	var msgs []string
	for _, as := range appsets {
		msgs = append(msgs, fmt.Sprintf("%s (%s:%d) generates %s and writes its template back over their targetRevision at its next reconcile (policy sync, Argo CD's default); have it keep the field first (spec.ignoreApplicationDifferences: [{jsonPointers: [%s]}]; Argo CD v3.5.0 broke that, argoproj/argo-cd#29066)",
			as, where[as].File, where[as].Line, names(apps[as]), strings.Join(fields[as], ", ")))
	}
	return fmt.Errorf("updateTargetRevision would not last: %s", strings.Join(msgs, "; "))
}

// sharedTaskNotes says when a change to a PromotionTask also reaches Stages
// the finding does not involve.
func (pl *planner) sharedTaskNotes(locs []*pinLoc, pins []evaluator.Pin) []string {
	var out []string
	seen := map[*scope]bool{}
	for _, l := range locs {
		sc := l.step.scope
		if !sc.task || seen[sc] {
			continue
		}
		seen[sc] = true
		var others []string
		for _, u := range pl.e.taskUsers(sc.ref) {
			if !slices.ContainsFunc(pins, func(p evaluator.Pin) bool { return p.Stage == u }) {
				others = append(others, u)
			}
		}
		if len(others) > 0 {
			out = append(out, fmt.Sprintf("The change is to %s %s, which Stage %s also uses: it changes for them too.", sc.ref.Kind, refName(sc.ref), names(others)))
		}
	}
	return out
}

// revertWarnings says, for the pinned Applications, what would re-apply their
// targetRevision and undo updateTargetRevision.
func (pl *planner) revertWarnings(pins []evaluator.Pin) []string {
	var out []string
	seen := map[string]bool{}
	var plain []string // Applications read from files nothing is known to re-apply
	plainFields := map[string]bool{}
	for _, p := range pins {
		if seen[p.Application] {
			continue
		}
		seen[p.Application] = true
		ref := p.ApplicationRef
		ma, ms := pl.source(p)
		if ma == nil {
			continue
		}
		// The field Kargo rewrites, as the Application has it (an
		// ApplicationSet re-applies the rendered Application, not its template).
		field := strings.TrimPrefix(ms.Path, strings.TrimSuffix(ma.SpecPath, "/spec")) + "/targetRevision"
		if ref.GeneratedBy != "" {
			// The model says whether its ApplicationSet writes the change
			// back (reverted refuses the way then); otherwise it lasts.
			continue
		}
		if len(ma.SyncedBy) > 0 {
			parent := strings.Join(ma.SyncedBy, ", ")
			out = append(out, fmt.Sprintf(
				"WARNING: Application %s (%s:%d) looks synced by the parent Application %s (app of apps), which re-applies its targetRevision and undoes updateTargetRevision unless the parent ignores that field:\n"+
					"  spec:\n    ignoreDifferences:\n    - group: argoproj.io\n      kind: Application\n      jsonPointers:\n      - %s\n    syncPolicy:\n      syncOptions:\n      - RespectIgnoreDifferences=true",
				p.Application, ref.File, ref.Line, parent, field))
			continue
		}
		plain = append(plain, fmt.Sprintf("%s (%s:%d)", p.Application, ref.File, ref.Line))
		plainFields[field] = true
	}
	if len(plain) > 0 {
		var fs []string
		for f := range plainFields {
			fs = append(fs, f)
		}
		slices.Sort(fs)
		out = append(out, fmt.Sprintf(
			"Whatever re-applies these Applications' manifests (a parent app with auto-sync, a CI job) resets targetRevision and undoes updateTargetRevision unless it ignores %s: %s.",
			strings.Join(fs, " and "), strings.Join(plain, ", ")))
	}
	return out
}

// source returns the model's Application and source a pin is on.
func (pl *planner) source(p evaluator.Pin) (*evaluator.ModelApplication, *evaluator.ModelSource) {
	for _, a := range pl.m.Application(p.Application) {
		if a.Ref != p.ApplicationRef {
			continue
		}
		for i := range a.Sources {
			if a.Sources[i].Index == p.Source {
				return a, &a.Sources[i]
			}
		}
	}
	return nil, nil
}
