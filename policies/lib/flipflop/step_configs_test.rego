package lib.flipflop.step_configs_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.step_configs as sc

steps_estate(steps) := f.estate([f.stage_steps("dev", steps)])

rows := [[w.alias, p.field, p.problem] | some w in sc.invalid; some p in w.problems]

push := {"uses": "git-push", "as": "push", "config": {"path": "./out"}}

clone := {"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./out"}]}}

test_valid_steps_have_no_problems if {
	rows == [] with input as steps_estate([clone, push, {"uses": "git-commit", "config": {"path": "./out", "message": "m", "author": {"name": "a", "email": "a@example.com"}}}])
}

test_missing_and_unknown_keys if {
	rows == [["push", "path", "missing"]] with input as steps_estate([{"uses": "git-push", "as": "push", "config": {"targetBranch": "main"}}])
	rows == [
		["commit", "messageFromSteps", "unknown"],
		["commit", "message", "missing"],
	] with input as steps_estate([{"uses": "git-commit", "as": "commit", "config": {"path": "./out", "messageFromSteps": ["x"]}}])

	# a step with no config lacks what its schema requires
	rows == [["push", "path", "missing"]] with input as steps_estate([{"uses": "git-push", "as": "push"}])
}

test_one_level_down if {
	rows == [
		["clone", "checkout[1].fromFreight", "unknown"],
		["clone", "checkout[1].path", "missing"],
	] with input as steps_estate([{"uses": "git-clone", "as": "clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./a"}, {"fromFreight": true}]}}])
	rows == [["c", "author.email", "missing"]] with input as steps_estate([{"uses": "git-commit", "as": "c", "config": {"path": ".", "message": "m", "author": {"name": "a"}}}])
}

