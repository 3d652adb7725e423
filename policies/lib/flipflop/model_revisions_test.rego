package lib.flipflop.model_test

import data.lib.flipflop.apps
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model

# ---------------------------------------------------------------------------
# Kargo's revision lookup (argocd_revisions.go, argocd_updater.go, v1.11.2)

# Each source takes the desired revision of the first sources[] entry that
# matches it exactly, even one that sets none: a later entry is never read.
test_first_matching_entry_decides if {
	shadowed := {"name": "dev", "sources": [{"repoURL": f.repo}, f.pin_url(f.repo)]}
	desired_rows == [] with input as entry_estate(shadowed)
	first := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredRevision": f.sha}, f.pin_url(f.repo)]}
	desired_rows == [[f.sha, "literal"]] with input as entry_estate(first)

	# an entry that matches only in Kargo's normal form is not the source's
	loose := {"name": "dev", "sources": [{"repoURL": "https://github.com/acme/deploy"}, f.pin_url(f.repo)]}
	desired_rows == [["${{ outputs.push.commit }}", "own"]] with input as entry_estate(loose)
}

# chart is an expression like any config value.
test_chart_is_substituted if {
	entry := {"name": "dev", "sources": [{"repoURL": chart_repo, "chart": "${{ vars.chart }}", "desiredRevision": "${{ chartFrom(vars.repo).Version }}"}]}
	with_var := f.template_stage("dev", [{"name": "chart", "value": "app"}], [], [f.update([entry])])
	chart_rows == [[0, "charts.example.com/stable/app#version:1.2.3", false, "freight"]] with input as f.estate([multi("dev", "1.2.3", "main"), with_var])
}

utr_entry(desired) := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredRevision": desired, "updateTargetRevision": true}]}

# updateTargetRevision rewrites the first source the entry matches to the
# revision Kargo checks on it: the pin is met by the rewrite (held), unless it
# names a ref (Argo CD reports SHAs), and still checked on every other source.
test_update_target_revision_holds_the_rewritten_source if {
	desired_rows == [] with input as entry_estate(utr_entry("${{ outputs.push.commit }}"))
	desired_rows == [["release-1.2", "literal"]] with input as entry_estate(utr_entry("release-1.2"))
	model.unreachable[model.pins[0].id] with input as entry_estate(utr_entry("release-1.2"))
	two := f.application("argocd", "dev", f.authorizing("acme:dev"), {"sources": [
		{"repoURL": f.repo, "targetRevision": "main", "path": "env/dev"},
		{"repoURL": f.repo, "targetRevision": "main", "ref": "values"},
	]})
	estate := f.estate([two, stage("dev", "main", [utr_entry("${{ outputs.push.commit }}")])])
	pin_rows == [["acme/dev", "argocd/dev", 1, "github.com/acme/deploy@main", "own"]] with input as estate
	[p.rewritten | some p in model.step_pins] == [true, false] with input as estate
}

appset(spec_extra) := f.application_set("argocd", "apps", object.union(
	{
		"generators": [{"list": {"elements": [{"stage": "dev"}]}}],
		"template": {
			"metadata": {"name": "{{stage}}", "annotations": {"kargo.akuity.io/authorized-stage": "acme:{{stage}}"}},
			"spec": {"source": {"repoURL": f.repo, "targetRevision": "main", "path": "env/{{stage}}"}},
		},
	},
	spec_extra,
))

# The ApplicationSet controller writes its template back over a generated
# Application's spec (policy sync, Argo CD's default): the rewrite does not
# last, and the pin floats on the template's branch again.
test_update_target_revision_is_reverted_by_an_application_set if {
	pinning_stage := stage("dev", "main", [utr_entry("${{ outputs.push.commit }}")])
	[[p.pointer.key, p.reverted] | some p in model.pins] == [["github.com/acme/deploy@main", true]] with input as f.estate([appset({}), pinning_stage])
	kept := {"syncPolicy": {"applicationsSync": "create-only"}}
	pin_rows == [] with input as f.estate([appset(kept), pinning_stage])
	ignoring := {"ignoreApplicationDifferences": [{"jsonPointers": ["/spec/source/targetRevision"]}]}
	pin_rows == [] with input as f.estate([appset(ignoring), pinning_stage])
}

