package lib.flipflop.rules.shared_write_branch_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.shared_write_branch as rule

test_two_stages_push_main if {
	estate := f.estate([f.stage("dev", "main", []), f.stage("qa", "main", [])])
	some finding in rule.report with input as estate
	finding.severity == "warning"
	finding.details.stages == ["acme/dev", "acme/qa"]
}

test_stage_branches_are_fine if {
	estate := f.estate([f.stage("dev", "env/dev", []), f.stage("qa", "env/qa", [])])
	count(rule.report) == 0 with input as estate
}

pr_stage(name) := f.stage_steps(name, [
	{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./repo"}]}},
	{"uses": "git-push", "as": "push", "config": {"path": "./repo", "generateTargetBranch": true}},
	{"uses": "git-open-pr", "config": {"repoURL": f.repo, "sourceBranch": "${{ outputs.push.branch }}", "targetBranch": "main"}},
])

test_pull_requests_to_main_share_main if {
	estate := f.estate([pr_stage("dev"), pr_stage("qa")])
	some finding in rule.report with input as estate
	finding.key == "github.com/acme/deploy@main"
}
