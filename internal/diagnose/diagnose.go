// Package diagnose explains why Kargo Stages are Unhealthy with Kargo's
// "does not match the desired revision" issue: it reads the Stages' live
// status (the last Promotion's health checks and desired revisions), the
// Applications' status.sync.revision(s), and flipflop's static findings on the
// same objects, and says per Stage whether a configuration contradiction (the
// shared-branch flip-flop and its variants) explains it, or something else.
package diagnose

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// The kinds of contradiction that explain a desired-revision mismatch, most
// specific first. A rule says in its METADATA (custom.diagnose) which kind its
// findings are; a Diagnosis names that rule as its Cause, or CauseOther.
const (
	// SharedPointer: several Stages pin one floating pointer.
	SharedPointer = "shared-pointer"
	// SharedApplication: several Stages pin one Application.
	SharedApplication = "shared-app"
	// ForeignWriter: a Stage that does not pin a pointer pushes to it.
	ForeignWriter = "foreign-writer"
	// Unreachable: the desired revision can never be what Argo CD reports.
	Unreachable = "unreachable"
	// CauseOther is the Cause of a mismatch no contradiction explains.
	CauseOther = "other"
)

// kinds are the kinds of contradiction, most specific first.
var kinds = []string{SharedPointer, SharedApplication, ForeignWriter, Unreachable}

// Evidence says what a diagnosis rests on.
const (
	// EvidenceConfig: a static finding on the same objects, confirmed by the status.
	EvidenceConfig = "configuration"
	// EvidenceStatus: the live status alone (the static model could not tell,
	// e.g. an expression it cannot evaluate).
	EvidenceStatus = "status"
)

// Input is what a diagnosis reads.
type Input struct {
	// Objects are the objects read (after cluster.Merge). When a Stage or an
	// Application appears more than once, the copy with a status is used.
	Objects []evaluator.Object
	// Findings are the static findings on the same objects, and Model the
	// model they were computed with (their pins and writes are looked up there).
	Findings []evaluator.Finding
	Model    *evaluator.Model
	// Rules are the bundle's rules: which kind of contradiction each rule's
	// findings are (METADATA custom.diagnose), and each cause's remediation.
	Rules []evaluator.Rule
	// ArgoCDNamespace is where an Application lives when a health check omits
	// its namespace ("" means argocd).
	ArgoCDNamespace string
}

// Report is the result of a diagnosis. Its JSON form is documented in docs/cluster.md.
type Report struct {
	Diagnoses []Diagnosis           `json:"diagnoses"`
	Errors    []evaluator.LoadError `json:"errors"`
	Summary   Summary               `json:"summary"`
	// Note says why there is nothing to diagnose and how to get what is
	// needed (a live status), when the caller knows; lines apart by "\n".
	Note string `json:"note,omitempty"`
}

// Summary counts what was looked at.
type Summary struct {
	// Stages is the number of Stages read; WithStatus of them had a status
	// a diagnosis reads (status.health or status.lastPromotion), WithHealth
	// a health status.
	Stages     int `json:"stages"`
	WithStatus int `json:"withStatus"`
	WithHealth int `json:"withHealth"`
	// Unhealthy Stages, for any reason; Mismatch of them with the
	// desired-revision issue (one Diagnosis each).
	Unhealthy int `json:"unhealthy"`
	Mismatch  int `json:"mismatch"`
	// Contradictions is how many Diagnoses a configuration contradiction explains.
	Contradictions int `json:"contradictions"`
}

// Diagnosis explains one Unhealthy Stage.
type Diagnosis struct {
	Stage    string             `json:"stage"`
	Resource evaluator.Resource `json:"resource"`
	// Cause is the id of the rule whose kind of contradiction explains the
	// mismatch, or CauseOther; Contradiction is true for every cause but
	// CauseOther.
	Cause string `json:"cause"`
	// Kind is the kind of contradiction (SharedPointer, ...); "" for CauseOther.
	Kind          string `json:"kind,omitempty"`
	Contradiction bool   `json:"contradiction"`
	Evidence      string `json:"evidence"`
	Message       string `json:"message"`
	// Pointer is what the Applications track ("github.com/acme/deploy @ main"),
	// when a finding names it.
	Pointer string `json:"pointer,omitempty"`
	// Head is the revision the Applications report now, and HeadHeldBy the
	// Stages whose last Promotion pinned exactly that revision.
	Head       string       `json:"head,omitempty"`
	HeadHeldBy []string     `json:"headHeldBy"`
	Mismatches []Mismatch   `json:"mismatches"`
	Stages     []StageState `json:"stages"`
	// Issues are Kargo's health issues, verbatim.
	Issues      []string `json:"issues"`
	Promotion   string   `json:"promotion,omitempty"`
	Remediation string   `json:"remediation,omitempty"`
}