# What is not Kargo's to check: a platform's own steps, a config of the wrong
# type (invalid-object's), a container of the wrong type, expressions in values.
test_not_judged if {
	rows == [] with input as steps_estate([{"uses": "snow-create", "config": {"anything": 1}}])
	rows == [] with input as steps_estate([{"uses": "git-push", "config": "oops"}])
	rows == [] with input as steps_estate([{"uses": "git-push", "config": null}])
	rows == [] with input as steps_estate([{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": "${{ vars.checkouts }}"}}])
	rows == [] with input as steps_estate([{"uses": "git-push", "config": {"path": "${{ vars.path }}", "generateTargetBranch": "${{ vars.generate }}"}}])
}

# Each minor release is judged by its own schemas (the newest patch release
# of it); versions before v0.9 are not judged.
version(v) := {"kargo_version": v}

test_each_version_its_schemas if {
	bad := steps_estate([{"uses": "git-push", "as": "push", "config": {}}])
	count(sc.invalid) == 1 with input as bad
	count(sc.invalid) == 1 with input as bad with data.lib.flipflop.config.settings as version("v1.11.0")
	count(sc.invalid) == 1 with input as bad with data.lib.flipflop.config.settings as version("v1.10.9")
	count(sc.invalid) == 1 with input as bad with data.lib.flipflop.config.settings as version("v0.9.0")
	count(sc.invalid) == 0 with input as bad with data.lib.flipflop.config.settings as version("v0.8.3")

	# git-push's force came in v1.9, maxAttempts in v1.1: unknown keys before
	forced := steps_estate([{"uses": "git-push", "as": "push", "config": {"path": ".", "force": true, "maxAttempts": 3}}])
	rows == [] with input as forced
	rows == [] with input as forced with data.lib.flipflop.config.settings as version("v1.9.0")
	rows == [["push", "force", "unknown"]] with input as forced with data.lib.flipflop.config.settings as version("v1.8.5")
	rows == [["push", "force", "unknown"], ["push", "maxAttempts", "unknown"]] with input as forced with data.lib.flipflop.config.settings as version("v1.0.4")

	# git-commit's messageFromSteps was there until v1.4
	commit := steps_estate([{"uses": "git-commit", "as": "commit", "config": {"path": ".", "messageFromSteps": ["x"]}}])
	rows == [] with input as commit with data.lib.flipflop.config.settings as version("v1.4.2")
	rows == [["commit", "messageFromSteps", "unknown"], ["commit", "message", "missing"]] with input as commit with data.lib.flipflop.config.settings as version("v1.5.0")
}

# argocd-update's own top-level fromOrigin (v0.9 to v1.2) is a key the
# schema rejects from v1.3; an apps[] entry's selector and fromOrigin are
# unsupported-field's (one field, one finding).
test_argocd_update_by_version if {
	origin := {"kind": "Warehouse", "name": "w"}
	step := {"uses": "argocd-update", "as": "up", "config": {"fromOrigin": origin, "apps": [{"name": "a", "fromOrigin": origin}]}}
	rows == [] with input as steps_estate([step]) with data.lib.flipflop.config.settings as version("v1.2.3")
	rows == [["up", "fromOrigin", "unknown"]] with input as steps_estate([step]) with data.lib.flipflop.config.settings as version("v1.3.0")
	rows == [["up", "fromOrigin", "unknown"]] with input as steps_estate([step])
	selector := {"uses": "argocd-update", "as": "up", "config": {"apps": [{"selector": {"matchLabels": {"a": "b"}}}]}}
	rows == [] with input as steps_estate([selector])

	# (before v1.9 an entry also needs its name: a second problem, Kargo's)
	rows == [["up", "apps[0].name", "missing"]] with input as steps_estate([selector]) with data.lib.flipflop.config.settings as version("v1.8.0")
}

# A Stage that runs a task with an invalid step fails too, and pins nothing.
test_task_steps if {
	task := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "PromotionTask",
		"metadata": {"name": "promote", "namespace": "acme"},
		"spec": {"steps": [{"uses": "git-push", "as": "push", "config": {"targetBranch": "main"}}]},
	}
	e := f.estate([task, f.app("dev", "main"), f.stage_steps("dev", [{"task": {"name": "promote"}}, {"uses": "argocd-update", "config": {"apps": [f.pin("dev")]}}])])
	[[w.task, w.path] | some w in sc.invalid] == [["acme/promote", "/spec/steps/0"]] with input as e
	sc.failing_stages == {"acme/dev"} with input as e
	model.failing == {"acme/dev": ["invalid-step-config"]} with input as e
	model.pins == [] with input as e
}

test_failing_stage_pins_nothing if {
	e := f.estate([f.app("dev", "main"), f.stage_steps("dev", [
		clone, {"uses": "git-push", "as": "push", "config": {}},
		{"uses": "argocd-update", "config": {"apps": [f.pin("dev")]}},
	])])
	model.failing == {"acme/dev": ["invalid-step-config"]} with input as e
	model.pins == [] with input as e
}

# The vars of a Stage and of a task are evaluated too: one that cannot be
# parsed fails the Stage's promotions, and a task's fails the Stages that run
# the task without setting the var themselves.
test_vars_of_stages_and_tasks if {
	broken := {"name": "branch", "value": "env/${{ ctx.stage"}
	stage := object.union(f.stage_steps("dev", [push]), {"spec": {"vars": [{"name": "ok", "value": "${{ ctx.stage }}"}, broken]}})
	[[w.kind, w.alias, w.path, w.stage] | some w in sc.invalid] == [["var", "branch", "/spec/vars/1", "acme/dev"]] with input as f.estate([stage])
	sc.failing_stages == {"acme/dev"} with input as f.estate([stage])
	template := f.stage_steps("dev", [push])
	in_template := object.union(template, {"spec": {"promotionTemplate": {"spec": {"vars": [broken]}}}})
	[w.path | some w in sc.invalid] == ["/spec/promotionTemplate/spec/vars/0"] with input as f.estate([in_template])

	# before v1.1 there are no expressions
	sc.invalid == [] with input as f.estate([stage]) with data.lib.flipflop.config.settings as version("v1.0.4")

	task := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "PromotionTask",
		"metadata": {"name": "render", "namespace": "acme"},
		"spec": {"vars": [broken], "steps": [push]},
	}
	runs := f.stage_steps("dev", [{"task": {"name": "render"}}])
	sets := object.union(f.stage_steps("qa", [{"task": {"name": "render"}}]), {"spec": {"vars": [{"name": "branch", "value": "env/qa"}]}})
	e := f.estate([task, runs, sets])
	[[w.kind, w.task, w.path] | some w in sc.invalid] == [["var", "acme/render", "/spec/vars/0"]] with input as e
	sc.failing_stages == {"acme/dev"} with input as e
}
