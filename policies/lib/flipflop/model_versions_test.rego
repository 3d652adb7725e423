package lib.flipflop.model_versions_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.model_test as mt

# desiredCommitFromStep is a pin on the Kargo versions that have it (v0.9 to
# v1.2); from v1.3 on, Kargo's schema rejects it and every promotion fails at
# the step: the Stage pins nothing, and unsupported-field says why.
v1_2 := {"kargo_version": "v1.2.4"}

test_desired_commit_from_step_pins if {
	entry := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "commit"}]}
	mt.legacy_rows == [["github.com/acme/deploy@main", "${{ outputs.commit.commit }}", "own", true, true]] with input as mt.entry_estate(entry)
		with data.lib.flipflop.config.settings as v1_2
	mt.legacy_rows == [["github.com/acme/deploy@main", "${{ outputs.commit.commit }}", "own", true, true]] with input as mt.entry_estate(entry)
		with data.lib.flipflop.config.settings as {"kargo_version": "0.9.0"}
}

test_desired_commit_from_step_fails_from_v1_3 if {
	entry := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "commit"}]}
	mt.legacy_rows == [] with input as mt.entry_estate(entry)
	mt.legacy_rows == [] with input as mt.entry_estate(entry) with data.lib.flipflop.config.settings as {"kargo_version": "v1.3.0"}
	model.failing == {"acme/dev": ["unsupported-field"]} with input as mt.entry_estate(entry)
	[x.path | some x in model.unsupported] == ["/spec/promotionTemplate/spec/steps/2/config/apps/0/sources/0/desiredCommitFromStep"] with input as mt.entry_estate(entry)
	model.failing == {} with input as mt.entry_estate(entry) with data.lib.flipflop.config.settings as v1_2
}

test_fields_a_version_lacks if {
	selected := {"selector": {"matchLabels": {"app": "dev"}}, "sources": [{"repoURL": f.repo, "desiredRevision": "abc"}]}
	fields == [] with input as mt.entry_estate(selected) with data.lib.flipflop.config.settings as {"kargo_version": "v1.11"}
	fields == ["selector"] with input as mt.entry_estate(selected) with data.lib.flipflop.config.settings as {"kargo_version": "v1.8.3"}
	fields == ["desiredRevision", "selector"] with input as mt.entry_estate(selected) with data.lib.flipflop.config.settings as {"kargo_version": "v1.0.0"}
	origins := {"name": "dev", "fromOrigin": {"kind": "Warehouse", "name": "w"}, "sources": [{"repoURL": f.repo, "fromOrigin": {}}]}
	fields == [] with input as mt.entry_estate(origins) with data.lib.flipflop.config.settings as {"kargo_version": "v1.2"}
	fields == ["fromOrigin", "fromOrigin"] with input as mt.entry_estate(origins) with data.lib.flipflop.config.settings as {"kargo_version": "v1.3"}
}

fields := sort([x.field.field | some x in model.unsupported])

test_desired_commit_from_step_with_update_target_revision_is_no_pin if {
	entry := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "commit", "updateTargetRevision": true}]}
	mt.legacy_rows == [] with input as mt.entry_estate(entry) with data.lib.flipflop.config.settings as v1_2
	mt.legacy_rows == [] with input as mt.entry_estate({"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": ""}]})
		with data.lib.flipflop.config.settings as v1_2
}

# Kargo v0.9 and v1.0 infer the revision of a source no entry gives one from
# the Freight: the commit a Warehouse found.
v1_0 := {"kargo_version": "v1.0.2"}

wh(name, repos) := {
	"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Warehouse",
	"metadata": {"name": name, "namespace": "acme"},
	"spec": {"subscriptions": [{"git": {"repoURL": r, "branch": "main"}} | some r in repos]},
}

# requesting is a Stage that requests Freight from the Warehouses named.
requesting(s, names) := object.union(s, {"spec": {"requestedFreight": [{"origin": {"kind": "Warehouse", "name": n}, "sources": {"direct": true}} | some n in names]}})