// Mismatch is one Application source whose revision is not the desired one.
type Mismatch struct {
	Application string `json:"application"`
	Source      int    `json:"source"`
	RepoURL     string `json:"repoURL"`
	Desired     string `json:"desired"`
	// Observed is the Application's status.sync.revisions[source] (or
	// status.sync.revision); empty when unknown.
	Observed   string `json:"observed"`
	SyncStatus string `json:"syncStatus,omitempty"`
	AppHealth  string `json:"appHealth,omitempty"`
}

// StageState is one Stage involved in a diagnosis: its health and the
// revisions its last Promotion pinned.
type StageState struct {
	Stage     string        `json:"stage"`
	Health    string        `json:"health"`
	Desired   []AppRevision `json:"desired"`
	HoldsHead bool          `json:"holdsHead"`
}

// AppRevision is the revision a Stage pinned on one Application source.
type AppRevision struct {
	Application string `json:"application"`
	Source      int    `json:"source"`
	Revision    string `json:"revision"`
}

// stage is a Stage as the diagnosis sees it.
type stage struct {
	key    string
	ref    evaluator.Resource
	status stageStatus
	has    bool // a status was read
}

func (s *stage) health() string {
	if s.status.Health == nil {
		return ""
	}
	return s.status.Health.Status
}

// pins returns the revisions the Stage's last Promotion asks Argo CD health
// checks to see, per Application source.
func (s *stage) pins(defaultNS string) []AppRevision {
	lp := s.status.LastPromotion
	if lp == nil || lp.Status == nil {
		return nil
	}
	var out []AppRevision
	for _, hc := range lp.Status.HealthChecks {
		if hc.Uses != "argocd-update" {
			continue
		}
		for _, a := range hc.Config.Apps {
			ns := cmp.Or(a.Namespace, defaultNS)
			revs := a.DesiredRevisions
			if len(revs) == 0 && a.DesiredRevision != "" {
				revs = []string{a.DesiredRevision}
			}
			for i, r := range revs {
				if r != "" {
					out = append(out, AppRevision{Application: ns + "/" + a.Name, Source: i, Revision: r})
				}
			}
		}
	}
	return out
}

