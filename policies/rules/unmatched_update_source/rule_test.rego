package lib.flipflop.rules.unmatched_update_source_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.unmatched_update_source as rule

# updating(source) is Stage web updating Application web (which tracks f.repo,
# https://github.com/acme/deploy.git) with the sources[] entry source.
updating(source) := f.stage("web", "main", [{"name": "web", "sources": [source]}])

findings(source) := fs if {
	# regal ignore:with-outside-test-context
	fs := rule.report with input as f.estate([f.app("web", "main"), updating(source)])
}

test_ssh_url_for_https_source if {
	some finding in findings(f.pin_url("git@github.com:acme/deploy.git"))
	finding.details == {
		"stage": "acme/web",
		"application": "argocd/web",
		"entryPath": "/spec/promotionTemplate/spec/steps/3/config/apps/0/sources/0",
		"stageRepoURL": "git@github.com:acme/deploy.git",
		"chart": "",
		"applicationSources": [f.repo],
	}
	contains(finding.message, `matched update for source with repoURL git@github.com:acme/deploy.git`)
}

test_other_repository_without_pin if {
	count(findings({"repoURL": "https://github.com/acme/other.git"})) == 1
}

test_kargo_normal_form_matches if {
	every url in [f.repo, "https://github.com/acme/deploy", "https://GitHub.com/acme/deploy/", "https://bot@github.com/acme/deploy.git"] {
		count(findings(f.pin_url(url))) == 0
	}
}

test_chart_must_match_exactly if {
	app := object.union(f.app("web", "main"), {"spec": {"source": {"repoURL": "https://charts.example.com", "chart": "web", "targetRevision": "1.0.0"}}})
	matching := updating({"repoURL": "https://charts.example.com", "chart": "web", "desiredRevision": "1.0.0"})
	count(rule.report) == 0 with input as f.estate([json.remove(app, ["spec/source/path"]), matching])
	other := updating({"repoURL": "https://charts.example.com", "chart": "api", "desiredRevision": "1.0.0"})
	some finding in rule.report with input as f.estate([json.remove(app, ["spec/source/path"]), other])
	contains(finding.message, `matched update for source with repoURL https://charts.example.com and chart "api"`)
}

test_unknown_urls_are_not_judged if {
	count(findings(f.pin_url("${{ vars.repo }}"))) == 0
	app := object.union(f.app("web", "main"), {"spec": {"source": {"repoURL": "${{ vars.repo }}"}}})
	count(rule.report) == 0 with input as f.estate([app, updating(f.pin_url("https://github.com/acme/other.git"))])
}

test_unknown_application_is_not_judged if {
	count(rule.report) == 0 with input as f.estate([updating(f.pin_url("https://github.com/acme/other.git"))])
}

test_placeholders_are_not_judged if {
	# quickstarts ask people to fill in their user name
	count(findings(f.pin_url("https://github.com/<github-username>/deploy.git"))) == 0
}

# Kargo's Application type has no sourceHydrator (argocd_revisions.go reads
# spec.sources, else spec.source): to argocd-update, an Application that only
# uses a source hydrator has no sources, and any sources[] entry, even one
# naming the dry source's repository, matches none of them.
test_hydrator_applications_have_no_sources_for_kargo if {
	app := object.union(json.remove(f.app("web", "main"), ["spec/source"]), {"spec": {"sourceHydrator": {
		"drySource": {"repoURL": f.repo, "targetRevision": "main", "path": "web"},
		"syncSource": {"targetBranch": "env/web", "path": "web"},
	}}})
	count(rule.report) == 1 with input as f.estate([app, updating(f.pin_url(f.repo))])
	some finding in rule.report with input as f.estate([app, updating(f.pin_url(f.repo))])
	contains(finding.message, "it uses a source hydrator, which Kargo's argocd-update does not read")
	finding.details.applicationSources == []
}

# A selector's match that does not authorize the Stage is skipped by Kargo
# before any source is compared (argocd_updater.go, getAuthorizedApplications).
test_unauthorized_selector_matches_are_not_judged if {
	labelled := object.union(f.app("web", "main"), {"metadata": {"labels": {"team": "web"}}})
	other := object.union(f.app("db", "main"), {"metadata": {
		"labels": {"team": "web"},
		"annotations": {"kargo.akuity.io/authorized-stage": "acme:db"},
	}})
	stage := f.stage("web", "main", [{"selector": {"matchLabels": {"team": "web"}}, "sources": [f.pin_url(f.repo)]}])
	other_repo := json.patch(other, [{"op": "replace", "path": "/spec/source/repoURL", "value": "https://github.com/acme/db.git"}])
	count(rule.report) == 0 with input as f.estate([labelled, other_repo, stage])
}

# An Application only an ApplicationSet with a git generator makes, its
# template's repoURL literal (issue 40 item 5a): the entry's other scheme
# matches no source of any Application the ApplicationSet makes.
git_appset(name, repo_url) := {
	"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
	"metadata": {"name": "web", "namespace": "argocd"},
	"spec": {
		"goTemplate": true,
		"generators": [{"git": {"repoURL": f.repo, "revision": "main", "directories": [{"path": "apps/*"}]}}],
		"template": {
			"metadata": {"name": name, "annotations": {"kargo.akuity.io/authorized-stage": "acme:web"}},
			"spec": {
				"project": "default",
				"source": {"repoURL": repo_url, "targetRevision": "main", "path": "{{.path.path}}"},
				"destination": {"server": "https://kubernetes.default.svc", "namespace": "web"},
			},
		},
	},
}

generated(appsets, url) := fs if {
	stage := f.stage("web", "main", [{"name": "shop-web", "sources": [f.pin_url(url)]}])

	# regal ignore:with-outside-test-context
	fs := rule.report with input as f.estate(array.concat(appsets, [stage]))
}

test_generated_by_a_git_generator if {
	findings := generated([git_appset("{{.path.basename}}-web", f.repo)], "git@github.com:acme/deploy.git")
	count(findings) == 1

	# the same scheme matches
	count(generated([git_appset("{{.path.basename}}-web", f.repo)], f.repo)) == 0
	some finding in findings
	finding.details.application == "argocd/shop-web"
	contains(finding.message, "(No Application argocd/shop-web is among the inputs: ApplicationSet argocd/web generates Applications named *-web that flipflop cannot list")
}

# Not judged: a template repoURL from the generator, a bare wildcard name, or a
# name two ApplicationSets may make.
test_generated_not_judged if {
	count(generated([git_appset("{{.path.basename}}-web", "{{.url}}")], "git@github.com:acme/deploy.git")) == 0
	count(generated([git_appset("{{.path.basename}}", f.repo)], "git@github.com:acme/deploy.git")) == 0
	other := json.patch(git_appset("shop-{{.path.basename}}", f.repo), [{"op": "replace", "path": "/metadata/name", "value": "other"}])
	count(generated([git_appset("{{.path.basename}}-web", f.repo), other], "git@github.com:acme/deploy.git")) == 0
}
