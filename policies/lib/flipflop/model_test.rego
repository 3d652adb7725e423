package lib.flipflop.model_test

import data.lib.flipflop.apps
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.rules.unknown_application

deploy := "github.com/acme/deploy"

chart_repo := "https://charts.example.com/stable"

# app is an Application in argocd tracking f.repo at rev, authorizing stages.
app(name, rev, stages) := f.application("argocd", name, f.authorizing(stages), f.tracking(f.repo, rev))

# stage clones f.repo at branch into ./repo, pushes it, and runs argocd-update.
stage(name, branch, entries) := f.template_stage(name, [], [], [
	f.clone(f.repo, [f.checkout("./repo", branch)]),
	f.push("push", "./repo", {}),
	f.update(entries),
])

# pinning is an argocd-update entry for app name pinning f.repo.
pinning(name) := {"name": name, "sources": [f.pin_url(f.repo)]}

# Views of the model, read under `with input as ...` in the tests.

pin_rows := [[p.stage.key, p.app.key, p.source.index, p.pointer.key, p.desired_class] | some p in model.pins]

desired_rows := [[p.desired, p.desired_class] | some p in model.pins]

pinned_names := [p.app.name | some p in model.pins]

target_rows := [[u.stage.key, u.namespace, u.name, [[t.app.key, t.via, t.authorized] | some t in u.targets]] | some u in model.updates]

selected_rows := [[t.app.name, t.via, t.authorized] | some u in model.updates; some t in u.targets]

pointer_rows := {a.key: [s.pointer.key | some s in model.sources; s.app.key == a.key] | some a in apps.records}

writer_rows := [[w.stage.key, w.step.alias, w.pointer.key] | some w in model.writers]

pointer_named(name) := p if {
	some s in model.sources
	s.app.name == name
	p := s.pointer
}

# ---------------------------------------------------------------------------
# 2. Expressions

test_app_name_with_ctx_stage_pins_that_stages_application if {
	estate := f.estate([
		app("app-dev", "main", "acme:dev, acme:qa"), app("app-qa", "main", "acme:dev, acme:qa"),
		stage("dev", "main", [pinning("app-${{ ctx.stage }}")]),
		stage("qa", "main", [pinning("app-${{ctx.stage}}")]),
	])
	pin_rows == [
		["acme/dev", "argocd/app-dev", 0, "github.com/acme/deploy@main", "own"],
		["acme/qa", "argocd/app-qa", 0, "github.com/acme/deploy@main", "own"],
	] with input as estate
	target_rows == [
		["acme/dev", "argocd", "app-dev", [["argocd/app-dev", "name", true]]],
		["acme/qa", "argocd", "app-qa", [["argocd/app-qa", "name", true]]],
	] with input as estate
}

test_app_name_with_ctx_project_and_vars if {
	estate := f.estate([
		f.template_stage("dev", [f.var("suffix", "one"), f.var("repo", f.repo)], [f.var("ns", "team")], [
			f.clone(f.repo, [f.checkout("./repo", "main")]),
			f.update([
				{"name": "${{ ctx.project }}-${{ vars['suffix'] }}", "namespace": "${{ vars.ns }}", "sources": [f.pin_url("${{ vars.repo }}")]},
				{"name": "${{ ctx.project }}-${{ vars.nope }}", "namespace": "team"},
			]),
		]),
		f.application("team", "acme-one", f.authorizing("acme:dev"), f.tracking(f.repo, "main")),
	])
	target_rows == [
		["acme/dev", "team", "acme-one", [["team/acme-one", "name", true]]],
		["acme/dev", "team", "acme-${{ vars.nope }}", []],
	] with input as estate
	pin_rows == [["acme/dev", "team/acme-one", 0, "github.com/acme/deploy@main", "own"]] with input as estate
}

test_app_name_from_outputs_targets_nothing if {
	estate := f.estate([app("dev", "main", "acme:dev"), stage("dev", "main", [pinning("${{ outputs.x }}")])])
	target_rows == [["acme/dev", "argocd", "${{ outputs.x }}", []]] with input as estate
	pin_rows == [] with input as estate
	u := model.updates[0] with input as estate
	not model.resolvable(u.name, u.namespace)
	count(unknown_application.report) == 0 with input as estate
}

