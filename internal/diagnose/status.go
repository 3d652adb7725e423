package diagnose

import (
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// stageObject is the part of a Kargo Stage a diagnosis reads.
type stageObject struct {
	Status stageStatus `json:"status"`
}

// stageStatus is the part of a Kargo Stage's status a diagnosis reads
// (kargo.akuity.io/v1alpha1, v1.1 and later).
type stageStatus struct {
	Health *struct {
		Status string          `json:"status"`
		Issues []string        `json:"issues"`
		Output json.RawMessage `json:"output"`
	} `json:"health"`
	LastPromotion *struct {
		Name   string `json:"name"`
		Status *struct {
			Phase        string `json:"phase"`
			HealthChecks []struct {
				Uses   string `json:"uses"`
				Config struct {
					Apps []struct {
						Name             string   `json:"name"`
						Namespace        string   `json:"namespace"`
						DesiredRevisions []string `json:"desiredRevisions"`
						// DesiredRevision is the single-source form of Kargo before v1.1.
						DesiredRevision string `json:"desiredRevision"`
					} `json:"apps"`
				} `json:"config"`
			} `json:"healthChecks"`
		} `json:"status"`
	} `json:"lastPromotion"`
}

// appStatus is the part of an Argo CD Application a diagnosis reads.
type appStatus struct {
	Spec struct {
		Source *struct {
			RepoURL        string `json:"repoURL"`
			TargetRevision string `json:"targetRevision"`
		} `json:"source"`
		Sources []struct {
			RepoURL        string `json:"repoURL"`
			TargetRevision string `json:"targetRevision"`
		} `json:"sources"`
	} `json:"spec"`
	Status struct {
		Sync struct {
			Status    string   `json:"status"`
			Revision  string   `json:"revision"`
			Revisions []string `json:"revisions"`
		} `json:"sync"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
	} `json:"status"`
}

// revision returns what Argo CD reports for source i: status.sync.revisions[i],
// or status.sync.revision when revisions is empty (Kargo reads it the same way).
func (a *appStatus) revision(i int) string {
	if len(a.Status.Sync.Revisions) > 0 {
		if i >= 0 && i < len(a.Status.Sync.Revisions) {
			return a.Status.Sync.Revisions[i]
		}
		return ""
	}
	if i == 0 {
		return a.Status.Sync.Revision
	}
	return ""
}

// decode converts an object's value into v through JSON; objects of another
// shape decode to v's zero value.
func decode(o evaluator.Object, v any) bool {
	x, err := ast.JSON(o.Value)
	if err != nil {
		return false
	}
	b, err := json.Marshal(x)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// healthOutput reads the Application statuses Kargo copied into
// status.health.output: [{"applicationStatuses": [{"Namespace", "Name", "sync": {...}}]}].
// The field is a JSON value; a JSON string holding one is accepted too.
func healthOutput(raw json.RawMessage) map[string]appStatus {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var checks []struct {
		ApplicationStatuses []struct {
			Namespace string `json:"Namespace"`
			Name      string `json:"Name"`
			Sync      struct {
				Status    string   `json:"status"`
				Revision  string   `json:"revision"`
				Revisions []string `json:"revisions"`
			} `json:"sync"`
			Health struct {
				Status string `json:"status"`
			} `json:"health"`
		} `json:"applicationStatuses"`
	}
	if json.Unmarshal(raw, &checks) != nil {
		return nil
	}
	out := map[string]appStatus{}
	for _, c := range checks {
		for _, s := range c.ApplicationStatuses {
			var a appStatus
			a.Status.Sync.Status = s.Sync.Status
			a.Status.Sync.Revision = s.Sync.Revision
			a.Status.Sync.Revisions = s.Sync.Revisions
			a.Status.Health.Status = s.Health.Status
			out[s.Namespace+"/"+s.Name] = a
		}
	}
	return out
}

// mismatchRE matches one source of Kargo's revision-mismatch health issue
// (pkg/health/checker/builtin/argocd.go, unchanged since v0.9):
//
//	Source 0 with RepoURL https://... of Application "dev" in namespace "argocd" does not match the desired revision "abc".
var mismatchRE = regexp.MustCompile(`Source (\d+) with RepoURL (\S+) of Application "([^"]+)" in namespace "([^"]+)" does not match the desired revision "([^"]*)"`)

// MismatchPhrase is the part of Kargo's health issue that names the
// flip-flop symptom.
const MismatchPhrase = "does not match the desired revision"

// parseIssues extracts every (Application, source, desired revision) an issue
// list reports as not matching.
func parseIssues(issues []string) []Mismatch {
	var out []Mismatch
	for _, issue := range issues {
		for _, m := range mismatchRE.FindAllStringSubmatch(issue, -1) {
			i, _ := strconv.Atoi(m[1])
			out = append(out, Mismatch{Application: m[4] + "/" + m[3], Source: i, RepoURL: m[2], Desired: m[5]})
		}
	}
	return out
}
