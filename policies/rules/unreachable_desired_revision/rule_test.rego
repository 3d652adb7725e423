package lib.flipflop.rules.unreachable_desired_revision_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.unreachable_desired_revision as rule

literal(app_name, rev) := {"name": app_name, "sources": [{"repoURL": f.repo, "desiredRevision": rev}]}

freight(app_name) := {"name": app_name, "sources": [{"repoURL": f.repo, "desiredRevision": "${{ commitFrom(vars.repo).ID }}"}]}

literal_estate(rev) := f.estate([f.app("dev", "main"), f.stage("dev", "main", [literal("dev", rev)])])

test_literal_ref_never_matches if {
	some f1 in rule.report with input as literal_estate("main")
	contains(f1.message, `"main" is a ref`)
	some f2 in rule.report with input as literal_estate("HEAD")
	contains(f2.message, `"HEAD" is a ref`)
	some f3 in rule.report with input as literal_estate("v1.2.3")
	contains(f3.message, `"v1.2.3" is a ref`)
}

test_literal_sha_is_not_a_ref if {
	estate := f.estate([f.app("dev", "0123456789abcdef0123456789abcdef01234567"), f.stage("dev", "main", [literal("dev", "0123456789abcdef0123456789abcdef01234567")])])
	count(rule.report) == 0 with input as estate
}

test_chart_version_literal_is_fine if {
	chart_app := f.app_with("dev", {"repoURL": "https://charts.example.com", "chart": "app", "targetRevision": "1.2.3"}, {})
	pin := {"name": "dev", "sources": [{"repoURL": "https://charts.example.com", "chart": "app", "desiredRevision": "1.2.3"}]}
	estate := f.estate([chart_app, f.stage("dev", "main", [pin])])
	count(rule.report) == 0 with input as estate
}

test_own_commit_on_other_branch if {
	estate := f.estate([f.app("dev", "env/dev"), f.stage("dev", "main", [f.pin("dev")])])
	some finding in rule.report with input as estate
	contains(finding.message, "pushes only to github.com/acme/deploy @ main")
}

test_own_commit_on_fixed_revision if {
	estate := f.estate([f.app("dev", "v1.0.0"), f.stage("dev", "main", [f.pin("dev")])])
	some finding in rule.report with input as estate
	contains(finding.message, "fixed revision")
}

test_own_commit_on_own_branch_is_fine if {
	estate := f.estate([f.app("dev", "env/dev"), f.stage("dev", "env/dev", [f.pin("dev")])])
	count(rule.report) == 0 with input as estate
}

test_freight_commit_judged_only_as_literal if {
	estate := f.estate([f.app("dev", "v1.0.0"), f.stage("dev", "main", [freight("dev")])])
	count(rule.report) == 0 with input as estate
}

test_unknown_write_branch_proves_nothing if {
	estate := f.estate([f.app("dev", "env/dev"), f.stage("dev", "${{ vars.branch }}", [f.pin("dev")])])
	count(rule.report) == 0 with input as estate
}

# A pull-request promotion (issue 22 item 3): the Stage pushes a generated
# branch, opens a pull request into main, waits for the merge, and pins an
# Application tracking main. On GitHub the head of main is then the merge, so a
# pin of the pushed (or committed) commit is never met; the merge commit that
# git-wait-for-pr reports is.
pr_stage(url, provider, desired) := f.stage_steps("dev", [
	f.clone(url, [f.checkout("./repo", "main")]),
	{"uses": "git-commit", "as": "commit", "config": {"path": "./repo", "message": "m"}},
	f.push("push", "./repo", {"generateTargetBranch": true}),
	{"uses": "git-open-pr", "as": "open-pr", "config": object.union(
		{"repoURL": url, "sourceBranch": "${{ outputs.push.branch }}", "targetBranch": "main"},
		provider,
	)},
	{"uses": "git-wait-for-pr", "as": "wait-for-pr", "config": {"repoURL": url, "prNumber": "${{ outputs['open-pr'].pr.id }}"}},
	f.update([{"name": "dev", "sources": [{"repoURL": url, "desiredRevision": desired}]}]),
])

pr_estate(url, provider, desired) := f.estate([
	f.app_with("dev", {"repoURL": url, "targetRevision": "main", "path": "dev"}, {"automated": {}}),
	pr_stage(url, provider, desired),
])

test_pull_request_pushed_commit_never_met if {
	some finding in rule.report with input as pr_estate(f.repo, {}, "${{ outputs.push.commit }}")
	contains(finding.message, `it is the commit step "push" makes, which reaches github.com/acme/deploy @ main only through a pull request`)
	some committed in rule.report with input as pr_estate(f.repo, {}, "${{ outputs.commit.commit }}")
	contains(committed.message, `step "commit"`)

	# The fix agrees with the why (issue 40, item 4): pin the merge, not the push.
	finding.details.kind == "pull-request"
	startswith(finding.remediation, "Pin the commit the branch's head will be: the merge.")
	not contains(finding.remediation, "pin the push's commit")
}

# Another cause keeps the rule's general fix.
test_other_causes_keep_the_general_fix if {
	some finding in rule.report with input as literal_estate("main")
	not finding.details.kind
	contains(finding.remediation, "never pin a branch, HEAD or tag name")
}

test_pull_request_merge_commit_is_met if {
	count(rule.report) == 0 with input as pr_estate(f.repo, {}, "${{ outputs['wait-for-pr'].commit }}")
}

# GitLab (and Gitea, Bitbucket, Azure DevOps) can merge by fast-forward, which
# keeps the pushed commit: the files do not say, so nothing is proven.
test_pull_request_elsewhere_proves_nothing if {
	count(rule.report) == 0 with input as pr_estate("https://gitlab.com/acme/deploy.git", {}, "${{ outputs.push.commit }}")
	count(rule.report) == 0 with input as pr_estate(f.repo, {"provider": "gitlab"}, "${{ outputs.push.commit }}")
	count(rule.report) == 1 with input as pr_estate("https://git.example.com/acme/deploy.git", {"provider": "github"}, "${{ outputs.push.commit }}")
}

# An Application that does not authorize the Stage fails every promotion
# (missing-authorized-stage), so Kargo checks none of its pins today; the ref
# pinned on it is still reported, as what shows once that is fixed.
test_pin_behind_a_failure_is_reported_as_latent if {
	unauthorized := json.patch(f.app("dev", "main"), [{"op": "replace", "path": "/metadata/annotations", "value": {"kargo.akuity.io/authorized-stage": "acme:other"}}])
	estate := f.estate([unauthorized, f.stage("dev", "main", [literal("dev", "main")])])
	some finding in rule.report with input as estate
	contains(finding.message, `"main" is a ref`)
	contains(finding.message, "This shows once the Stage's promotions stop failing (missing-authorized-stage)")
	finding.details.showsAfter == ["missing-authorized-stage"]
	finding.severity == "error"
}

test_pin_of_a_promoting_stage_is_not_latent if {
	some finding in rule.report with input as literal_estate("main")
	not finding.details.showsAfter
	not contains(finding.message, "shows once")
}
