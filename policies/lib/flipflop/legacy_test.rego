package lib.flipflop.legacy_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.rules.foreign_branch_writer
import data.lib.flipflop.rules.shared_branch_contradiction
import data.lib.flipflop.rules.shared_write_branch
import data.lib.flipflop.rules.unreachable_desired_revision

warehouse(name, repos) := {
	"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Warehouse",
	"metadata": {"name": name, "namespace": "acme"},
	"spec": {"subscriptions": array.concat(
		[{"image": {"repoURL": "ghcr.io/acme/web"}}],
		[{"git": {"repoURL": r, "branch": "main"}} | some r in repos],
	)},
}

# legacy is a v0.5-0.8 Stage: subscriptions, gitRepoUpdates writing branch (none
# when branch is ""), argoCDAppUpdates of app.
legacy(name, subscriptions, branch, app) := {
	"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
	"metadata": {"name": name, "namespace": "acme"},
	"spec": {
		"subscriptions": subscriptions,
		"promotionMechanisms": object.union(
			{"argoCDAppUpdates": [{"appName": app}]},
			git_updates(branch),
		),
	},
}

git_updates("") := {}

git_updates(branch) := {"gitRepoUpdates": [{"repoURL": f.repo, "writeBranch": branch}]} if branch != ""

from_warehouse := {"warehouse": "wh"}

summary(pins) := [{"stage": p.stage.key, "app": p.app.key, "pointer": p.pointer.key, "class": p.desired_class} | some p in pins]

test_own_commit_on_tracked_branch if {
	estate := f.estate([warehouse("wh", [f.repo]), f.app("dev", "env/dev"), legacy("dev", from_warehouse, "env/dev", "dev")])
	summary(model.pins) == [{"stage": "acme/dev", "app": "argocd/dev", "pointer": "github.com/acme/deploy@env/dev", "class": "own"}] with input as estate
	count(unreachable_desired_revision.report) == 0 with input as estate
}

test_writes_other_branch_than_tracked_is_unreachable if {
	estate := f.estate([warehouse("wh", [f.repo]), f.app("dev", "main"), legacy("dev", from_warehouse, "stages/dev", "dev")])
	some finding in unreachable_desired_revision.report with input as estate
	finding.details.stage == "acme/dev"
	contains(finding.message, "pushes only to github.com/acme/deploy @ stages/dev")
}

test_two_legacy_stages_on_main_flip_flop if {
	estate := f.estate([
		warehouse("wh", [f.repo]),
		f.app("dev", "main"), f.app("qa", "main"),
		legacy("dev", from_warehouse, "main", "dev"),
		legacy("qa", {"upstreamStages": [{"name": "dev"}]}, "main", "qa"),
	])
	some finding in shared_branch_contradiction.report with input as estate
	finding.details.stages == ["acme/dev", "acme/qa"]
	contains(finding.message, "(acme/dev, acme/qa: Kargo <= 0.8 promotionMechanisms, where Kargo checks the Application against the Freight's commit")
}

test_warehouse_without_the_repository_pins_nothing if {
	estate := f.estate([
		warehouse("wh", []),
		f.app("dev", "main"), f.app("qa", "main"),
		legacy("dev", from_warehouse, "main", "dev"),
		legacy("qa", from_warehouse, "main", "qa"),
	])
	summary(model.pins) == [] with input as estate
	count(shared_branch_contradiction.report) == 0 with input as estate
}

test_unknown_warehouse_pins_nothing if {
	estate := f.estate([f.app("dev", "main"), f.app("qa", "main"), legacy("dev", from_warehouse, "main", "dev"), legacy("qa", from_warehouse, "main", "qa")])
	summary(model.pins) == [] with input as estate
}

test_unknown_upstream_stage_pins_nothing if {
	estate := f.estate([warehouse("wh", [f.repo]), f.app("qa", "main"), legacy("qa", {"upstreamStages": [{"name": "dev"}]}, "main", "qa")])
	summary(model.pins) == [] with input as estate
}

test_upstream_chain_reaches_the_warehouse if {
	estate := f.estate([
		warehouse("wh", [f.repo]), f.app("prod", "env/prod"),
		legacy("dev", from_warehouse, "env/dev", "dev"),
		legacy("qa", {"upstreamStages": [{"name": "dev"}]}, "env/qa", "qa"),
		legacy("prod", {"upstreamStages": [{"name": "qa"}]}, "env/prod", "prod"),
	])
	summary(model.pins) == [{"stage": "acme/prod", "app": "argocd/prod", "pointer": "github.com/acme/deploy@env/prod", "class": "own"}] with input as estate
}

test_requested_freight_origin if {
	stage := object.union(legacy("dev", {}, "main", "dev"), {"spec": {"requestedFreight": [{"origin": {"kind": "Warehouse", "name": "wh"}, "sources": {"direct": true}}]}})
	estate := f.estate([warehouse("wh", [f.repo]), f.app("dev", "env/dev"), stage])
	[p.pointer | some p in summary(model.pins)] == ["github.com/acme/deploy@env/dev"] with input as estate
}

