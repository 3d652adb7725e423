package lib.flipflop.rules.invalid_step_config_test

import data.lib.flipflop.config
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.invalid_step_config as rule

# assumed ends the message of a finding that rests on the Kargo version
# flipflop assumed (lib.flipflop.result).
assumed := "flipflop assumed the newest Kargo it models, so this is a warning; if you run an older one, say so with --kargo-version (then it is an error if it holds there)."

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
		assumed,
	])
	finding.stages == ["acme/dev"]
	finding.details.problems == [{"field": "messageFromSteps", "problem": "unknown"}, {"field": "message", "problem": "missing"}]

	# The fix is the one for its cause (issue 40, item 4), not every cause's.
	startswith(finding.remediation, "Write the step as the reference of the Kargo release you run documents it")
	not contains(finding.remediation, "pull request")
	not contains(finding.remediation, "Close the expression")
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

test_expression_never_closed if {
	e := f.estate([f.stage_steps("dev", [
		{"uses": "git-push", "as": "push", "config": {"path": "./out"}},
		{"uses": "argocd-update", "config": {"apps": [{"name": "dev", "sources": [{"repoURL": "https://github.com/acme/deploy.git", "desiredRevision": "${{ outputs.push.commit"}]}]}},
	])])
	findings := rule.report with input as e
	count(findings) == 1
	some finding in findings
	finding.message == concat(" ", [
		`Stage acme/dev's argocd-update step "step-1" (/spec/promotionTemplate/spec/steps/1) holds an expression Kargo v1.11.2 cannot parse:`,
		"in config.apps.0.sources.0.desiredRevision, an expression is opened and never closed.",
		"Kargo compiles a step's expressions when a Promotion runs it, so every promotion of the Stage fails at this step.",
		assumed,
	])
	finding.details.kind == "expression"
	startswith(finding.remediation, "Close the expression, the string or the bracket the finding names:")
}

test_expression_in_if_vars_and_task if {
	task := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "PromotionTask",
		"metadata": {"name": "render", "namespace": "acme"},
		"spec": {"steps": [{
			"uses": "git-push", "if": "${{ success( }}",
			"vars": [{"name": "b", "value": `${{ "env/" + ctx.stage }}`}, {"name": "c", "value": "${{ }}"}],
			"config": {"path": "./out"},
		}]},
	}
	some finding in rule.report with input as f.estate([task])
	finding.details.problems == [
		{"field": "if", "problem": "expression", "reason": "unbalanced-brackets", "expression": " success( "},
		{"field": "vars[1].value", "problem": "expression", "reason": "empty", "expression": " "},
	]
}

# A well-formed expression, or one before Kargo v1.1 had expressions, is not
# judged; nor is a key.
test_expression_not_judged if {
	ok := f.estate([f.stage_steps("dev", [{"uses": "git-push", "config": {"path": "./out", "targetBranch": "env/${{ ctx.stage }}"}}])])
	count(rule.report) == 0 with input as ok
	old := f.estate([f.stage_steps("dev", [{"uses": "git-push", "config": {"path": "./${{ x"}}])])
	count(rule.report) == 0 with input as old with config.settings as {"kargo_version": "v1.0.0"}
	key := f.estate([f.stage_steps("dev", [{"uses": "custom", "config": {"${{ x": "y"}}])])
	count(rule.report) == 0 with input as key
}

pr_task(number) := {
	"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "PromotionTask",
	"metadata": {"name": "pr", "namespace": "acme"},
	"spec": {"steps": [
		{"uses": "git-open-pr", "as": "open-pr", "config": {"repoURL": "https://github.com/acme/deploy.git", "sourceBranch": "x", "targetBranch": "main"}},
		{"uses": "git-wait-for-pr", "as": "wait", "config": {"repoURL": "https://github.com/acme/deploy.git", "prNumber": number}},
	]},
}

test_pr_number_from_a_removed_output if {
	some finding in rule.report with input as f.estate([pr_task("${{ task.outputs['open-pr'].prNumber }}")])
	finding.message == concat(" ", [
		`PromotionTask acme/pr's git-wait-for-pr step "wait" (/spec/steps/1) takes the pull request's number from prNumber of git-open-pr step "open-pr",`,
		"an output Kargo v1.11.2 does not have (it was removed in v1.7.0; read pr.id).",
		"The number is then null, which the step's schema rejects, so every promotion of every Stage that runs the task fails at this step.",
		assumed,
	])
	finding.severity == "warning"
	finding.details.kind == "output"
	startswith(finding.remediation, "Read the pull request's number from the output git-open-pr has")
}

test_pr_number_by_version if {
	count(rule.report) == 0 with input as f.estate([pr_task("${{ task.outputs['open-pr'].prNumber }}")]) with config.settings as {"kargo_version": "v1.6.0"}
	count(rule.report) == 0 with input as f.estate([pr_task("${{ task.outputs['open-pr'].pr.id }}")])

	# Another step's output, or a literal, is not judged.
	count(rule.report) == 0 with input as f.estate([pr_task("${{ task.outputs['other'].prNumber }}")])
	count(rule.report) == 0 with input as f.estate([pr_task(42)])

	some finding in rule.report with input as f.estate([pr_task("${{ outputs.open-pr.pr.id }}")]) with config.settings as {"kargo_version": "v1.4.2"}
	contains(finding.message, "(it came in v1.5.0; read prNumber)")
	not contains(finding.message, "flipflop assumed")
	finding.severity == "error"
}

# Severity follows certainty (issue 40, item 2): on a named version the step
# certainly fails, an error; on the assumed newest, a warning that says so.
test_severity_follows_certainty if {
	e := f.estate([f.stage_steps("dev", [{"uses": "git-commit", "as": "commit", "config": {"path": ".", "message": "m", "messageFromSteps": ["x"]}}])])
	named := rule.report with input as e with config.settings as {"kargo_version": "v1.6.0"}
	[x.severity | some x in named] == ["error"]
	every x in named {
		not contains(x.message, "flipflop assumed")
	}
	unnamed := rule.report with input as e
	[x.severity | some x in unnamed] == ["warning"]
	every x in unnamed {
		endswith(x.message, assumed)
	}

	# v1.4 still has messageFromSteps, as the one of message and
	# messageFromSteps its oneOf wants: nothing to report for it alone, and
	# both at once fail there too.
	alone := f.estate([f.stage_steps("dev", [{"uses": "git-commit", "as": "commit", "config": {"path": ".", "messageFromSteps": ["x"]}}])])
	count(rule.report) == 0 with input as alone with config.settings as {"kargo_version": "v1.4.0"}
	[x.severity | some x in rule.report] == ["error"] with input as e with config.settings as {"kargo_version": "v1.4.0"}
}

test_var_fix_names_the_var if {
	stage := object.union(f.stage_steps("dev", [{"uses": "git-push", "config": {"path": "./out"}}]), {"spec": {"vars": [{"name": "branch", "value": "${{ ctx.stage"}]}})
	some finding in rule.report with input as f.estate([stage])
	finding.details.kind == "var"
	contains(finding.remediation, "in the var's\nvalue")
}
