package lib.flipflop.stages_if_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model

# A Stage that pushes main and pins its push on Application dev, with the
# argocd-update step's if: condition cond ("" for none) and Stage vars.
conditional(name, cond, vars) := object.union(
	f.stage_steps(name, [
		{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./repo"}]}},
		{"uses": "git-push", "as": "push", "config": {"path": "./repo"}},
		object.union({"uses": "argocd-update", "config": {"apps": [f.pin(name)]}}, with_if(cond)),
	]),
	{"spec": {"vars": vars}},
)

with_if("") := {}

with_if(cond) := {"if": cond} if cond != ""

estate(cond, vars) := f.estate([f.app("dev", "main"), conditional("dev", cond, vars)])

pinned := [p.stage.key | some p in model.pins]

test_conditions_that_run if {
	pinned == ["acme/dev"] with input as estate("", [])
	pinned == ["acme/dev"] with input as estate("${{ success() }}", [])
	pinned == ["acme/dev"] with input as estate("${{ always() }}", [])
	pinned == ["acme/dev"] with input as estate(" ${{true}} ", [])
	pinned == ["acme/dev"] with input as estate("${{ vars.deploy }}", [{"name": "deploy", "value": "true"}])
	model.unknown_steps == set() with input as estate("${{ always() }}", [])
}

# A step that runs only after a failure, or whose condition is false, pins
# nothing in a promotion that succeeds.
test_conditions_that_do_not_run if {
	pinned == [] with input as estate("${{ failure() }}", [])
	pinned == [] with input as estate("${{ false }}", [])
	pinned == [] with input as estate("${{ vars.deploy }}", [{"name": "deploy", "value": "false"}])
	model.unknown_steps == set() with input as estate("${{ failure() }}", [])
}

# A condition the files leave unknown: the step runs on some promotions, and
# is read as running.
test_unknown_condition if {
	pinned == ["acme/dev"] with input as estate("${{ ctx.targetFreight.origin.name == 'main' }}", [])
	model.unknown_steps == set() with input as estate("${{ outputs.push.commit != '' }}", [])
}

# Kargo drops a task step's own if: when it inflates the task: the task's
# steps run as their own conditions say.
test_task_step_condition_is_dropped if {
	task := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "PromotionTask",
		"metadata": {"name": "update", "namespace": "acme"},
		"spec": {"steps": [{"uses": "argocd-update", "config": {"apps": [f.pin("dev")]}}]},
	}
	stage := f.stage_steps("dev", [
		{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./repo"}]}},
		{"uses": "git-push", "as": "push", "config": {"path": "./repo"}},
		{"task": {"name": "update"}, "if": "${{ false }}"},
	])
	count(model.pins) == 1 with input as f.estate([task, f.app("dev", "main"), stage])
}

# A comparison of a var or ctx with a literal is resolved when they are known.
test_comparisons if {
	pinned == ["acme/dev"] with input as estate("${{ vars.env == 'dev' }}", [{"name": "env", "value": "dev"}])
	pinned == [] with input as estate("${{ vars.env == 'prod' }}", [{"name": "env", "value": "dev"}])
	pinned == ["acme/dev"] with input as estate(`${{ vars.env != "prod" }}`, [{"name": "env", "value": "dev"}])
	pinned == ["acme/dev"] with input as estate("${{ ctx.stage == 'dev' }}", [])
	pinned == [] with input as estate("${{ ctx.stage != 'dev' }}", [])
	pinned == ["acme/dev"] with input as estate("${{ vars.missing == 'x' }}", [])
}