test_freight_commit_without_git_updates if {
	estate := f.estate([
		warehouse("wh", [f.repo]), f.app("dev", "main"), f.app("qa", "main"),
		legacy("dev", from_warehouse, "", "dev"),
		legacy("qa", from_warehouse, "main", "qa"),
	])
	{p.stage: p.class | some p in summary(model.pins)} == {"acme/dev": "freight", "acme/qa": "own"} with input as estate
	count(shared_branch_contradiction.report) == 1 with input as estate
}

test_multi_source_application_is_not_checked if {
	app := f.application("argocd", "dev", {}, {"sources": [{"repoURL": f.repo, "targetRevision": "main"}]})
	estate := f.estate([warehouse("wh", [f.repo]), app, legacy("dev", from_warehouse, "main", "dev")])
	summary(model.pins) == [] with input as estate
}

test_two_warehouses_with_the_repository_are_ambiguous if {
	stage := object.union(legacy("dev", {}, "main", "dev"), {"spec": {"requestedFreight": [
		{"origin": {"kind": "Warehouse", "name": "a"}},
		{"origin": {"kind": "Warehouse", "name": "b"}},
	]}})
	estate := f.estate([warehouse("a", [f.repo]), warehouse("b", [f.repo]), f.app("dev", "main"), stage])
	summary(model.pins) == [] with input as estate
	explicit := json.patch(stage, [{"op": "add", "path": "/spec/promotionMechanisms/argoCDAppUpdates/0/origin", "value": {"kind": "Warehouse", "name": "b"}}])
	with_origin := f.estate([warehouse("a", [f.repo]), warehouse("b", [f.repo]), f.app("dev", "main"), explicit])
	[p.stage.key | some p in model.pins] == ["acme/dev"] with input as with_origin
}

test_foreign_writer_moves_a_legacy_pin if {
	v1 := f.stage("qa", "main", [f.no_pin("qa")])
	estate := f.estate([warehouse("wh", [f.repo]), f.app("dev", "main"), f.app("qa", "main"), legacy("dev", from_warehouse, "main", "dev"), v1])
	some finding in foreign_branch_writer.report with input as estate
	finding.details.pinningStages == ["acme/dev"]
	finding.details.writingStages == ["acme/qa"]
}

# A run that names a Kargo version from v1.0 on reads no promotionMechanisms:
# the Stage CRD no longer has the field, and the Stage promotes nothing.
test_mechanisms_dropped_on_a_named_v1 if {
	estate := f.estate([
		warehouse("wh", [f.repo]),
		f.app("dev", "main"), f.app("qa", "main"),
		legacy("dev", from_warehouse, "main", "dev"),
		legacy("qa", {"upstreamStages": [{"name": "dev"}]}, "main", "qa"),
	])
	count(model.pins) == 2 with input as estate
	count(model.pins) == 2 with input as estate with data.lib.flipflop.config.settings as {"kargo_version": "v0.8.4"}
	count(model.pins) == 0 with input as estate with data.lib.flipflop.config.settings as {"kargo_version": "v1.0.0"}
	count(model.writers) == 0 with input as estate with data.lib.flipflop.config.settings as {"kargo_version": "v1.0.0"}
	[s.key | some s in model.legacy_dropped] == ["acme/dev", "acme/qa"] with input as estate with data.lib.flipflop.config.settings as {"kargo_version": "v1.11"}
	model.legacy_dropped == [] with input as estate
}

# With no version named, a Stage written with promotionMechanisms is read as
# Kargo v0.8 reads it while the run follows the newest release: every finding
# about it says so (issue 40, item 3); on a named version it does not.
test_findings_about_dated_stages_say_which_kargo if {
	estate := f.estate([
		warehouse("wh", [f.repo]),
		f.app("dev", "main"), f.app("qa", "main"),
		legacy("dev", from_warehouse, "main", "dev"),
		legacy("qa", {"upstreamStages": [{"name": "dev"}]}, "main", "qa"),
	])
	named := shared_write_branch.report with input as estate with data.lib.flipflop.config.settings as {"kargo_version": "v0.8.4"}
	count(named) == 1
	every x in named {
		not contains(x.message, "as Kargo v0.8 does")
	}
	some write in shared_write_branch.report with input as estate
	contains(write.message, "Stages acme/dev, acme/qa are written with spec.promotionMechanisms, so flipflop read them as Kargo v0.8 does, not as Kargo v1.")
	contains(write.message, "name the Kargo version you run with --kargo-version.")
	some flip in shared_branch_contradiction.report with input as estate
	contains(flip.message, "so flipflop read them as Kargo v0.8 does")
}

test_findings_about_a_current_stage_say_nothing_of_v08 if {
	v1 := f.stage("qa", "main", [f.no_pin("qa")])
	estate := f.estate([warehouse("wh", [f.repo]), f.app("dev", "main"), f.app("qa", "main"), legacy("dev", from_warehouse, "main", "dev"), v1])
	some finding in foreign_branch_writer.report with input as estate
	contains(finding.message, "Stage acme/dev is written with spec.promotionMechanisms, so flipflop read it as Kargo v0.8 does")
	not contains(finding.message, "acme/qa is written with")
}
