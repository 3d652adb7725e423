package lib.flipflop.rules.unchecked_desired_revision_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.rules.unchecked_desired_revision as rule

# pinning(url) is Stage web pinning url on Application web, which tracks f.repo
# (https://github.com/acme/deploy.git).
pinning(url) := f.stage("web", "main", [{"name": "web", "sources": [f.pin_url(url)]}])

findings(url) := fs if {
	# regal ignore:with-outside-test-context
	fs := rule.report with input as f.estate([f.app("web", "main"), pinning(url)])
}

test_written_otherwise_is_unchecked if {
	every url in [
		"https://github.com/acme/deploy",
		"https://github.com/acme/deploy.git/",
		"https://GitHub.com/Acme/Deploy.git",
		"https://bot:token@github.com/acme/deploy.git",
	] {
		some finding in findings(url)
		finding.details == {
			"stage": "acme/web",
			"application": "argocd/web",
			"entryPath": "/spec/promotionTemplate/spec/steps/3/config/apps/0/sources/0",
			"stageRepoURL": url,
			"applicationRepoURLs": [f.repo],
		}
		count(findings(url)) == 1

		# and the model has no pin for it, as Kargo checks none
		count(model.pins) == 0 with input as f.estate([f.app("web", "main"), pinning(url)])
	}
}

test_written_the_same_is_checked if {
	count(findings(f.repo)) == 0
	count(model.pins) == 1 with input as f.estate([f.app("web", "main"), pinning(f.repo)])
}

test_other_repository_or_scheme_is_not_this_rule if {
	# Kargo matches neither: the update itself fails, which is not this rule's case
	count(findings("https://github.com/acme/other.git")) == 0
	count(findings("git@github.com:acme/deploy.git")) == 0
}

test_no_desired_revision_nothing_to_check if {
	stage := f.stage("web", "main", [{"name": "web", "sources": [{"repoURL": "https://github.com/acme/deploy"}]}])
	count(rule.report) == 0 with input as f.estate([f.app("web", "main"), stage])
}

test_exact_source_among_several_is_checked if {
	# a multi-source Application with the URL written both ways: the exact one is checked
	app := object.union(f.app("web", "main"), {"spec": {"sources": [
		{"repoURL": f.repo, "targetRevision": "main", "path": "a"},
		{"repoURL": "https://github.com/acme/deploy", "targetRevision": "main", "path": "b"},
	]}})
	count(rule.report) == 0 with input as f.estate([json.remove(app, ["spec/source"]), pinning(f.repo)])
}

test_unknown_url_is_not_judged if {
	count(findings("${{ vars.repo }}")) == 0
}

# With updateTargetRevision, the loose match still moves the source: the
# message says what happens and what is lost.
test_update_target_revision_still_rewrites if {
	e := {"name": "web", "sources": [object.union(f.pin_url("https://github.com/acme/deploy"), {"updateTargetRevision": true})]}
	some finding in rule.report with input as f.estate([f.app("web", "main"), f.stage("web", "main", [e])])
	contains(finding.message, "Its updateTargetRevision still sets the source's targetRevision to that revision")
	every other in findings("https://github.com/acme/deploy") {
		not contains(other.message, "updateTargetRevision")
	}
}

# Two sources[] entries written exactly like one source (issue 40 item 5b):
# Kargo checks the source against the first entry, so the second entry's
# desiredRevision is never read.
test_repeated_entry_is_unchecked if {
	entries := [
		{"repoURL": f.repo, "updateTargetRevision": true},
		{"repoURL": f.repo, "desiredRevision": "${{ outputs.push.commit }}"},
	]
	stage := f.stage("web", "main", [{"name": "web", "sources": entries}])
	findings := rule.report with input as f.estate([f.app("web", "main"), stage])
	count(findings) == 1

	# and the model pins nothing, as Kargo checks nothing
	count(model.pins) == 0 with input as f.estate([f.app("web", "main"), stage])
	some finding in findings
	finding.details.shadowedBy == "/spec/promotionTemplate/spec/steps/3/config/apps/0/sources/0"
	finding.details.entryPath == "/spec/promotionTemplate/spec/steps/3/config/apps/0/sources/1"
	contains(finding.message, "in sources[1], but sources[0] names the same repoURL")
	contains(finding.message, "The first entry sets no desiredRevision, so Kargo checks no revision of https://github.com/acme/deploy.git at all.")
	startswith(finding.remediation, "Keep one `sources[]` entry per Application source")
}

test_repeated_entry_behind_a_pinning_one if {
	entries := [
		{"repoURL": f.repo, "desiredRevision": "${{ outputs.commit.commit }}"},
		{"repoURL": f.repo, "desiredRevision": "${{ outputs.push.commit }}"},
	]
	stage := f.stage("web", "main", [{"name": "web", "sources": entries}])
	some finding in rule.report with input as f.estate([f.app("web", "main"), stage])
	contains(finding.message, `Kargo checks https://github.com/acme/deploy.git against "${{ outputs.commit.commit }}", the first entry's desiredRevision.`)
}

# Entries for two sources, or written otherwise, are not repeats.
test_distinct_entries_are_not_repeats if {
	two := object.union(f.app("web", "main"), {"spec": {"sources": [
		{"repoURL": f.repo, "targetRevision": "main", "path": "a"},
		{"repoURL": "https://github.com/acme/other.git", "targetRevision": "main", "path": "b"},
	]}})
	entries := [
		{"repoURL": f.repo, "desiredRevision": "${{ outputs.push.commit }}"},
		{"repoURL": "https://github.com/acme/other.git", "desiredRevision": "${{ outputs.push.commit }}"},
	]
	stage := f.stage("web", "main", [{"name": "web", "sources": entries}])
	count(rule.report) == 0 with input as f.estate([json.remove(two, ["spec/source"]), stage])
}

# An Application only an ApplicationSet with a git generator makes (issue 40
# item 5a): its name matches the ApplicationSet's pattern, and its template's
# literal source is the one Kargo meets.
git_appset := {
	"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
	"metadata": {"name": "web", "namespace": "argocd"},
	"spec": {
		"goTemplate": true,
		"generators": [{"git": {"repoURL": f.repo, "revision": "main", "directories": [{"path": "apps/*"}]}}],
		"template": {
			"metadata": {"name": "{{.path.basename}}-web", "annotations": {"kargo.akuity.io/authorized-stage": "acme:web"}},
			"spec": {
				"project": "default",
				"source": {"repoURL": f.repo, "targetRevision": "main", "path": "{{.path.path}}"},
				"destination": {"server": "https://kubernetes.default.svc", "namespace": "web"},
			},
		},
	},
}

test_generated_by_a_git_generator if {
	stage := f.stage("web", "main", [{"name": "shop-web", "sources": [f.pin_url("https://github.com/acme/deploy")]}])
	some finding in rule.report with input as f.estate([git_appset, stage])
	finding.details.application == "argocd/shop-web"
	contains(finding.message, "ApplicationSet argocd/web generates Applications named *-web that flipflop cannot list, so it assumed this is one of them")
}