# The authorized-stage annotation as Kargo v1.11 parses it (pkg/api/stage.go,
# AuthorizedStages): project and Stage trimmed around the first ":", and one
# malformed or glob entry rejects the whole value.
test_authorized_stage_parsing if {
	authorizes := {v |
		some v in ["acme:dev", " acme : dev ", "acme:qa, acme:dev", "acme:dev,,", "acme:dev,garbage", "acme:dev, acme:qa-*", "acme:*", "", ",", "acme:"]
		apps.authorizes({"annotations": {"kargo.akuity.io/authorized-stage": v}}, "acme", "dev")
	}
	authorizes == {"acme:dev", " acme : dev ", "acme:qa, acme:dev", "acme:dev,,"}
	apps.auth_error({"annotations": {"kargo.akuity.io/authorized-stage": "acme:dev,garbage"}}) == `invalid authorized Stage "garbage": expected format "<project>:<stage>"`
	apps.auth_error({"annotations": {"kargo.akuity.io/authorized-stage": "acme:dev, acme:qa-*"}}) == `invalid authorized Stage "acme:qa-*": deprecated glob expressions are no longer supported`
	apps.auth_error({"annotations": {"kargo.akuity.io/authorized-stage": " , "}}) == `no authorized Stages found in " , "`
	apps.auth_error({"annotations": {}}) == ""
}

# ---------------------------------------------------------------------------
# Copies of one Application (one key, two objects) may disagree on auto-sync:
# the findings' autoSync map says on, instead of failing the evaluation with
# an object key conflict.
test_auto_sync_of_copies_that_disagree if {
	model.auto_sync_by_app([
		{"app": {"key": "argocd/dev", "auto_sync": false}},
		{"app": {"key": "argocd/dev", "auto_sync": true}},
		{"app": {"key": "argocd/qa", "auto_sync": false}},
	]) == {"argocd/dev": true, "argocd/qa": false}
}

# A sources[] entry that matches no source of its Application fails the step
# on every promotion (unmatched-update-source says so), and with it every pin
# of the promotion, another Application's included; so does a selector with no
# criterion.
test_failing_step_cancels_the_promotions_pins if {
	stray := {"name": "other", "sources": [{"repoURL": "https://git.example.com/elsewhere.git", "desiredRevision": "${{ outputs.push.commit }}"}]}
	estate := f.estate([app("dev", "main", "acme:dev"), app("other", "main", "acme:dev"), stage("dev", "main", [pinning("dev"), stray])])
	[[m.app.key, m.url] | some m in model.unmatched] == [["argocd/other", "https://git.example.com/elsewhere.git"]] with input as estate
	model.failing == {"acme/dev": ["unmatched-source"]} with input as estate
	pin_rows == [] with input as estate

	empty := {"selector": {"matchLabels": {}}, "sources": [f.pin_url(f.repo)]}
	model.failing == {"acme/dev": ["empty-selector"]} with input as f.estate([app("dev", "main", "acme:dev"), stage("dev", "main", [pinning("dev"), empty])])

	# the other Stages' pins stay
	two := f.estate([
		app("dev", "main", "acme:dev"), app("other", "main", "acme:dev"), app("qa", "main", "acme:qa"),
		stage("dev", "main", [pinning("dev"), stray]), stage("qa", "main", [pinning("qa")]),
	])
	pin_rows == [["acme/qa", "argocd/qa", 0, "github.com/acme/deploy@main", "own"]] with input as two
}

# A selector whose every match does not authorize the Stage fails the step
# ("found %d Application(s) matching selector ..., but none are authorized"):
# the Stage's other pins are never checked either.
test_selector_none_authorized_fails_the_promotion if {
	sel := {"selector": {"matchLabels": {"team": "web"}}, "sources": [f.pin_url(f.repo)]}
	web := f.application("argocd", "web", f.labelled({"team": "web"}, "acme:qa"), f.tracking(f.repo, "main"))
	estate := f.estate([app("dev", "main", "acme:dev"), web, stage("dev", "main", [pinning("dev"), sel])])
	model.failing == {"acme/dev": ["unauthorized"]} with input as estate
	pin_rows == [] with input as estate
}