# A Stage that reads the branch it pushes to, but tracks no revision (the
# reader of another team's writes: it only clones main, and pushes elsewhere).
reader(name, apps) := f.stage_steps(name, [{"uses": "argocd-update", "config": {"apps": apps}}])

inferred_rows := [[p.stage.key, p.pointer.key, p.desired_class, p.desired] | some p in model.pins; p.inferred]

test_inferred_from_the_freight if {
	e := f.estate([wh("wh", [f.repo]), f.app("dev", "main"), requesting(reader("dev", [f.no_pin("dev")]), ["wh"])])
	inferred_rows == [["acme/dev", "github.com/acme/deploy@main", "freight", "the Freight's commit of https://github.com/acme/deploy.git (Warehouse acme/wh)"]] with input as e
		with data.lib.flipflop.config.settings as v1_0

	# v1.1 checks only what it is given; v0.8 Stages have no steps
	inferred_rows == [] with input as e
	inferred_rows == [] with input as e with data.lib.flipflop.config.settings as {"kargo_version": "v1.1.0"}
}

test_inferred_needs_one_subscribed_warehouse if {
	no_sub := f.estate([wh("wh", ["https://github.com/acme/other.git"]), f.app("dev", "main"), requesting(reader("dev", [f.no_pin("dev")]), ["wh"])])
	inferred_rows == [] with input as no_sub with data.lib.flipflop.config.settings as v1_0
	two := f.estate([wh("a", [f.repo]), wh("b", [f.repo]), f.app("dev", "main"), requesting(reader("dev", [f.no_pin("dev")]), ["a", "b"])])
	inferred_rows == [] with input as two with data.lib.flipflop.config.settings as v1_0

	# fromOrigin picks one of them
	picked := f.estate([
		wh("a", [f.repo]), wh("b", [f.repo]), f.app("dev", "main"),
		requesting(reader("dev", [{"name": "dev", "fromOrigin": {"kind": "Warehouse", "name": "b"}}]), ["a", "b"]),
	])
	[r[3] | some r in inferred_rows] == ["the Freight's commit of https://github.com/acme/deploy.git (Warehouse acme/b)"] with input as picked
		with data.lib.flipflop.config.settings as v1_0

	missing := f.estate([f.app("dev", "main"), requesting(reader("dev", [f.no_pin("dev")]), ["wh"])])
	inferred_rows == [] with input as missing with data.lib.flipflop.config.settings as v1_0
}

