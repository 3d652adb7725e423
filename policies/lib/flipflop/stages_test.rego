package lib.flipflop.stages_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.stages

task_steps := [
	f.clone(f.repo, [f.checkout("./repo", "${{ vars.branch }}")]),
	{"uses": "git-commit", "config": {"path": "./repo", "message": "m"}},
	{"uses": "git-push", "config": {"path": "./repo", "targetBranch": "${{ vars.branch }}"}},
]

task_vars := [f.var("branch", "from-task"), f.var("required", null)]

# task_stage runs task ref (as alias) after one plain step.
task_stage(ref, step_vars) := f.template_stage("dev", [], [], [
	{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"path": "./other"}]}},
	{"task": ref, "as": "promo", "vars": step_vars},
])

# only is the only Stage record of the input.
only := r if {
	count(stages.records) == 1
	r := stages.records[0]
}

aliases := aliases_of(only)

aliases_of(r) := [s.alias | some s in r.steps]

test_promotion_task_in_stage_namespace_inflates if {
	r := only with input as f.estate([task_stage({"name": "promote"}, []), f.promotion_task("acme", "promote", task_vars, task_steps)])
	aliases_of(r) == ["step-0", "promo::clone", "promo::step-2"]
	[s.uses | some s in r.steps] == ["git-clone", "git-clone", "git-push"]
	[s.task | some s in r.steps] == ["", "promo", "promo"]
	[s.task_resolved | some s in r.steps] == [true, true, true]
	r.steps[2].config == {"path": "./repo", "targetBranch": "${{ vars.branch }}"}
	stages.value(r.steps[2], r.steps[2].config.targetBranch) == "from-task"
}

test_explicit_promotion_task_kind_inflates if {
	r := only with input as f.estate([task_stage({"name": "promote", "kind": "PromotionTask"}, []), f.promotion_task("acme", "promote", task_vars, task_steps)])
	aliases_of(r) == ["step-0", "promo::clone", "promo::step-2"]
}

test_promotion_task_in_other_namespace_is_unresolved if {
	r := only with input as f.estate([task_stage({"name": "promote"}, []), f.promotion_task("other", "promote", task_vars, task_steps)])
	object.filter(r.steps[1], ["alias", "uses", "config", "env", "task", "task_resolved", "task_ref"]) == {
		"alias": "promo", "uses": "", "config": {},
		"env": {"ctx": {"project": "acme", "stage": "dev"}, "vars": {}},
		"task": "promo", "task_resolved": false,
		"task_ref": {"kind": "PromotionTask", "name": "promote", "namespace": "acme"},
	}
	count(r.steps) == 2
}

test_cluster_promotion_task_inflates if {
	r := only with input as f.estate([task_stage({"name": "promote", "kind": "ClusterPromotionTask"}, []), f.promotion_task("", "promote", task_vars, task_steps)])
	aliases_of(r) == ["step-0", "promo::clone", "promo::step-2"]
	stages.value(r.steps[2], r.steps[2].config.targetBranch) == "from-task"
}

test_cluster_promotion_task_is_not_a_promotion_task if {
	# A ClusterPromotionTask does not answer a reference of the default kind,
	# nor a PromotionTask a ClusterPromotionTask reference.
	r1 := only with input as f.estate([task_stage({"name": "promote"}, []), f.promotion_task("", "promote", task_vars, task_steps)])
	aliases_of(r1) == ["step-0", "promo"]
	r1.steps[1].task_resolved == false
	r2 := only with input as f.estate([task_stage({"name": "promote", "kind": "ClusterPromotionTask"}, []), f.promotion_task("acme", "promote", task_vars, task_steps)])
	aliases_of(r2) == ["step-0", "promo"]
	r2.steps[1].task_resolved == false
}

test_missing_task_is_a_placeholder if {
	r := only with input as f.estate([task_stage({"name": "absent"}, [])])
	[[s.alias, s.uses, s.task, s.task_resolved] | some s in r.steps] == [["step-0", "git-clone", "", true], ["promo", "", "promo", false]]
}