test_missing_literal_app_is_resolvable_but_unknown if {
	estate := f.estate([app("dev", "main", "acme:dev"), stage("dev", "main", [pinning("nope")])])
	target_rows == [["acme/dev", "argocd", "nope", []]] with input as estate
	u := model.updates[0] with input as estate
	model.resolvable(u.name, u.namespace)
	count(unknown_application.report) == 1 with input as estate
}

# entry_estate is dev's Application and a Stage running one argocd-update entry.
entry_estate(entry) := f.estate([app("dev", "main", "acme:dev"), stage("dev", "main", [entry])])

desiring(desired) := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredRevision": desired}]}

test_desired_revision_expression_counts_as_set if {
	desired_rows == [["${{ outputs.push.commit }}", "own"]] with input as entry_estate(desiring("${{ outputs.push.commit }}"))
	desired_rows == [["${{ task.outputs['commit'].commit }}", "own"]] with input as entry_estate(desiring("${{ task.outputs['commit'].commit }}"))
	desired_rows == [["${{ commitFrom(vars.repo).ID }}", "freight"]] with input as entry_estate(desiring("${{ commitFrom(vars.repo).ID }}"))
	desired_rows == [["${{ outputs.push.branch }}", "expression"]] with input as entry_estate(desiring("${{ outputs.push.branch }}"))
	desired_rows == [[f.sha, "literal"]] with input as entry_estate(desiring(f.sha))
	desired_rows == [["dev", "literal"]] with input as entry_estate(desiring("${{ ctx.stage }}"))
}

test_desired_revision_unset_pins_nothing if {
	desired_rows == [] with input as entry_estate({"name": "dev"})
	desired_rows == [] with input as entry_estate({"name": "dev", "sources": [{"repoURL": f.repo}]})
	desired_rows == [] with input as entry_estate(desiring(""))
}

test_unknown_repo_url_pins_nothing if {
	estate := entry_estate({"name": "dev", "sources": [f.pin_url("${{ vars.nope }}")]})
	pin_rows == [] with input as estate
}

# ---------------------------------------------------------------------------
# 3. Application selection

test_namespace_defaults_to_argocd if {
	estate := f.estate([
		app("dev", "main", "acme:dev"),
		f.application("team", "dev", f.authorizing("acme:dev"), f.tracking(f.repo, "main")),
		stage("dev", "main", [pinning("dev")]),
	])
	target_rows == [["acme/dev", "argocd", "dev", [["argocd/dev", "name", true]]]] with input as estate
	pin_rows == [["acme/dev", "argocd/dev", 0, "github.com/acme/deploy@main", "own"]] with input as estate
}

test_explicit_namespace if {
	estate := f.estate([
		app("dev", "main", "acme:dev"),
		f.application("team", "dev", f.authorizing("acme:dev"), f.tracking(f.repo, "main")),
		stage("dev", "main", [object.union(pinning("dev"), {"namespace": "team"})]),
	])
	target_rows == [["acme/dev", "team", "dev", [["team/dev", "name", true]]]] with input as estate
}

test_namespace_defaults_to_setting if {
	estate := f.estate([
		app("dev", "main", "acme:dev"),
		f.application("gitops", "dev", f.authorizing("acme:dev"), f.tracking(f.repo, "main")),
		stage("dev", "main", [pinning("dev")]),
	])
	settings := {"argocd_namespace": "gitops"}
	target_rows == [["acme/dev", "gitops", "dev", [["gitops/dev", "name", true]]]] with input as estate with data.lib.flipflop.config.settings as settings
	pin_rows == [["acme/dev", "gitops/dev", 0, "github.com/acme/deploy@main", "own"]] with input as estate with data.lib.flipflop.config.settings as settings
}

labelled(name, labels, stages) := f.application("argocd", name, f.labelled(labels, stages), f.tracking(f.repo, "main"))

selecting(selector) := {"selector": selector, "sources": [f.pin_url(f.repo)]}

# selector_estate: four labelled Applications, and Stage dev selecting some.
selector_estate(selector) := f.estate([
	labelled("dev-a", {"env": "dev", "team": "web"}, "acme:dev"),
	labelled("dev-b", {"env": "dev", "team": "api"}, "acme:qa"),
	labelled("qa-a", {"env": "qa", "team": "web"}, "acme:dev"),
	labelled("bare", {}, "acme:dev"),
	stage("dev", "main", [selecting(selector)]),
])

