package lib.flipflop.rules.unsupported_field_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.rules.shared_branch_contradiction
import data.lib.flipflop.rules.unsupported_field as rule

entry(source) := {"name": "dev", "sources": [object.union({"repoURL": f.repo}, source)]}

estate(source) := f.estate([f.app("dev", "main"), f.stage("dev", "main", [entry(source)])])

test_desired_commit_from_step_on_the_newest_kargo if {
	findings := rule.report with input as estate({"desiredCommitFromStep": "push"})
	count(findings) == 1
	some finding in findings
	finding.severity == "warning"
	finding.details.field == "desiredCommitFromStep"
	finding.details.kargoVersion == "v1.11.2"
	contains(finding.message, "which Kargo v1.11.2 does not have (it was removed in v1.3.0)")
	contains(finding.message, "flipflop assumed the newest Kargo it models, so this is a warning")
	contains(finding.message, "(then it is an error if it holds there)")
}

# Named, the version makes the failure certain: an error, with no word of an
# assumption.
test_desired_commit_from_step_on_a_named_kargo_is_an_error if {
	some finding in rule.report with input as estate({"desiredCommitFromStep": "push"})
		with data.lib.flipflop.config.settings as {"kargo_version": "v1.9.0"}
	finding.severity == "error"
	not contains(finding.message, "assumed")
}

test_desired_commit_from_step_on_a_kargo_that_has_it if {
	count(rule.report) == 0 with input as estate({"desiredCommitFromStep": "push"}) with data.lib.flipflop.config.settings as {"kargo_version": "v1.2.4"}
}

test_desired_revision_before_v1_1 if {
	count(rule.report) == 0 with input as estate({"desiredRevision": "${{ outputs.push.commit }}"})
	some finding in rule.report with input as estate({"desiredRevision": "${{ outputs.push.commit }}"})
		with data.lib.flipflop.config.settings as {"kargo_version": "v1.0.2"}
	contains(finding.message, "which Kargo v1.0.2 does not have (it came in v1.1.0)")
	not contains(finding.message, "assumed")
	finding.severity == "error"
}

# One problem, one finding: two Stages whose pins would contradict each other
# on main, but whose promotions both fail at argocd-update, contradict nothing.
test_failing_stages_pin_nothing if {
	e := f.estate([
		f.app("dev", "main"), f.app("qa", "main"),
		f.stage("dev", "main", [{"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "push"}]}]),
		f.stage("qa", "main", [{"name": "qa", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "push"}]}]),
	])
	count(rule.report) == 2 with input as e
	count(shared_branch_contradiction.report) == 0 with input as e
	count(shared_branch_contradiction.report) == 1 with input as e with data.lib.flipflop.config.settings as {"kargo_version": "v1.2"}
	model.pins == [] with input as e
}

test_promotion_mechanisms_on_a_named_v1 if {
	legacy := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": {"name": "dev", "namespace": "acme"},
		"spec": {"promotionMechanisms": {"gitRepoUpdates": [{"repoURL": f.repo, "writeBranch": "main"}]}},
	}
	count(rule.report) == 0 with input as f.estate([legacy])
	some finding in rule.report with input as f.estate([legacy]) with data.lib.flipflop.config.settings as {"kargo_version": "v1.4"}
	finding.details.path == "/spec/promotionMechanisms"
	contains(finding.message, "on Kargo v1.4.0 the Stage CRD")
	finding.severity == "error"
}
