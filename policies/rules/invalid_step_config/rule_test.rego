package lib.flipflop.rules.invalid_step_config_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.invalid_step_config as rule

test_stage_step if {
	e := f.estate([f.stage_steps("dev", [{"uses": "git-commit", "as": "commit", "config": {"path": ".", "messageFromSteps": ["x"]}}])])
	findings := rule.report with input as e
	count(findings) == 1
	some finding in findings
	finding.severity == "warning"
	finding.message == concat(" ", [
		`Stage acme/dev's git-commit step "commit" (/spec/promotionTemplate/spec/steps/0) does not meet Kargo v1.11.2's git-commit schema:`,
		"messageFromSteps is not a key it allows; message is required.",
		"Kargo validates a step's config when a Promotion runs it, so every promotion of the Stage fails at this step.",
	])
	finding.stages == ["acme/dev"]
	finding.details.problems == [{"field": "messageFromSteps", "problem": "unknown"}, {"field": "message", "problem": "missing"}]
}

test_task_step if {
	task := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "ClusterPromotionTask",
		"metadata": {"name": "promote"},
		"spec": {"steps": [{"uses": "git-push", "config": {}}]},
	}
	some finding in rule.report with input as f.estate([task])
	startswith(finding.message, `ClusterPromotionTask /promote's git-push step "step-0" (/spec/steps/0)`)
	contains(finding.message, "every promotion of every Stage that runs the task fails")
}