test_default_aliases if {
	stage := f.template_stage("dev", [], [], [
		{"uses": "git-commit", "config": {}},
		{"task": {"name": "promote"}},
		{"uses": "git-push", "config": {"path": "./repo"}},
		{"task": {"name": "absent"}},
	])
	r := only with input as f.estate([stage, f.promotion_task("acme", "promote", [], task_steps)])
	aliases_of(r) == ["task-1::clone", "task-1::step-2", "step-2", "task-3"]
	[s.task | some s in r.steps] == ["task-1", "task-1", "", "task-3"]
}

test_explicit_aliases_are_kept if {
	steps := [object.union(task_steps[0], {"as": "c"}), object.union(task_steps[2], {"as": "p"})]
	stage := f.template_stage("dev", [], [], [{"task": {"name": "promote"}, "as": "t"}, object.union(task_steps[2], {"as": "mine"})])
	aliases == ["t::c", "t::p", "mine"] with input as f.estate([stage, f.promotion_task("acme", "promote", [], steps)])
}

test_unread_steps_are_dropped if {
	stage := f.template_stage("dev", [], [], [
		{"uses": "git-commit", "config": {}},
		{"uses": "kustomize-set-image", "config": {}},
		{"uses": "argocd-update", "config": {"apps": []}},
	])
	r := only with input as f.estate([stage])
	[[s.alias, s.uses] | some s in r.steps] == [["step-2", "argocd-update"]]
}

# The four layers, lowest first: task default, Stage spec.vars,
# promotionTemplate.spec.vars, the task step's vars.
# layered is the input where the task step of a Stage with the given Stage vars,
# template vars and task step vars pushes to the branch var.
layered(stage_vars, template_vars, step_vars) := f.estate([
	f.template_stage("dev", stage_vars, template_vars, [{"task": {"name": "promote"}, "as": "promo", "vars": step_vars}]),
	f.promotion_task("acme", "promote", task_vars, task_steps),
])

# pushed_branch is the branch the task's push step names.
pushed_branch := stages.value(s, s.config.targetBranch) if {
	some s in only.steps
	s.uses == "git-push"
}

test_var_order_task_default if {
	pushed_branch == "from-task" with input as layered([], [], [])
}

test_var_order_stage_var_overrides_task_default if {
	pushed_branch == "from-stage" with input as layered([f.var("branch", "from-stage")], [], [])
}

test_var_order_template_var_overrides_task_default if {
	pushed_branch == "from-template" with input as layered([], [f.var("branch", "from-template")], [])
}

# Kargo appends promotionTemplate.spec.vars after the Stage's spec.vars (the later
# one wins). The model instead fails with "object keys must be unique" when both
# define the same name.
test_var_order_template_var_overrides_stage_var if {
	# regal ignore:with-outside-test-context
	pushed_branch == "from-template" with input as layered([f.var("branch", "from-stage")], [f.var("branch", "from-template")], [])
}

test_var_order_step_var_overrides_stage_and_template_vars if {
	pushed_branch == "from-step" with input as layered([f.var("branch", "from-stage")], [], [f.var("branch", "from-step")])
	pushed_branch == "from-step" with input as layered([], [f.var("branch", "from-template")], [f.var("branch", "from-step")])
	pushed_branch == "from-step" with input as layered([], [], [f.var("branch", "from-step")])
}

test_unrelated_vars_do_not_override if {
	pushed_branch == "from-task" with input as layered([f.var("other", "x")], [f.var("other2", "y")], [f.var("other3", "z")])
}

test_task_step_own_vars_override_task_step_vars if {
	steps := [object.union(task_steps[2], {"vars": [f.var("branch", "inner")]})]
	stage := f.template_stage("dev", [], [], [{"task": {"name": "promote"}, "vars": [f.var("branch", "from-step")]}])
	s := only.steps[0] with input as f.estate([stage, f.promotion_task("acme", "promote", task_vars, steps)])
	stages.value(s, s.config.targetBranch) == "inner"
}

