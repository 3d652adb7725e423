package lib.flipflop.rules.application_in_other_namespace_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.application_in_other_namespace as rule
import data.lib.flipflop.rules.unknown_application

team_app := object.union(f.app("dev", "main"), {"metadata": {"namespace": "team-a"}})

test_namespace_omitted_app_elsewhere if {
	estate := f.estate([team_app, f.stage("dev", "main", [f.no_pin("dev")])])
	count(unknown_application.report) == 0 with input as estate
	findings := rule.report with input as estate
	count(findings) == 1
	some finding in findings
	finding.details.application == "argocd/dev"
	finding.details.elsewhere == ["team-a/dev"]
	[r.namespace | some r in finding.resources] == ["acme", "team-a"]
}

test_namespace_given if {
	estate := f.estate([team_app, f.stage("dev", "main", [{"name": "dev", "namespace": "team-a"}])])
	count(rule.report) == 0 with input as estate
}

test_nowhere_is_unknown_application if {
	estate := f.estate([f.stage("dev", "main", [f.no_pin("dev")])])
	count(rule.report) == 0 with input as estate
	count(unknown_application.report) == 1 with input as estate
}

test_generated_name_pattern_elsewhere if {
	appset := {
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": {"name": "apps", "namespace": "team-a"},
		"spec": {
			"generators": [{"git": {"repoURL": f.repo, "directories": [{"path": "env/*"}]}}],
			"template": {"metadata": {"name": "web-{{path.basename}}"}, "spec": {"source": {"repoURL": f.repo, "targetRevision": "main"}}},
		},
	}
	estate := f.estate([appset, f.stage("dev", "main", [f.no_pin("web-dev")])])
	some finding in rule.report with input as estate
	finding.details.elsewhere == ["team-a/web-dev"]
}

test_fully_unknown_name_elsewhere_is_not_a_namesake if {
	appset := {
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": {"name": "apps", "namespace": "team-a"},
		"spec": {
			"generators": [{"git": {"repoURL": f.repo, "directories": [{"path": "env/*"}]}}],
			"template": {"metadata": {"name": "{{path.basename}}"}, "spec": {"source": {"repoURL": f.repo, "targetRevision": "main"}}},
		},
	}
	estate := f.estate([appset, f.stage("dev", "main", [f.no_pin("web-dev")])])
	count(rule.report) == 0 with input as estate
	count(unknown_application.report) == 1 with input as estate
}

test_legacy_app_namespace if {
	stage := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": {"name": "dev", "namespace": "acme"},
		"spec": {"promotionMechanisms": {"argoCDAppUpdates": [{"appName": "dev"}]}},
	}
	some finding in rule.report with input as f.estate([team_app, stage])
	finding.details.application == "argocd/dev"
}
