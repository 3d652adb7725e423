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