test_task_defaults_see_ctx if {
	vars := [f.var("branch", "stage/${{ ctx.stage }}")]
	stage := f.template_stage("dev", [], [], [{"task": {"name": "promote"}}])
	s := only.steps[1] with input as f.estate([stage, f.promotion_task("acme", "promote", vars, task_steps)])
	stages.value(s, s.config.targetBranch) == "stage/dev"
}

test_task_defaults_see_stage_vars_through_step_vars if {
	vars := [f.var("branch", "env/${{ vars.env }}")]
	stage := f.template_stage("dev", [f.var("env", "development")], [], [{"task": {"name": "promote"}, "vars": [f.var("x", "y")]}])
	s := only.steps[1] with input as f.estate([stage, f.promotion_task("acme", "promote", vars, task_steps)])
	stages.value(s, s.config.targetBranch) == "env/development"
}

# Kargo prepends the task's default vars to each inflated step's vars, so a
# default may read a Stage var even when the task step sets no vars.
test_task_defaults_see_stage_vars if {
	vars := [f.var("branch", "env/${{ vars.env }}")]
	stage := f.template_stage("dev", [f.var("env", "development")], [], [{"task": {"name": "promote"}}])

	# regal ignore:with-outside-test-context
	s := only.steps[1] with input as f.estate([stage, f.promotion_task("acme", "promote", vars, task_steps)])
	stages.value(s, s.config.targetBranch) == "env/development"
}

test_record_fields if {
	stage := f.template_stage("dev", [f.var("a", "1"), f.var("b", "${{ vars.a }}-${{ ctx.project }}")], [f.var("c", "${{ vars.b }}/${{ ctx.stage }}")], [])
	r := only with input as f.estate([stage])
	r.key == "acme/dev"
	r.project == "acme"
	r.name == "dev"
	r.ctx == {"project": "acme", "stage": "dev"}
	r.vars == {"a": "1", "b": "1-acme", "c": "1-acme/dev"}
	r.steps == []
	r.legacy == {}
}

test_plain_step_env if {
	stage := f.template_stage("dev", [f.var("repo", f.repo)], [], [{
		"uses": "git-clone", "as": "c", "vars": [f.var("branch", "env/${{ ctx.stage }}")],
		"config": {"repoURL": "${{ vars['repo'] }}", "checkout": [{"path": "./out", "branch": "${{ vars.branch }}"}]},
	}])
	s := only.steps[0] with input as f.estate([stage])
	s.env.ctx == {"project": "acme", "stage": "dev"}

	# The step's own vars, over the Stage's (looked up, not copied: expr.var).
	s.env.vars == {"branch": "env/dev"}
	s.env.under == [{"repo": f.repo}]
	stages.value(s, s.config.repoURL) == f.repo
	stages.value(s, s.config.checkout[0].branch) == "env/dev"
	stages.value(s, "${{ outputs.x.commit }}") == "${{ outputs.x.commit }}"
}

# A Stage var defined twice (or a Stage var a template var redefines): Kargo
# keeps the later value; the model must not fail.
test_stage_vars_redefined_keep_the_later_value if {
	stage := f.template_stage("dev", [f.var("a", "1"), f.var("a", "2")], [], [])

	# regal ignore:with-outside-test-context
	only.vars == {"a": "2"} with input as f.estate([stage])
}

# ---------------------------------------------------------------------------
# Writers (model.writers): where a Stage's pushes land (kargo.md §3)

writer_rows := [[w.stage.key, w.step.alias, w.pointer.key] | some w in model.writers]

# writing is Stage dev running steps, next to an Application on main (so HEAD
# resolves to main).
writing(steps) := f.estate([
	f.template_stage("dev", [], [], steps),
	f.application("argocd", "b", {}, f.tracking(f.repo, "main")),
])

checkout_dev := f.clone(f.repo, [f.checkout("./repo", "env/dev")])

nested := f.clone(f.repo, [f.checkout("./src", "main"), f.checkout("./out", "stage/dev"), f.checkout("./out/sub", "stage/sub")])