// Diagnose explains every Stage that is Unhealthy with Kargo's
// desired-revision issue.
func Diagnose(in Input) *Report {
	defaultNS := cmp.Or(in.ArgoCDNamespace, "argocd")
	stages, apps := index(in.Objects, defaultNS)
	d := &diagnoser{in: in, defaultNS: defaultNS, stages: stages, apps: apps, remediation: map[string]string{}, ruleOf: map[string]string{}, kindOf: map[string]string{}}
	if d.in.Model == nil {
		d.in.Model = &evaluator.Model{}
	}
	for _, r := range in.Rules {
		d.remediation[r.ID] = r.Remediation
		if r.Diagnose != "" {
			d.kindOf[r.ID] = r.Diagnose
			if _, ok := d.ruleOf[r.Diagnose]; !ok {
				d.ruleOf[r.Diagnose] = r.ID
			}
		}
	}
	rep := &Report{Diagnoses: []Diagnosis{}, Errors: []evaluator.LoadError{}}
	keys := make([]string, 0, len(stages))
	for k := range stages {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rep.Summary.Stages = len(keys)
	for _, k := range keys {
		s := stages[k]
		if s.has {
			rep.Summary.WithStatus++
		}
		if s.health() == "" {
			continue
		}
		rep.Summary.WithHealth++
		if s.health() != "Unhealthy" {
			continue
		}
		rep.Summary.Unhealthy++
		if !slices.ContainsFunc(s.status.Health.Issues, func(i string) bool { return strings.Contains(i, MismatchPhrase) }) {
			continue
		}
		rep.Summary.Mismatch++
		diag := d.diagnose(s)
		if diag.Contradiction {
			rep.Summary.Contradictions++
		}
		rep.Diagnoses = append(rep.Diagnoses, diag)
	}
	return rep
}

// index collects Stages (the first copy with a status) and Application
// statuses by "namespace/name".
func index(objs []evaluator.Object, defaultNS string) (map[string]*stage, map[string]*appStatus) {
	stages := map[string]*stage{}
	apps := map[string]*appStatus{}
	for _, o := range objs {
		switch {
		case o.Kind == "Stage" && strings.HasPrefix(o.APIVersion, "kargo.akuity.io/"):
			key := o.Namespace + "/" + o.Name
			var so stageObject
			has := decode(o, &so) && (so.Status.Health != nil || so.Status.LastPromotion != nil)
			if prev, ok := stages[key]; ok && (prev.has || !has) {
				continue
			}
			stages[key] = &stage{key: key, status: so.Status, has: has, ref: evaluator.Resource{
				APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, File: o.Path, Line: o.Line,
			}}
		case o.Kind == "Application" && strings.HasPrefix(o.APIVersion, "argoproj.io/"):
			key := cmp.Or(o.Namespace, defaultNS) + "/" + o.Name
			var a appStatus
			if !decode(o, &a) {
				continue
			}
			if prev, ok := apps[key]; ok && prev.Status.Sync.Revision+strings.Join(prev.Status.Sync.Revisions, "") != "" {
				continue
			}
			apps[key] = &a
		}
	}
	return stages, apps
}

type diagnoser struct {
	in          Input
	defaultNS   string
	stages      map[string]*stage
	apps        map[string]*appStatus
	remediation map[string]string
	// ruleOf names the rule of each kind of contradiction, kindOf the kind of
	// each such rule.
	ruleOf, kindOf map[string]string
}

// cause returns the Cause for a kind of contradiction seen in the live status
// alone: the rule of that kind, or CauseOther when the bundle has none.
func (d *diagnoser) cause(kind string) string {
	if r, ok := d.ruleOf[kind]; ok {
		return r
	}
	return CauseOther
}

// observed fills a mismatch with what Argo CD reports, from the Application,
// or from the copy Kargo keeps in the Stage's health output.
func (d *diagnoser) observed(s *stage, m *Mismatch) {
	if a, ok := d.apps[m.Application]; ok && a.revision(m.Source) != "" {
		m.Observed, m.SyncStatus, m.AppHealth = a.revision(m.Source), a.Status.Sync.Status, a.Status.Health.Status
		return
	}
	if s.status.Health != nil {
		if a, ok := healthOutput(s.status.Health.Output)[m.Application]; ok {
			m.Observed, m.SyncStatus, m.AppHealth = a.revision(m.Source), a.Status.Sync.Status, a.Status.Health.Status
		}
	}
}

func (d *diagnoser) diagnose(s *stage) Diagnosis {
	diag := Diagnosis{
		Stage: s.key, Resource: s.ref, Issues: s.status.Health.Issues,
		HeadHeldBy: []string{}, Mismatches: parseIssues(s.status.Health.Issues), Stages: []StageState{},
	}
	if s.status.LastPromotion != nil {
		diag.Promotion = s.status.LastPromotion.Name
	}
	for i := range diag.Mismatches {
		d.observed(s, &diag.Mismatches[i])
	}
	mismatched := map[string]bool{}
	heads := map[string]bool{}
	for _, m := range diag.Mismatches {
		mismatched[m.Application] = true
		if m.Observed != "" {
			heads[m.Observed] = true
		}
	}
	if len(heads) == 1 {
		for h := range heads {
			diag.Head = h
		}
	}

	if f, ok := d.finding(s.key, mismatched); ok {
		d.fromFinding(&diag, s, f, heads)
	} else {
		d.fromStatus(&diag, s, heads)
	}
	diag.Contradiction = diag.Cause != CauseOther
	if diag.Contradiction {
		diag.Kind = d.kindOf[diag.Cause]
	}
	if diag.Contradiction {
		diag.Remediation = d.remediation[diag.Cause]
	}
	return diag
}

// finding returns the static finding that explains a Stage's mismatch: one
// of the most specific kind that pins on the Stage (for Unreachable, that is
// about the Stage) and, preferably, on a mismatched Application.
func (d *diagnoser) finding(stageKey string, mismatched map[string]bool) (evaluator.Finding, bool) {
	var fallback *evaluator.Finding
	for _, kind := range kinds {
		for i := range d.in.Findings {
			f := &d.in.Findings[i]
			if d.kindOf[f.Rule] != kind {
				continue
			}
			pinned := false
			for _, p := range d.in.Model.PinsOf(*f) {
				if p.Stage != stageKey {
					continue
				}
				pinned = true
				if mismatched[p.Application] {
					return *f, true
				}
			}
			if pinned && fallback == nil {
				fallback = f
			}
		}
	}
	if fallback != nil {
		return *fallback, true
	}
	return evaluator.Finding{}, false
}

func (d *diagnoser) fromFinding(diag *Diagnosis, s *stage, f evaluator.Finding, heads map[string]bool) {
	diag.Cause, diag.Evidence = f.Rule, EvidenceConfig
	kind := d.kindOf[f.Rule]
	pins := d.in.Model.PinsOf(f)
	pinners := map[string]bool{}
	for _, p := range pins {
		pinners[p.Stage] = true
		if diag.Pointer == "" && p.Pointer.Known {
			diag.Pointer = p.Pointer.Text
		}
	}
	involved := []string{s.key}
	if kind != Unreachable {
		involved = f.Stages
	}
	apps := map[string]bool{}
	for _, a := range f.Applications {
		apps[a] = true
	}
	d.states(diag, involved, apps, heads)
	mis := describeMismatches(diag.Mismatches)
	switch kind {
	case SharedPointer:
		others := without(involved, s.key)
		if len(diag.HeadHeldBy) > 0 && !slices.Contains(diag.HeadHeldBy, s.key) {
			diag.Message = fmt.Sprintf("Stage %s is Unhealthy because the promotion of %s moved %s to %s, which %s now reports instead of the %s that %s pinned. This is the shared-branch flip-flop: Stages %s pin desiredRevision on Applications that track the same branch head, so the next promotion of %s will turn %s Unhealthy in turn, while Argo CD shows the Applications Synced.",
				s.key, names(diag.HeadHeldBy), pointerOr(diag.Pointer), shortOr(diag.Head), appNames(diag.Mismatches), desiredOf(diag.Mismatches), s.key, names(involved), s.key, names(diag.HeadHeldBy))
		} else {
			diag.Message = fmt.Sprintf("Stage %s is Unhealthy: %s. No Stage's last Promotion pinned the head the Applications report, so a commit from elsewhere (another writer, a person, CI) moved %s; but Stages %s also pin desiredRevision on it, so their promotions make the Stages' health flip-flop as well.",
				s.key, mis, pointerOr(diag.Pointer), names(others))
		}
	case SharedApplication:
		diag.Message = fmt.Sprintf("Stage %s is Unhealthy: %s. Stages %s pin desiredRevision on the same Application: only one of their revisions can be what Argo CD reports, so their health flip-flops with every promotion.",
			s.key, mis, names(involved))
	case ForeignWriter:
		var writers []string
		for _, w := range d.in.Model.WritesOf(f) {
			if !pinners[w.Stage] && !slices.Contains(writers, w.Stage) {
				writers = append(writers, w.Stage)
			}
		}
		slices.Sort(writers)
		diag.Message = fmt.Sprintf("Stage %s is Unhealthy: %s. Stages %s push to %s, which these Applications track, without pinning them: every such push moves the head away from the revision %s pinned.",
			s.key, mis, names(writers), pointerOr(diag.Pointer), s.key)
	default:
		diag.Message = fmt.Sprintf("Stage %s is Unhealthy: %s. %s", s.key, mis, f.Message)
	}
}

// fromStatus diagnoses a Stage no static finding explains, from the live
// status alone.
func (d *diagnoser) fromStatus(diag *Diagnosis, s *stage, heads map[string]bool) {
	mis := describeMismatches(diag.Mismatches)
	for _, m := range diag.Mismatches {
		if !commitLike(m.Desired) {
			diag.Cause, diag.Evidence = d.cause(Unreachable), EvidenceStatus
			d.states(diag, []string{s.key}, map[string]bool{m.Application: true}, heads)
			diag.Message = fmt.Sprintf("Stage %s is Unhealthy: %s. The desired revision %q is not a commit: Argo CD always reports a resolved commit SHA, so it can never match. Pin a commit (e.g. ${{ commitFrom(repoURL).ID }} or the git-push step's output commit).",
				s.key, mis, m.Desired)
			return
		}
	}
	// Another Stage's last Promotion pinned exactly the revision these
	// Applications report: its push moved the pointer they track.
	var holders []string
	sameApp := false
	for _, k := range d.sortedStages() {
		if k == s.key {
			continue
		}
		for _, p := range d.stages[k].pins(d.defaultNS) {
			for _, m := range diag.Mismatches {
				if m.Observed != "" && p.Revision == m.Observed {
					holders = append(holders, k)
					sameApp = sameApp || p.Application == m.Application
				}
			}
		}
	}
	holders = slices.Compact(holders)
	if len(holders) > 0 {
		diag.Cause, diag.Evidence = d.cause(SharedPointer), EvidenceStatus
		if sameApp {
			diag.Cause = d.cause(SharedApplication)
		}
		apps := map[string]bool{}
		for _, m := range diag.Mismatches {
			apps[m.Application] = true
		}
		for _, h := range holders {
			for _, p := range d.stages[h].pins(d.defaultNS) {
				apps[p.Application] = true
			}
		}
		d.states(diag, append([]string{s.key}, holders...), apps, heads)
		diag.Message = fmt.Sprintf("Stage %s is Unhealthy: %s, the revision the last Promotion of %s pinned: that Stage's push moved the pointer these Applications track. This is the shared-branch flip-flop, seen in the live status (the static check could not confirm it from the configuration: an expression or generator it cannot evaluate).",
			s.key, mis, names(holders))
		return
	}
	diag.Cause = CauseOther
	diag.Evidence = EvidenceStatus
	d.states(diag, []string{s.key}, map[string]bool{}, heads)
	diag.Message = fmt.Sprintf("Stage %s is Unhealthy: %s. No configuration contradiction explains it and no other Stage pinned the revision the Applications report: the branch may have moved by a commit outside Kargo's promotions (a person or CI pushing), or Argo CD has not synced the promoted commit yet (a failed or pending sync, auto-sync off). Check the Application's sync status and history, and the Stage's last Promotion.",
		s.key, mis)
}

// states lists every involved Stage with its health and the revisions it
// pinned on the involved Applications, and records which hold the head.
func (d *diagnoser) states(diag *Diagnosis, involved []string, apps map[string]bool, heads map[string]bool) {
	involved = slices.Clone(involved)
	slices.Sort(involved)
	involved = slices.Compact(involved)
	for _, k := range involved {
		st := StageState{Stage: k, Desired: []AppRevision{}}
		if s, ok := d.stages[k]; ok {
			st.Health = s.health()
			for _, p := range s.pins(d.defaultNS) {
				if len(apps) > 0 && !apps[p.Application] {
					continue
				}
				st.Desired = append(st.Desired, p)
				if heads[p.Revision] {
					st.HoldsHead = true
				}
			}
		}
		if st.HoldsHead {
			diag.HeadHeldBy = append(diag.HeadHeldBy, k)
		}
		diag.Stages = append(diag.Stages, st)
	}
}

func (d *diagnoser) sortedStages() []string {
	keys := make([]string, 0, len(d.stages))
	for k := range d.stages {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// describeMismatches renders what Kargo compared: "Application argocd/qa
// reports abc, not def (source 0)".
func describeMismatches(ms []Mismatch) string {
	if len(ms) == 0 {
		return "Kargo reports a desired-revision mismatch it does not detail"
	}
	var parts []string
	for _, m := range ms {
		src := ""
		if m.Source > 0 {
			src = fmt.Sprintf(" (source %d)", m.Source)
		}
		obs := "no revision"
		if m.Observed != "" {
			obs = m.Observed
		}
		parts = append(parts, fmt.Sprintf("Application %s%s reports %s, not the desired %s", m.Application, src, obs, m.Desired))
	}
	return strings.Join(parts, "; ")
}

// appNames lists the mismatched Applications: "Application argocd/qa".
func appNames(ms []Mismatch) string {
	var apps []string
	for _, m := range ms {
		if !slices.Contains(apps, m.Application) {
			apps = append(apps, m.Application)
		}
	}
	if len(apps) == 1 {
		return "Application " + apps[0]
	}
	return "Applications " + names(apps)
}

// desiredOf lists the desired revisions of mismatches: "revision abc".
func desiredOf(ms []Mismatch) string {
	var revs []string
	for _, m := range ms {
		if !slices.Contains(revs, m.Desired) {
			revs = append(revs, m.Desired)
		}
	}
	if len(revs) == 1 {
		return "revision " + revs[0]
	}
	return "revisions " + names(revs)
}

var (
	shaRE    = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
	semverRE = regexp.MustCompile(`^v?\d+\.\d+\.\d+([-+].*)?$`)
)

// commitLike reports whether a revision can be a resolved commit (what Argo CD
// reports for git sources); Helm chart versions are accepted too.
func commitLike(rev string) bool {
	// A Helm chart version ("1.2.3") is what Argo CD reports for chart sources.
	return shaRE.MatchString(rev) || semverRE.MatchString(rev)
}

func without(ss []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(ss), func(x string) bool { return x == s })
}

func names(ss []string) string {
	switch len(ss) {
	case 0:
		return "(none)"
	case 1:
		return ss[0]
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

func pointerOr(p string) string {
	if p == "" {
		return "the branch these Applications track"
	}
	return p
}

func shortOr(h string) string {
	if h == "" {
		return "another commit"
	}
	return h
}
