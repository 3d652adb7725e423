package lib.flipflop.rules.shared_branch_contradiction_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.shared_branch_contradiction as rule

two_pinned_on_main := f.estate([
	f.app("dev", "main"), f.app("qa", "main"),
	f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
])

test_two_stages_pin_one_branch if {
	findings := rule.report with input as two_pinned_on_main
	count(findings) == 1
	some finding in findings
	finding.rule == "shared-branch-contradiction"
	finding.severity == "error"
	finding.key == "github.com/acme/deploy@main"
	[r.name | some r in finding.resources] == ["dev", "qa", "dev", "qa"]
	[r.kind | some r in finding.resources] == ["Stage", "Stage", "Application", "Application"]
	contains(finding.message, "Auto-sync is on")
	finding.details.stages == ["acme/dev", "acme/qa"]
	startswith(finding.remediation, "Give each Stage a pointer only it moves")
}

test_fires_without_auto_sync_and_says_so if {
	estate := f.estate([
		f.app_with("dev", {"repoURL": f.repo, "targetRevision": "main"}, {}),
		f.app_with("qa", {"repoURL": f.repo, "targetRevision": "main"}, {"automated": {"enabled": false}}),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	some finding in rule.report with input as estate
	contains(finding.message, "Auto-sync is off")
}

test_head_and_main_are_one_pointer_when_assumed if {
	estate := f.estate([
		f.app("dev", "HEAD"), f.app("qa", "main"),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	some finding in rule.report with input as estate
	finding.details.assumedDefaultBranch == true
	contains(finding.message, "HEAD was taken to be main")
}

test_head_is_not_main_when_default_branch_configured if {
	estate := f.estate([
		f.app("dev", "HEAD"), f.app("qa", "main"),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	count(rule.report) == 0 with input as estate with data.lib.flipflop.config.settings as {"default_branch": "trunk"}
}

test_stage_branches_are_clean if {
	estate := f.estate([
		f.app("dev", "env/dev"), f.app("qa", "env/qa"),
		f.stage("dev", "env/dev", [f.pin("dev")]), f.stage("qa", "env/qa", [f.pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
}

test_no_desired_revision_is_clean if {
	estate := f.estate([
		f.app("dev", "main"), f.app("qa", "main"),
		f.stage("dev", "main", [f.no_pin("dev")]), f.stage("qa", "main", [f.no_pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
}

utr(name) := {"name": name, "sources": [{"repoURL": f.repo, "desiredRevision": "${{ outputs.push.commit }}", "updateTargetRevision": true}]}

test_update_target_revision_is_clean if {
	estate := f.estate([
		f.app("dev", "main"), f.app("qa", "main"),
		f.stage("dev", "main", [utr("dev")]), f.stage("qa", "main", [utr("qa")]),
	])
	count(rule.report) == 0 with input as estate
}

# An ApplicationSet writes its template back over the rewrite (Argo CD's
# default policy, sync): both Applications track main again, and the pins
# contradict as if updateTargetRevision were not set.
test_update_target_revision_undone_by_an_application_set if {
	appset := f.application_set("argocd", "envs", {
		"generators": [{"list": {"elements": [{"stage": "dev"}, {"stage": "qa"}]}}],
		"template": {
			"metadata": {"name": "{{stage}}", "annotations": {"kargo.akuity.io/authorized-stage": "acme:{{stage}}"}},
			"spec": {"source": {"repoURL": f.repo, "targetRevision": "main", "path": "env/{{stage}}"}},
		},
	})
	estate := f.estate([appset, f.stage("dev", "main", [utr("dev")]), f.stage("qa", "main", [utr("qa")])])
	some finding in rule.report with input as estate
	contains(finding.message, "ApplicationSet argocd/envs writes its template back")
}

test_one_pinning_stage_is_not_this_rule if {
	estate := f.estate([
		f.app("dev", "main"), f.app("qa", "main"),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.no_pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
}

test_fixed_revisions_never_contradict if {
	sha := "0123456789abcdef0123456789abcdef01234567"
	estate := f.estate([
		f.app("dev", sha), f.app("qa", sha),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
}

test_repo_url_spelled_differently_pins_nothing if {
	# Kargo matches sources[].repoURL by exact string: the Application's
	# "https://github.com/acme/deploy" never receives the pin written with ".git".
	estate := f.estate([
		f.app_with("dev", {"repoURL": "https://github.com/acme/deploy", "targetRevision": "main"}, {}),
		f.app_with("qa", {"repoURL": "https://github.com/acme/deploy", "targetRevision": "main"}, {}),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
}

multi(name) := object.union(f.app(name, "main"), {"spec": {"sources": [
	{"repoURL": "https://charts.example.com", "chart": "app", "targetRevision": "1.2.3"},
	{"repoURL": f.repo, "targetRevision": "main", "ref": "values"},
]}})

test_multi_source_pins_the_matching_source if {
	estate := f.estate([
		multi("dev"), multi("qa"),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	some finding in rule.report with input as estate
	finding.key == "github.com/acme/deploy@main"
}

test_three_stages_one_finding if {
	estate := f.estate([
		f.app("dev", "main"), f.app("qa", "main"), f.app("prod", "main"),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]), f.stage("prod", "main", [f.pin("prod")]),
	])
	findings := rule.report with input as estate
	count(findings) == 1
	some finding in findings
	count(finding.resources) == 6
}

# A pin that can never be met is no head of the branch (issue 22 item 2): dev
# pushes to env/dev but pins its own commit on an Application tracking main, so
# only qa moves main and qa is always Healthy. unreachable-desired-revision
# reports dev's pin; this rule says nothing, and neither does
# foreign-branch-writer (qa's pushes move nothing dev could ever match).
test_unreachable_pin_is_no_head if {
	estate := f.estate([
		f.app("dev", "main"), f.app("qa", "main"),
		f.stage("dev", "env/dev", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
	count(data.lib.flipflop.rules.foreign_branch_writer.report) == 0 with input as estate
	[x.details.stage | some x in data.lib.flipflop.rules.unreachable_desired_revision.report] == ["acme/dev"] with input as estate
}

# Two pins that expect different commits of one branch contradict each other
# even in one Stage (issue 22 item 4): Kargo checks every argocd-update step's
# pins, and only one commit can be the head.
test_one_stage_two_heads if {
	stage := f.stage_steps("dev", [
		f.clone(f.repo, [f.checkout("./repo", "main")]),
		f.push("first", "./repo", {}),
		f.update([{"name": "dev", "sources": [{"repoURL": f.repo, "desiredRevision": "${{ outputs.first.commit }}"}]}]),
		f.push("second", "./repo", {}),
		f.update([{"name": "qa", "sources": [{"repoURL": f.repo, "desiredRevision": "${{ outputs.second.commit }}"}]}]),
	])
	qa := object.union(f.app("qa", "main"), {"metadata": f.authorizing("acme:dev")})
	some finding in rule.report with input as f.estate([f.app("dev", "main"), qa, stage])
	startswith(finding.message, `Stage acme/dev pins desiredRevision "${{ outputs.first.commit }}" and "${{ outputs.second.commit }}" on Applications argocd/dev, argocd/qa`)
	finding.details.stages == ["acme/dev"]
}

# One Stage pinning the same commit on several Applications expects one head.
test_one_stage_one_head if {
	stage := f.stage("dev", "main", [f.pin("dev"), f.pin("qa")])
	count(rule.report) == 0 with input as f.estate([f.app("dev", "main"), f.app("qa", "main"), stage])
}