pr := {"uses": "git-open-pr", "as": "pr", "config": {"repoURL": f.repo, "sourceBranch": "${{ outputs.push.branch }}", "targetBranch": "main"}}

test_push_target_branch_wins if {
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@env/x"]] with input as writing([checkout_dev, f.push("push", "./repo", {"targetBranch": "env/x"})])
}

test_push_lands_on_checked_out_branch if {
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@env/dev"]] with input as writing([checkout_dev, f.push("push", "./repo", {})])
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@env/dev"]] with input as writing([checkout_dev, f.push("push", "./repo", {"targetBranch": ""})])
}

test_push_uses_the_longest_work_tree if {
	writer_rows == [["acme/dev", "p", "github.com/acme/deploy@stage/sub"]] with input as writing([nested, f.push("p", "./out/sub", {})])
	writer_rows == [["acme/dev", "p", "github.com/acme/deploy@stage/sub"]] with input as writing([nested, f.push("p", "./out/sub/deeper", {})])
	writer_rows == [["acme/dev", "p", "github.com/acme/deploy@stage/dev"]] with input as writing([nested, f.push("p", "./out", {})])
	writer_rows == [["acme/dev", "p", "github.com/acme/deploy@stage/dev"]] with input as writing([nested, f.push("p", "out/", {})])
	writer_rows == [["acme/dev", "p", "github.com/acme/deploy@stage/dev"]] with input as writing([nested, f.push("p", "./out/subway", {})])
}

test_push_outside_every_work_tree_writes_nothing if {
	writer_rows == [] with input as writing([nested, f.push("p", "./elsewhere", {})])
	writer_rows == [] with input as writing([nested, f.push("p", "./output", {})])
	writer_rows == [] with input as writing([f.push("p", "./out", {"targetBranch": "main"})])
}

test_push_in_root_work_tree if {
	writer_rows == [["acme/dev", "p", "github.com/acme/deploy@env/dev"]] with input as writing([f.clone(f.repo, [f.checkout(".", "env/dev")]), f.push("p", "./a/b", {})])
}

test_checkout_without_branch_is_the_default_branch if {
	steps := [f.clone(f.repo, [f.checkout("./repo", "")]), f.push("p", "./repo", {})]
	writer_rows == [["acme/dev", "p", "github.com/acme/deploy@main"]] with input as writing(steps)
	writer_rows == [["acme/dev", "p", "github.com/acme/deploy@trunk"]] with input as writing(steps) with data.lib.flipflop.config.settings as {"default_branch": "trunk"}
	w := model.writers[0] with input as f.estate([f.template_stage("dev", [], [], steps)])
	[w.pointer.key, w.pointer.head, w.pointer.assumed] == ["github.com/acme/deploy@HEAD", true, false]
}

test_checkout_of_a_commit_is_unknown if {
	steps := [f.clone(f.repo, [{"path": "./repo", "commit": f.sha}]), f.push("p", "./repo", {})]
	writer_rows == [["acme/dev", "p", ""]] with input as writing(steps)
	model.unknown_writes == {"acme/dev"} with input as writing(steps)
}

test_generated_branch_follows_the_pull_request if {
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@main"]] with input as writing([checkout_dev, f.push("push", "./repo", {"generateTargetBranch": true}), pr])
}

test_generated_branch_without_pull_request_writes_nothing_shared if {
	steps := [checkout_dev, f.push("push", "./repo", {"generateTargetBranch": true})]
	writer_rows == [] with input as writing(steps)
	model.unknown_writes == set() with input as writing(steps)
}

test_generate_false_uses_the_checkout if {
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@env/dev"]] with input as writing([checkout_dev, f.push("push", "./repo", {"generateTargetBranch": false}), pr])
}

# use_pr: a push step of kind whose generateTargetBranch is ${{ vars.usePR }}.
use_pr(value, kind) := f.estate([
	f.template_stage("dev", [f.var("usePR", value)], [], [checkout_dev, {"uses": kind, "as": "push", "config": {"path": "./repo", "generateTargetBranch": "${{ vars.usePR }}"}}, pr]),
	f.application("argocd", "b", {}, f.tracking(f.repo, "main")),
])

