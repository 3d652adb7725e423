package lib.flipflop.rules.missing_authorized_stage_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.missing_authorized_stage as rule

annotated(name, value) := object.union(f.app(name, "main"), {"metadata": {"annotations": {"kargo.akuity.io/authorized-stage": value}}})

bare(name) := json.remove(f.app(name, "main"), ["metadata/annotations"])

test_missing_annotation if {
	estate := f.estate([bare("dev"), f.stage("dev", "main", [f.no_pin("dev")])])
	some finding in rule.report with input as estate
	contains(finding.message, "is missing")
	finding.details.wants == "acme:dev"
}

test_other_stage_named if {
	estate := f.estate([annotated("dev", "acme:qa"), f.stage("dev", "main", [f.no_pin("dev")])])
	count(rule.report) == 1 with input as estate
}

test_other_project_named if {
	estate := f.estate([annotated("dev", "other:dev"), f.stage("dev", "main", [f.no_pin("dev")])])
	count(rule.report) == 1 with input as estate
}

test_glob_rejected if {
	estate := f.estate([annotated("dev", "acme:*"), f.stage("dev", "main", [f.no_pin("dev")])])
	some finding in rule.report with input as estate
	contains(finding.message, "glob")
}

test_list_authorizes if {
	estate := f.estate([annotated("dev", "acme:qa, acme:dev"), f.stage("dev", "main", [f.no_pin("dev")])])
	count(rule.report) == 0 with input as estate
}

test_exact_authorizes if {
	estate := f.estate([f.app("dev", "main"), f.stage("dev", "main", [f.pin("dev")])])
	count(rule.report) == 0 with input as estate
}

selector := {"selector": {"matchLabels": {"team": "acme"}}}

labelled(name, value) := object.union(annotated(name, value), {"metadata": {"labels": {"team": "acme"}}})

test_selector_with_one_authorized_match_is_fine if {
	estate := f.estate([labelled("a", "acme:dev"), labelled("b", "acme:qa"), f.stage("dev", "main", [selector])])
	count(rule.report) == 0 with input as estate
}

test_selector_with_no_authorized_match if {
	estate := f.estate([labelled("a", "acme:qa"), labelled("b", "acme:qa"), f.stage("dev", "main", [selector])])
	some finding in rule.report with input as estate
	count(finding.details.applications) == 2
}

test_unknown_annotation_is_not_an_error if {
	estate := f.estate([annotated("dev", "acme:${{ applicationset-parameter }}"), f.stage("dev", "main", [f.no_pin("dev")])])
	count(rule.report) == 0 with input as estate
}

# A Stage whose file names no namespace has an unknown project: whether an
# Application authorizes it is unknown, never an error.
test_stage_without_namespace_is_not_judged if {
	estate := f.estate([annotated("dev", "acme:dev"), json.remove(f.stage("dev", "main", [f.no_pin("dev")]), ["metadata/namespace"])])
	count(rule.report) == 0 with input as estate
}

# With the run's namespace (-n) it is judged, and the message says where the
# project came from.
test_stage_in_the_runs_namespace if {
	estate := f.estate([annotated("dev", "acme:qa"), json.remove(f.stage("dev", "main", [f.no_pin("dev")]), ["metadata/namespace"])])
	some finding in rule.report with input as estate with data.lib.flipflop.config.settings as {"namespace": "acme"}
	finding.details.wants == "acme:dev"
	contains(finding.message, "its project acme is the namespace the run applies such manifests to, -n")
	some other in rule.report with input as estate with data.lib.flipflop.config.settings as {"namespace": "other"}
	other.details.wants == "other:dev"
}

# A key that looks meant for Kargo but is not the one it reads is named, with
# the one it reads (issue 22 item 6: a user blamed RBAC and removed the step).
test_near_miss_plural_named if {
	plural := object.union(bare("dev"), {"metadata": {"annotations": {"kargo.akuity.io/authorized-stages": "acme:dev"}}})
	some finding in rule.report with input as f.estate([plural, f.stage("dev", "main", [f.no_pin("dev")])])
	contains(finding.message, `the Application has annotation "kargo.akuity.io/authorized-stages": "acme:dev", which Kargo does not read`)
}

test_near_miss_label_named if {
	label := object.union(bare("dev"), {"metadata": {"labels": {"kargo.akuity.io/authorized-stage": "acme-dev"}}})
	some finding in rule.report with input as f.estate([label, f.stage("dev", "main", [f.no_pin("dev")])])
	contains(finding.message, `label "kargo.akuity.io/authorized-stage": "acme-dev"`)
}

test_near_miss_spelling_named if {
	british := object.union(bare("dev"), {"metadata": {"annotations": {"example.com/Authorised-Stage": "acme:dev", "unrelated": "x"}}})
	some finding in rule.report with input as f.estate([british, f.stage("dev", "main", [f.no_pin("dev")])])
	contains(finding.message, `annotation "example.com/Authorised-Stage"`)
	not contains(finding.message, "unrelated")
}