test_inferred_not_where_a_revision_is_given if {
	given := f.estate([
		wh("wh", [f.repo]), f.app("dev", "main"),
		requesting(reader("dev", [{"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "push"}]}]), ["wh"]),
	])
	inferred_rows == [] with input as given with data.lib.flipflop.config.settings as v1_0
	rewritten := f.estate([
		wh("wh", [f.repo]), f.app("dev", "main"),
		requesting(reader("dev", [{"name": "dev", "sources": [{"repoURL": f.repo, "updateTargetRevision": true}]}]), ["wh"]),
	])
	inferred_rows == [] with input as rewritten with data.lib.flipflop.config.settings as v1_0
}

# The loop v1.1 ended: a Stage that pushes to the branch its Application
# tracks is checked against the commit the Warehouse found, never the head.
test_inferred_on_the_branch_the_stage_pushes_is_never_met if {
	e := f.estate([wh("wh", [f.repo]), f.app("dev", "main"), requesting(f.stage("dev", "main", [f.no_pin("dev")]), ["wh"])])
	[p.id | some p in model.pins; model.unreachable[p.id]] != [] with input as e with data.lib.flipflop.config.settings as v1_0
	some reason in model.unreachable with input as e with data.lib.flipflop.config.settings as v1_0
	contains(reason, "the loop Kargo v1.1 ended")
}

# Two Stages reading main from one Warehouse, each checked against its own
# Freight's commit while another Stage moves main: the v1.0 flip-flop.
test_inferred_pins_contradict_a_writer if {
	e := f.estate([
		wh("wh", [f.repo]), f.app("dev", "main"), f.app("qa", "main"),
		requesting(reader("dev", [f.no_pin("dev")]), ["wh"]),
		requesting(reader("qa", [f.no_pin("qa")]), ["wh"]),
		f.stage("writer", "main", []),
	])
	count(model.pins_by_pointer["github.com/acme/deploy@main"]) == 2 with input as e with data.lib.flipflop.config.settings as v1_0
}

# Kargo v0.9 and v1.0 infer a chart source's version from the Freight too,
# when a Warehouse subscribes to the chart exactly as the source names it (an
# OCI chart, a repoURL with no scheme, as oci://<repoURL>/<chart>).
chart_app(name, url, chart, rev) := f.app_with(name, {"repoURL": url, "chart": chart, "targetRevision": rev}, {"automated": {}})

chart_wh(name, subs) := {
	"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Warehouse",
	"metadata": {"name": name, "namespace": "acme"},
	"spec": {"subscriptions": [{"chart": s} | some s in subs]},
}

test_inferred_chart_versions if {
	helm := "https://charts.example.com/stable"
	e := f.estate([
		chart_wh("wh", [{"repoURL": helm, "name": "app"}]), chart_app("dev", helm, "app", "1.x"), chart_app("qa", helm, "app", "1.x"),
		requesting(reader("dev", [f.no_pin("dev")]), ["wh"]),
		requesting(reader("qa", [f.no_pin("qa")]), ["wh"]),
	])
	inferred_rows == [
		["acme/dev", "charts.example.com/stable/app#semver:1.x", "freight", "the Freight's version of chart app of https://charts.example.com/stable (Warehouse acme/wh)"],
		["acme/qa", "charts.example.com/stable/app#semver:1.x", "freight", "the Freight's version of chart app of https://charts.example.com/stable (Warehouse acme/wh)"],
	] with input as e with data.lib.flipflop.config.settings as v1_0

	# two Stages, each its own Freight's version of one floating range
	count(model.pins_by_pointer["charts.example.com/stable/app#semver:1.x"]) == 2 with input as e with data.lib.flipflop.config.settings as v1_0
	inferred_rows == [] with input as e with data.lib.flipflop.config.settings as {"kargo_version": "v1.1.0"}

	# the chart's name must be the one subscribed to
	other := f.estate([
		chart_wh("wh", [{"repoURL": helm, "name": "other"}]), chart_app("dev", helm, "app", "1.x"),
		requesting(reader("dev", [f.no_pin("dev")]), ["wh"]),
	])
	inferred_rows == [] with input as other with data.lib.flipflop.config.settings as v1_0

	oci := f.estate([
		chart_wh("wh", [{"repoURL": "oci://ghcr.io/acme/charts/app"}]), chart_app("dev", "ghcr.io/acme/charts", "app", "1.2.3"),
		requesting(reader("dev", [f.no_pin("dev")]), ["wh"]),
	])
	[r[1] | some r in inferred_rows] == ["ghcr.io/acme/charts/app#version:1.2.3"] with input as oci with data.lib.flipflop.config.settings as v1_0
}

chart_pin(name, url, chart) := {"name": name, "sources": [{"repoURL": url, "chart": chart, "desiredRevision": "${{ chartFrom(vars.repo).Version }}"}]}

# Two charts of one Helm repository have versions of their own: a range
# each tracks is not one pointer.
test_charts_of_one_repository_are_pointers_of_their_own if {
	helm := "https://charts.example.com/stable"
	e := f.estate([
		chart_app("a", helm, "alpha", "1.x"), chart_app("b", helm, "beta", "1.x"),
		reader("a", [chart_pin("a", helm, "alpha")]), reader("b", [chart_pin("b", helm, "beta")]),
	])
	object.keys(model.pins_by_pointer) == {"charts.example.com/stable/alpha#semver:1.x", "charts.example.com/stable/beta#semver:1.x"} with input as e
}