test_selector_match_labels_pins_only_authorized if {
	estate := selector_estate({"matchLabels": {"env": "dev"}})
	selected_rows == [["dev-a", "selector", true], ["dev-b", "selector", false]] with input as estate
	pinned_names == ["dev-a"] with input as estate
}

test_selector_match_labels_none_authorized if {
	estate := selector_estate({"matchLabels": {"team": "api"}})
	selected_rows == [["dev-b", "selector", false]] with input as estate
	pinned_names == [] with input as estate
}

test_selector_in if {
	estate := selector_estate({"matchExpressions": [{"key": "env", "operator": "In", "values": ["qa", "prod"]}]})
	selected_rows == [["qa-a", "selector", true]] with input as estate
	pinned_names == ["qa-a"] with input as estate
}

test_selector_not_in if {
	estate := selector_estate({"matchLabels": {"team": "web"}, "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["qa"]}]})
	selected_rows == [["dev-a", "selector", true]] with input as estate
	pinned_names == ["dev-a"] with input as estate
}

test_selector_exists if {
	estate := selector_estate({"matchExpressions": [{"key": "team", "operator": "Exists"}]})
	selected_rows == [["dev-a", "selector", true], ["dev-b", "selector", false], ["qa-a", "selector", true]] with input as estate
	pinned_names == ["dev-a", "qa-a"] with input as estate
}

test_selector_does_not_exist if {
	estate := selector_estate({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]})
	selected_rows == [["bare", "selector", true]] with input as estate
	pinned_names == ["bare"] with input as estate
}

test_selector_matching_nothing if {
	estate := selector_estate({"matchLabels": {"env": "prod"}})
	selected_rows == [] with input as estate
	pinned_names == [] with input as estate
}

test_selector_in_other_namespace if {
	sel := object.union(selecting({"matchLabels": {"env": "dev"}}), {"namespace": "team"})
	target_rows == [["acme/dev", "team", "", []]] with input as f.estate([labelled("dev-a", {"env": "dev"}, "acme:dev"), stage("dev", "main", [sel])])
}

# An Application named that does not authorize the Stage fails the step on
# every promotion (missing-authorized-stage says so): none of the Stage's pins
# is ever checked, so none is left to contradict anything.
test_unauthorized_name_target_fails_every_pin_of_the_stage if {
	estate := f.estate([
		app("dev", "main", "acme:qa"), app("other", "main", "acme:dev"),
		stage("dev", "main", [pinning("other"), pinning("dev")]),
	])
	target_rows == [
		["acme/dev", "argocd", "other", [["argocd/other", "name", true]]],
		["acme/dev", "argocd", "dev", [["argocd/dev", "name", false]]],
	] with input as estate
	pin_rows == [] with input as estate
	model.failing == {"acme/dev": ["unauthorized"]} with input as estate

	# nor do copies of one Application of which one authorizes the Stage:
	# which copy Kargo meets is unknown
	copies := f.estate([app("dev", "main", "acme:qa"), app("dev", "main", "acme:dev"), stage("dev", "main", [pinning("dev")])])
	model.failing == {} with input as copies

	# an authorization the files leave unknown fails nothing
	unknown := f.estate([app("dev", "main", "${{ vars.who }}"), stage("dev", "main", [pinning("dev")])])
	model.failing == {} with input as unknown
	count(pin_rows) == 1 with input as unknown
}

# Kargo evaluates ctx and vars expressions in apps[].selector too (kargo.md §1.2).
test_selector_values_with_expressions if {
	# regal ignore:with-outside-test-context
	pinned_names == ["dev-a"] with input as f.estate([
		labelled("dev-a", {"env": "dev"}, "acme:dev"),
		labelled("qa-a", {"env": "qa"}, "acme:dev"),
		stage("dev", "main", [selecting({"matchLabels": {"env": "${{ ctx.stage }}"}})]),
	])
}

# ---------------------------------------------------------------------------
# 4. Sources

test_pin_on_single_source if {
	p := model.pins[0] with input as f.estate([app("dev", "env/dev", "acme:dev"), stage("dev", "env/dev", [pinning("dev")])])
	p.pointer == {
		"known": true, "floating": true, "key": "github.com/acme/deploy@env/dev", "repo": deploy,
		"kind": "branch", "name": "env/dev", "assumed": false, "head": false,
	}
	p.exact == true
	p.legacy_field == false
	p.desired == "${{ outputs.push.commit }}"
	p.source.repo_url == f.repo
}

multi(name, chart_rev, ref_rev) := f.application("argocd", name, f.authorizing("acme:dev"), {
	"source": {"repoURL": "https://github.com/acme/ignored", "targetRevision": "main"},
	"sources": [
		{"repoURL": chart_repo, "chart": "app", "targetRevision": chart_rev},
		{"repoURL": f.repo, "targetRevision": ref_rev, "ref": "values"},
	],
})

test_sources_override_source_and_ref_source_is_pinned if {
	estate := f.estate([multi("dev", "1.2.3", "main"), stage("dev", "main", [pinning("dev")])])
	pin_rows == [["acme/dev", "argocd/dev", 1, "github.com/acme/deploy@main", "own"]] with input as estate
	pointer_rows == {"argocd/dev": ["charts.example.com/stable/app#version:1.2.3", "github.com/acme/deploy@main"]} with input as estate
}

test_source_ignored_when_sources_set if {
	entry := {"name": "dev", "sources": [f.pin_url("https://github.com/acme/ignored")]}
	pin_rows == [] with input as f.estate([multi("dev", "1.2.3", "main"), stage("dev", "main", [entry])])
}

chart_pin(chart) := {"name": "dev", "sources": [{"repoURL": chart_repo, "chart": chart, "desiredRevision": "${{ chartFrom(vars.repo).Version }}"}]}

chart_rows := [[p.source.index, p.pointer.key, p.pointer.floating, p.desired_class] | some p in model.pins]

test_chart_version_pin_is_fixed if {
	chart_rows == [[0, "charts.example.com/stable/app#version:1.2.3", false, "freight"]] with input as f.estate([multi("dev", "1.2.3", "main"), stage("dev", "main", [chart_pin("app")])])
}

test_chart_constraint_pin_floats if {
	chart_rows == [[0, "charts.example.com/stable/app#semver:1.2.*", true, "freight"]] with input as f.estate([multi("dev", "1.2.*", "main"), stage("dev", "main", [chart_pin("app")])])
}

test_chart_must_be_equal if {
	pin_rows == [] with input as f.estate([multi("dev", "1.2.3", "main"), stage("dev", "main", [chart_pin("other")])])
	no_chart := {"name": "dev", "sources": [{"repoURL": chart_repo, "desiredRevision": "x"}]}
	pin_rows == [] with input as f.estate([multi("dev", "1.2.3", "main"), stage("dev", "main", [no_chart])])
}

test_repo_url_must_be_exactly_equal if {
	estate := f.estate([
		f.application("argocd", "dev", f.authorizing("acme:dev"), f.tracking("https://github.com/acme/deploy", "main")),
		stage("dev", "main", [pinning("dev")]),
	])
	pin_rows == [] with input as estate
}

hydrated(name, sync_repo) := f.application("argocd", name, f.authorizing("acme:dev"), {"sourceHydrator": {
	"drySource": {"repoURL": f.repo, "targetRevision": "HEAD", "path": "envs/dev"},
	"syncSource": object.union({"targetBranch": "environments/dev", "path": "envs/dev"}, sync_repo),
}})

# Kargo's Application type has no sourceHydrator: an Application that uses
# one has no source argocd-update can pin (the step fails instead:
# unmatched-update-source), though Argo CD tracks the sync branch.
test_hydrator_is_not_pinned if {
	estate := f.estate([hydrated("dev", {}), stage("dev", "main", [pinning("dev")])])
	pin_rows == [] with input as estate
	pointer_rows == {"argocd/dev": ["github.com/acme/deploy@environments/dev"]} with input as estate
}

test_hydrator_sync_repo if {
	estate := f.estate([hydrated("dev", {"repoURL": "https://github.com/acme/rendered"}), stage("dev", "main", [pinning("dev")])])
	pin_rows == [] with input as estate
	pointer_rows == {"argocd/dev": ["github.com/acme/rendered@environments/dev"]} with input as estate
}

# ---------------------------------------------------------------------------
# 5. Repository identity through the model

test_ssh_application_and_https_writer_share_a_pointer if {
	estate := f.estate([
		f.application("argocd", "dev", f.authorizing("acme:dev"), f.tracking("git@github.com:acme/deploy.git", "main")),
		stage("dev", "main", []),
	])
	pointer_rows == {"argocd/dev": ["github.com/acme/deploy@main"]} with input as estate
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@main"]] with input as estate
	w := model.writers[0] with input as estate
	w.repo_url == f.repo
}

test_other_host_is_another_pointer if {
	estate := f.estate([
		f.application("argocd", "dev", f.authorizing("acme:dev"), f.tracking("git@gitlab.com:acme/deploy.git", "main")),
		stage("dev", "main", []),
	])
	pointer_rows == {"argocd/dev": ["gitlab.com/acme/deploy@main"]} with input as estate
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@main"]] with input as estate
}

# ---------------------------------------------------------------------------
# 6. Revision classes and the default branch

# revs is an estate with Application a at rev and the other objects.
revs(rev, others) := f.estate(array.concat([app("a", rev, "")], others))

test_head_and_empty_are_the_default_branch if {
	others := [app("b", "main", "")]
	pointer_named("a") == {
		"known": true, "floating": true, "key": "github.com/acme/deploy@main", "repo": deploy,
		"kind": "branch", "name": "main", "assumed": true, "head": true,
	} with input as revs("HEAD", others)
	pointer_named("a").key == "github.com/acme/deploy@main" with input as revs("", others)
	pointer_named("a").key == "github.com/acme/deploy@main" with input as revs(null, others)
	pointer_named("a").key == "github.com/acme/deploy@main" with input as revs(" HEAD ", others)
}

test_refs_heads_is_the_branch if {
	pointer_named("a") == {
		"known": true, "floating": true, "key": "github.com/acme/deploy@env/dev", "repo": deploy,
		"kind": "branch", "name": "env/dev", "assumed": false, "head": false,
	} with input as revs("refs/heads/env/dev", [])
	pointer_named("a").key == "github.com/acme/deploy@main" with input as revs("refs/heads/main", [])
}

test_sha_and_tags_are_fixed if {
	sha_key := concat("", ["github.com/acme/deploy#sha:", f.sha])
	[pointer_named("a").key, pointer_named("a").floating, pointer_named("a").kind] == [sha_key, false, "sha"] with input as revs(f.sha, [])
	pointer_named("a").key == sha_key with input as revs(upper(f.sha), [])
	t := pointer_named("a") with input as revs("v1.2.3", [])
	[t.key, t.floating, t.kind] == ["github.com/acme/deploy#tag:v1.2.3", false, "tag"]
	pointer_named("a").key == "github.com/acme/deploy#tag:v1.2.3" with input as revs("refs/tags/v1.2.3", [])
	s := pointer_named("a") with input as revs("abc1234", [])
	[s.key, s.floating] == ["github.com/acme/deploy#sha:abc1234", false]
}

test_git_semver_constraint_floats if {
	p := pointer_named("a") with input as revs("1.2.*", [])
	[p.key, p.floating, p.kind] == ["github.com/acme/deploy#semver:1.2.*", true, "semver"]
}

test_head_resolves_to_main_when_main_is_named if {
	pointer_named("a").key == "github.com/acme/deploy@main" with input as revs("HEAD", [app("b", "main", ""), app("c", "master", "")])
	pointer_named("a").key == "github.com/acme/deploy@main" with input as revs("HEAD", [app("b", "refs/heads/main", "")])
}

test_head_resolves_to_master_when_only_master_is_named if {
	p := pointer_named("a") with input as revs("HEAD", [app("b", "master", ""), app("c", "env/dev", "")])
	[p.key, p.name, p.assumed, p.head] == ["github.com/acme/deploy@master", "master", true, true]
}

test_head_stays_head_when_neither_is_named if {
	p := pointer_named("a") with input as revs("HEAD", [app("b", "env/dev", "")])
	[p.key, p.name, p.head] == ["github.com/acme/deploy@HEAD", "HEAD", true]
}

test_main_of_another_repository_does_not_count if {
	other := f.application("argocd", "b", {}, f.tracking("https://github.com/acme/other", "main"))
	pointer_named("a").key == "github.com/acme/deploy@HEAD" with input as revs("HEAD", [other])
}

test_main_named_by_a_writer_counts if {
	pointer_named("a").key == "github.com/acme/deploy@main" with input as revs("HEAD", [stage("dev", "main", [])])
	pointer_named("a").key == "github.com/acme/deploy@master" with input as revs("HEAD", [stage("dev", "master", [])])
}

test_configured_default_branch if {
	settings := {"default_branch": "trunk"}
	pointer_named("a") == {
		"known": true, "floating": true, "key": "github.com/acme/deploy@trunk", "repo": deploy,
		"kind": "branch", "name": "trunk", "assumed": false, "head": true,
	} with input as revs("HEAD", [app("b", "main", "")]) with data.lib.flipflop.config.settings as settings
	m := pointer_named("a") with input as revs("main", []) with data.lib.flipflop.config.settings as settings
	[m.key, m.assumed] == ["github.com/acme/deploy@main", false]
}

test_assumed_only_when_unconfigured if {
	pointer_named("a").assumed == true with input as revs("HEAD", [app("b", "main", "")])
	pointer_named("a").assumed == false with input as revs("main", [app("b", "main", "")])
	c := pointer_named("a") with input as revs("HEAD", [app("b", "main", "")]) with data.lib.flipflop.config.settings as {"default_branch": "main"}
	[c.key, c.assumed] == ["github.com/acme/deploy@main", false]
}

test_unknown_repository_or_revision_is_no_pointer if {
	p := pointer_named("a") with input as revs("${{ vars.branch }}", [])
	[p.known, p.key, p.floating] == [false, "", false]
	q := pointer_named("x") with input as f.estate([f.application("argocd", "x", {}, f.tracking("${{ vars.repo }}", "main"))])
	[q.known, q.key] == [false, ""]
}

test_describe if {
	model.describe(pointer_named("a")) == "github.com/acme/deploy @ main" with input as revs("main", [])

	# HEAD is named by the branch it stands for, as an explicit branch is: one pointer, one name
	model.describe(pointer_named("a")) == "github.com/acme/deploy @ main" with input as revs("HEAD", [app("b", "main", "")])
	model.describe(pointer_named("a")) == "github.com/acme/deploy @ trunk" with input as revs("HEAD", []) with data.lib.flipflop.config.settings as {"default_branch": "trunk"}
	model.describe(pointer_named("a")) == "github.com/acme/deploy @ HEAD" with input as revs("HEAD", [])
	model.describe(pointer_named("a")) == "github.com/acme/deploy @ tag v1.2.3" with input as revs("v1.2.3", [])
}

# ---------------------------------------------------------------------------
# 9. Legacy desiredCommitFromStep (model_versions_test.rego)

legacy_rows := [[p.pointer.key, p.desired, p.desired_class, p.legacy_field, p.exact] | some p in model.pins]

# ---------------------------------------------------------------------------
# Groupings

test_pin_groupings if {
	estate := f.estate([
		app("dev", "main", "acme:dev"), app("qa", "main", "acme:qa"), app("prod", f.sha, "acme:prod"),
		stage("dev", "main", [pinning("dev")]), stage("qa", "main", [pinning("qa")]), stage("prod", "main", [pinning("prod")]),
	])
	count(model.pins) == 3 with input as estate
	by_pointer := {k: [p.stage.key | some p in g] | some k, g in model.pins_by_pointer} with input as estate

	# prod expects its own commit on a fixed SHA: never met, so grouped with
	# nothing (unreachable-desired-revision reports it, alone).
	by_pointer == {"github.com/acme/deploy@main": ["acme/dev", "acme/qa"]}
	[p.stage.key | some p in model.pins; model.unreachable[p.id]] == ["acme/prod"] with input as estate
	model.pin_pointers == {"github.com/acme/deploy@main"} with input as estate
	by_app := {k: count(g) | some k, g in model.pins_by_app} with input as estate
	by_app == {"argocd/dev": 1, "argocd/qa": 1, "argocd/prod": 1}
}

test_no_pins_no_groups if {
	estate := entry_estate({"name": "dev"})
	model.pins_by_pointer == {} with input as estate
	model.pin_pointers == set() with input as estate
	model.pins_by_app == {} with input as estate
}