test_no_near_miss_says_missing if {
	some finding in rule.report with input as f.estate([bare("dev"), f.stage("dev", "main", [f.no_pin("dev")])])
	contains(finding.message, "kargo.akuity.io/authorized-stage is missing.")
}

# A selector's message names the near misses of the Applications it selects.
test_near_miss_named_for_a_selector if {
	app := object.union(f.app("dev", "main"), {"metadata": {
		"labels": {"env": "dev"},
		"annotations": {"kargo.akuity.io/authorized-stage": null, "kargo.akuity.io/authorized-stages": "acme:dev"},
	}})
	clean := json.remove(app, ["metadata/annotations/kargo.akuity.io~1authorized-stage"])
	stage := f.stage("dev", "main", [{"selector": {"matchLabels": {"env": "dev"}}}])
	some finding in rule.report with input as f.estate([clean, stage])
	contains(finding.message, `argocd/dev has annotation "kargo.akuity.io/authorized-stages": "acme:dev"`)
}

# A step at or before the argocd-update step that fails on its config ends the
# promotion first, with another message: the finding says so, and quotes Kargo's
# "not authorized" as what comes once that is fixed (issue 40, item 4).
commit_then_update(app) := f.stage_steps("dev", [
	{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./out"}]}},
	{"uses": "git-commit", "as": "commit", "config": {"path": "./out", "messageFromSteps": ["msg"]}},
	{"uses": "git-push", "as": "push", "config": {"path": "./out"}},
	{"uses": "argocd-update", "config": {"apps": [{"name": app}]}},
])

test_earlier_step_fails_first if {
	estate := f.estate([bare("dev"), commit_then_update("dev")])
	some finding in rule.report with input as estate
	contains(finding.message, concat(" ", [
		"kargo.akuity.io/authorized-stage is missing. On Kargo v1.11.2 (assumed: name yours with --kargo-version) the promotion does not get that far:",
		`it fails first at step "commit" (git-commit), on its config (invalid-step-config).`,
		`Once that is fixed, it fails here with "Argo CD Application "dev" in namespace "argocd" is not authorized".`,
	]))
	finding.severity == "error"

	# v1.4 has messageFromSteps: the authorization is what fails.
	some older in rule.report with input as estate with data.lib.flipflop.config.settings as {"kargo_version": "v1.4.0"}
	contains(older.message, `is missing. The promotion fails with "Argo CD Application "dev" in namespace "argocd" is not authorized".`)
}

test_update_step_fails_first_on_its_schema if {
	update := {"uses": "argocd-update", "config": {"apps": [{"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "push"}]}]}}
	estate := f.estate([bare("dev"), f.stage_steps("dev", [update])])
	some finding in rule.report with input as estate with data.lib.flipflop.config.settings as {"kargo_version": "v1.6.0"}
	contains(finding.message, `On Kargo v1.6.0 the promotion does not get that far: it fails first at step "step-0" (argocd-update), on its config (unsupported-field).`)
}

# Every step before the update that fails on its config is named: the first,
# where the promotion stops, and the others, which fail once it is fixed.
test_every_earlier_failing_step_named if {
	steps := [
		{"uses": "git-clone", "as": "clone", "config": {"repoURL": f.repo, "checkout": {"branch": "main"}}},
		{"uses": "git-commit", "as": "commit", "config": {"path": "./out", "messageFromSteps": ["msg"]}},
		{"uses": "argocd-update", "config": {"apps": [{"name": "dev"}]}},
	]
	some finding in rule.report with input as f.estate([bare("dev"), f.stage_steps("dev", steps)])
	contains(finding.message, concat(" ", [
		`it fails first at step "clone" (git-clone), on its config (invalid-step-config);`,
		`after it, step "commit" (git-commit) fails on its config too (invalid-step-config).`,
		`Once those are fixed, it fails here with`,
	]))
}

# A failing step after the update does not come first.
test_later_step_does_not_come_first if {
	steps := [
		{"uses": "argocd-update", "config": {"apps": [{"name": "dev"}]}},
		{"uses": "git-commit", "config": {"path": "./out", "messageFromSteps": ["msg"]}},
	]
	some finding in rule.report with input as f.estate([bare("dev"), f.stage_steps("dev", steps)])
	contains(finding.message, "is missing. The promotion fails with")
}

# A task's step comes where the task step stands in the Stage's steps.
test_task_step_fails_first if {
	task := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "PromotionTask",
		"metadata": {"name": "render", "namespace": "acme"},
		"spec": {"steps": [
			{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./out"}]}},
			{"uses": "git-commit", "as": "commit", "config": {"path": "./out", "messageFromSteps": ["msg"]}},
		]},
	}
	steps := [
		{"task": {"name": "render"}, "as": "render"},
		{"uses": "argocd-update", "config": {"apps": [{"name": "dev"}]}},
	]
	some finding in rule.report with input as f.estate([bare("dev"), task, f.stage_steps("dev", steps)])
	contains(finding.message, `it fails first at step "render::commit" (git-commit), on its config (invalid-step-config).`)
}
