package lib.flipflop.rules.unmatched_application_selector_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.rules.unmatched_application_selector as rule

labelled(ns, name, labels) := object.union(f.app(name, "main"), {"metadata": {"namespace": ns, "labels": labels}})

select(labels) := f.stage("dev", "main", [{"selector": {"matchLabels": labels}}])

test_no_match if {
	estate := f.estate([labelled("argocd", "web", {"team": "web"}), select({"team": "wbe"})])
	findings := rule.report with input as estate
	count(findings) == 1
	some finding in findings
	finding.details == {"stage": "acme/dev", "namespace": "argocd", "selector": "team=wbe", "elsewhere": []}
}

test_match if {
	estate := f.estate([labelled("argocd", "web", {"team": "web"}), select({"team": "web"})])
	count(rule.report) == 0 with input as estate
}

test_match_elsewhere if {
	estate := f.estate([labelled("team-apps", "web", {"team": "web"}), select({"team": "web"})])
	some finding in rule.report with input as estate
	finding.details.elsewhere == ["team-apps/web"]
	contains(finding.message, "team-apps/web")
}

test_selector_with_vars if {
	stage := f.stage_steps("dev", [{"uses": "argocd-update", "config": {"apps": [{"selector": {"matchLabels": {"stage": "${{ ctx.stage }}"}}}]}}])
	count(rule.report) == 0 with input as f.estate([labelled("argocd", "web", {"stage": "dev"}), stage])
	count(rule.report) == 1 with input as f.estate([labelled("argocd", "web", {"stage": "qa"}), stage])
}

test_unknown_selector_value if {
	stage := f.stage_steps("dev", [{"uses": "argocd-update", "config": {"apps": [{"selector": {"matchLabels": {"stage": "${{ outputs.x.y }}"}}}]}}])
	count(rule.report) == 0 with input as f.estate([labelled("argocd", "web", {"stage": "dev"}), stage])
}

test_match_expressions if {
	sel := {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}
	stage := f.stage("dev", "main", [{"selector": sel}])
	some finding in rule.report with input as f.estate([labelled("argocd", "web", {"tier": "back"}), stage])
	finding.details.selector == "tier In (front)"
}

test_unknown_labels_silence if {
	appset := {
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": {"name": "apps", "namespace": "argocd"},
		"spec": {
			"generators": [{"git": {"repoURL": f.repo, "directories": [{"path": "env/*"}]}}],
			"template": {
				"metadata": {"name": "web-{{path.basename}}", "labels": {"team": "{{path.basename}}"}},
				"spec": {"source": {"repoURL": f.repo, "targetRevision": "main"}},
			},
		},
	}
	count(rule.report) == 0 with input as f.estate([appset, select({"team": "web"})])
}

# An empty selector selects nothing: Kargo rejects it before listing any
# Application, so it pins nothing and the rule says why.
test_empty_selector_is_rejected if {
	web := labelled("argocd", "web", {"team": "web"})
	stage := f.stage("web", "main", [{"selector": {"matchLabels": {}}, "sources": [f.pin_url(f.repo)]}])
	count(model.pins) == 0 with input as f.estate([web, stage])
	findings := rule.report with input as f.estate([web, stage])
	count(findings) == 1
	some finding in findings
	contains(finding.message, "selector must have at least one match criterion")
}
