package output

import (
	"github.com/flipflop-dev/flipflop/evaluator"
)

// fixtureRules is a fixed bundle: two rules that fire in fixtureReport, one
// that does not (shared-application), and none for the info finding's rule
// (legacy-mechanism), which renderers must describe from the finding.
func fixtureRules() []evaluator.Rule {
	return []evaluator.Rule{
		{
			ID:    "shared-write-branch",
			Title: "Several Stages push to one branch",
			Description: "Two or more Stages push to the same branch of the same repository. Their\n" +
				"pushes race.\n",
			Severity:    "warning",
			Remediation: "Prefer a branch per Stage (render into env/<stage> and push there).\n",
		},
		{
			ID:    "shared-branch-contradiction",
			Title: "Several Stages pin one floating pointer",
			Description: "Two or more Kargo Stages pin `desiredRevision` on Argo CD Applications that\n" +
				"track the head of one branch, e.g. `<project>:<stage>` & co.\n",
			Severity: "error",
			Remediation: "Give each Stage a pointer only it moves:\n" +
				"1. Stage-specific branches (recommended): push to env/<stage> and point the\n" +
				"   Application's targetRevision at it.\n" +
				"2. Stop setting desiredRevision.\n",
			Admission: true,
		},
		{
			ID:          "shared-application",
			Title:       "Several Stages pin one Application",
			Description: "Two or more Stages pin `desiredRevision` on the same Application.\n",
			Severity:    "error",
			Remediation: "Give each Stage its own Application.\n",
			Admission:   true,
		},
	}
}

// fixtureReport is a fixed report with a finding of every severity, a waived
// finding, a generated Application, a resource without a file (as from a cluster), a
// file name that needs escaping, and two load errors.
func fixtureReport() *evaluator.Report {
	return &evaluator.Report{
		Findings: []evaluator.Finding{
			{
				Rule:     "shared-branch-contradiction",
				Severity: "error",
				Title:    "Several Stages pin one floating pointer",
				Message: "Stages acme/dev, acme/qa all pin desiredRevision on Applications argocd/dev, argocd/qa, " +
					"which track github.com/acme/deploy @ main. Only one commit can be the head of it: every " +
					"promotion makes one Stage Healthy and the others Unhealthy.",
				Remediation: "Give each Stage a pointer only it moves:\n" +
					"1. Stage-specific branches (recommended): push to env/<stage> and point the\n" +
					"   Application's targetRevision at it.\n" +
					"2. Stop setting desiredRevision.\n",
				Resources: []evaluator.Resource{
					{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: "acme", Name: "dev", File: "gitops/kargo.yaml", Line: 18},
					{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: "acme", Name: "qa", File: "gitops/kargo.yaml", Line: 58},
					{APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Namespace: "argocd", Name: "dev", File: "gitops/argocd.yaml", Line: 2},
					{APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Namespace: "argocd", Name: "qa", File: "gitops/appsets.yaml", Line: 7, GeneratedBy: "ApplicationSet argocd/envs"},
				},
				Key:          "github.com/acme/deploy@main",
				Pointer:      "github.com/acme/deploy@main",
				PointerText:  "github.com/acme/deploy @ main",
				Stages:       []string{"acme/dev", "acme/qa"},
				Applications: []string{"argocd/dev", "argocd/qa"},
				Details: map[string]any{
					"pointer":  "github.com/acme/deploy @ main",
					"autoSync": map[string]any{"argocd/dev": true, "argocd/qa": "unknown"},
				},
			},
			{
				Rule:        "shared-write-branch",
				Severity:    "warning",
				Title:       "Several Stages push to one branch",
				Message:     "Stages acme/dev, acme/qa all push to github.com/acme/deploy @ main.",
				Remediation: "Prefer a branch per Stage (render into env/<stage> and push there).\n",
				Resources: []evaluator.Resource{
					{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: "acme", Name: "dev", File: "odd dir/a,b: 100%.yaml", Line: 3},
					{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: "acme", Name: "qa", File: "odd dir/a,b: 100%.yaml", Line: 40},
				},
				Key:         "github.com/acme/deploy@main",
				Pointer:     "github.com/acme/deploy@main",
				PointerText: "github.com/acme/deploy @ main",
				Stages:      []string{"acme/dev", "acme/qa"},
				Details:     map[string]any{"pointer": "github.com/acme/deploy @ main"},
			},
			{
				Rule:        "shared-write-branch",
				Severity:    "warning",
				Title:       "Several Stages push to one branch",
				Message:     "Stages acme/hotfix, acme/prod all push to github.com/acme/deploy @ release.",
				Remediation: "Prefer a branch per Stage (render into env/<stage> and push there).\n",
				Resources: []evaluator.Resource{
					{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: "acme", Name: "hotfix", File: "gitops/kargo.yaml", Line: 90},
					{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: "acme", Name: "prod", File: "gitops/kargo.yaml", Line: 120},
				},
				Key:         "github.com/acme/deploy@release",
				Pointer:     "github.com/acme/deploy@release",
				PointerText: "github.com/acme/deploy @ release",
				Stages:      []string{"acme/hotfix", "acme/prod"},
				Details:     map[string]any{"pointer": "github.com/acme/deploy @ release"},
				Waived:      &evaluator.Waived{Reason: "hotfixes go straight to release", By: "waiver 1 (shared-write-branch)", Expires: "2031-01-31"},
			},
			{
				Rule:        "legacy-mechanism",
				Severity:    "info",
				Title:       "Stage uses promotionMechanisms",
				Message:     "Stage acme/prod uses the legacy promotionMechanisms;\nflipflop reads 100% of it, but Kargo v1.x removed it.",
				Remediation: "Move to spec.promotionTemplate.steps.",
				Resources: []evaluator.Resource{
					{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: "acme", Name: "prod"},
				},
				Key: "acme/prod",
			},
		},
		Errors: []evaluator.LoadError{
			{Path: "charts/broken.yaml", Line: 4, Message: "yaml: line 4: mapping values are not allowed in this context"},
			{Path: "missing.yaml", Message: "no such file or directory"},
		},
		Summary: evaluator.Summary{Objects: 7, Error: 1, Warning: 1, Info: 1, Waived: 1},
		Kargo:   &evaluator.KargoVersion{Version: "v1.9.0", Source: ".flipflop.yaml:2"},
	}
}

// cleanReport is a report with nothing to say.
func cleanReport() *evaluator.Report {
	return &evaluator.Report{
		Findings: []evaluator.Finding{},
		Errors:   []evaluator.LoadError{},
		Summary:  evaluator.Summary{Objects: 6},
		Kargo:    &evaluator.KargoVersion{Version: "v1.11.2", Assumed: true},
	}
}