test_generate_expression_true_follows_the_pull_request if {
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@main"]] with input as use_pr("true", "git-push")
}

test_generate_expression_false_uses_the_checkout if {
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@env/dev"]] with input as use_pr("false", "git-push")
}

test_generate_expression_unknown_is_unknown if {
	steps := [checkout_dev, f.push("push", "./repo", {"generateTargetBranch": "${{ vars.usePR }}"}), pr]
	writer_rows == [["acme/dev", "push", ""]] with input as writing(steps)
	w := model.writers[0] with input as writing(steps)
	[w.rev, w.pointer.known] == [{"kind": "unknown", "name": "generated"}, false]
	model.unknown_writes == {"acme/dev"} with input as writing(steps)
}

test_github_push_is_a_writer if {
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@main"]] with input as use_pr("true", "github-push")
	writer_rows == [["acme/dev", "push", "github.com/acme/deploy@env/dev"]] with input as use_pr("false", "github-push")
	gh := {"uses": "github-push", "as": "gh", "config": {"path": "./repo", "targetBranch": "env/x"}}
	writer_rows == [["acme/dev", "gh", "github.com/acme/deploy@env/x"]] with input as writing([checkout_dev, gh])
}

test_other_steps_are_no_writers if {
	writer_rows == [] with input as writing([checkout_dev, {"uses": "git-commit", "config": {"path": "./repo"}}, pr])
}

test_writer_with_vars if {
	estate := f.estate([f.template_stage("dev", [f.var("repo", "git@github.com:acme/deploy.git")], [f.var("branch", "stage/${{ ctx.stage }}")], [
		f.clone("${{ vars.repo }}", [f.checkout("./${{ ctx.stage }}", "${{ vars.branch }}")]),
		f.push("push", "./dev", {}),
	])])
	rows := [[w.repo_url, w.pointer.key] | some w in model.writers] with input as estate
	rows == [["git@github.com:acme/deploy.git", "github.com/acme/deploy@stage/dev"]]
}

test_writer_with_unknown_branch if {
	steps := [checkout_dev, f.push("push", "./repo", {"targetBranch": "${{ outputs.x.branch }}"})]
	writer_rows == [["acme/dev", "push", ""]] with input as writing(steps)
	model.unknown_writes == {"acme/dev"} with input as writing(steps)
}

test_writer_inside_a_task if {
	task := f.promotion_task("acme", "promote", [f.var("branch", "stage/${{ ctx.stage }}")], [
		f.clone(f.repo, [f.checkout("./repo", "${{ vars.branch }}")]),
		f.push("push", "./repo", {}),
	])
	writer_rows == [["acme/dev", "t::push", "github.com/acme/deploy@stage/dev"]] with input as f.estate([f.template_stage("dev", [], [], [{"task": {"name": "promote"}, "as": "t"}]), task])
}

legacy(name, branch) := f.full_stage(name, {"promotionMechanisms": {
	"gitRepoUpdates": [{"repoURL": f.repo, "writeBranch": branch, "kustomize": {"images": [{"image": "nginx", "path": "stages/test"}]}}],
	"argoCDAppUpdates": [{"appName": "app-test"}],
}})

test_legacy_write_branch if {
	writer_rows == [["acme/dev", "promotionMechanisms.gitRepoUpdates", "github.com/acme/deploy@main"]] with input as f.estate([legacy("dev", "main")])
	writer_rows == [["acme/dev", "promotionMechanisms.gitRepoUpdates", "github.com/acme/deploy@env/dev"]] with input as f.estate([legacy("dev", "env/dev")])
}

test_legacy_without_git_updates_writes_nothing if {
	writer_rows == [] with input as f.estate([f.full_stage("dev", {"promotionMechanisms": {"argoCDAppUpdates": [{"appName": "app-test"}]}})])
}

# stage_on: Stage name clones f.repo at branch and pushes it.
stage_on(name, branch) := f.template_stage(name, [], [], [f.clone(f.repo, [f.checkout("./repo", branch)]), f.push("push", "./repo", {})])

test_writer_groupings if {
	estate := f.estate([stage_on("dev", "main"), stage_on("qa", "main"), stage_on("prod", "env/prod")])
	by_pointer := {k: [w.stage.key | some w in g] | some k, g in model.writers_by_pointer} with input as estate
	by_pointer == {
		"github.com/acme/deploy@main": ["acme/dev", "acme/qa"],
		"github.com/acme/deploy@env/prod": ["acme/prod"],
	}
	by_stage := {k: count(g) | some k, g in model.writers_by_stage} with input as estate
	by_stage == {"acme/dev": 1, "acme/qa": 1, "acme/prod": 1}
	model.unknown_writes == set() with input as estate
}

two_pull_requests := f.stage_steps("dev", [
	{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./a"}, {"branch": "release", "path": "./b"}]}},
	{"uses": "git-push", "as": "push-a", "config": {"path": "./a", "generateTargetBranch": true}},
	{"uses": "git-push", "as": "push-b", "config": {"path": "./b", "generateTargetBranch": true}},
	{"uses": "git-open-pr", "config": {"repoURL": f.repo, "sourceBranch": "${{ outputs['push-a'].branch }}", "targetBranch": "main"}},
	{"uses": "git-open-pr", "config": {"repoURL": f.repo, "sourceBranch": "${{ outputs.push-b.branch }}", "targetBranch": "release"}},
])

test_generated_branch_follows_its_own_pull_request if {
	rows := {[w.step.alias, w.pointer.key] | some w in model.writers} with input as f.estate([two_pull_requests])
	rows == {["push-a", "github.com/acme/deploy@main"], ["push-b", "github.com/acme/deploy@release"]}
}

test_regex_quote if {
	model.regex_quote("a.b-c[d]") == `a\.b\-c\[d\]`
}

# The pull requests a push's branch is looked up in (model.pr_index) are those
# testing every git-open-pr of the Stage would find, whatever the spelling:
# outputs.<alias>, outputs['<alias>'] and outputs["<alias>"] with spaces,
# task.outputs, aliases with "-", "." or a space, several reads in one string,
# one read twice, and a read of another step's output first.
test_pull_request_index_agrees_with_testing_each if {
	aliases := ["a", "push-b", "c.d", "e f", "g", "h"]
	sources := [
		"${{ outputs.a.branch }}",
		"${{ outputs['push-b'].branch }}",
		"${{ outputs[ \"c.d\" ].branch }}",
		"${{ outputs.c.d.branch }}",
		"pre-${{ outputs['e f'].branch }}",
		"${{ task.outputs.g.branch }}",
		"${{ outputs.a.branch }}-${{ outputs.push-b.branch }}",
		"${{ outputs.h.branch }}${{ outputs.h.branch }}",
		"${{ outputs.commit.commit }} ${{ outputs.h.branch }}",
		"${{ vars.branch }}",
	]
	steps := array.concat(
		array.concat(
			[{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./repo"}]}}],
			[{"uses": "git-push", "as": a, "config": {"path": "./repo", "generateTargetBranch": true}} | some a in aliases],
		),
		[{"uses": "git-open-pr", "config": {"repoURL": f.repo, "sourceBranch": src, "targetBranch": sprintf("env/%d", [i])}} | some i, src in sources],
	)
	estate := f.estate([f.stage_steps("dev", steps)])
	s := stages.records[0] with input as estate
	pushes := [p | some p in s.steps; p.uses == "git-push"]
	looked_up := {[p.alias, pr.id] | some p in pushes; some pr in model.linked_prs(0, p)} with input as estate
	tested := {[p.alias, pr.id] |
		some p in pushes
		some pr in model.open_prs(s)
		model.reads_branch_of(pr.config.sourceBranch, model.short_alias(p.alias))
	}
	looked_up == tested
	count(tested) == 10
}
