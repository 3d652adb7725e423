# METADATA
# title: Stages
# description: |
#   Kargo Stages with their promotion steps inflated: `task:` steps expand into the
#   PromotionTask (Stage namespace) or ClusterPromotionTask steps with aliases
#   `<task>::<step>`, and each step gets the vars Kargo would give it, in Kargo's
#   order: task var defaults, Stage `spec.vars`, `promotionTemplate.spec.vars`, the
#   task step's `vars`. `ctx.stage` and `ctx.project` are known statically.
package lib.flipflop.stages

import data.lib.flipflop.expr
import data.lib.flipflop.objects

# records lists every Stage record.
records := [record(o) | some o in objects.stages]

record(o) := {
	"key": sprintf("%s/%s", [project, name]),
	"project": project,
	"name": name,
	"ref": o.ref,
	"ctx": ctx,
	"vars": base_vars,
	"steps": steps(o.obj, ctx, base_vars),
	"legacy": objects.object_at(o.obj, ["spec", "promotionMechanisms"]),
} if {
	project := objects.string_at(o.obj, ["metadata", "namespace"])
	name := objects.string_at(o.obj, ["metadata", "name"])
	ctx := {"project": project, "stage": name}
	stage_vars := objects.array_at(o.obj, ["spec", "vars"])
	template_vars := objects.array_at(o.obj, ["spec", "promotionTemplate", "spec", "vars"])
	base_vars := expr.resolve_vars(array.concat(stage_vars, template_vars), {}, ctx)
}

# tasks groups PromotionTasks by "namespace/name" and ClusterPromotionTasks by
# "/name" (lists, in case an estate holds one twice).
tasks := {k: group |
	some k in {t.key | some t in task_objects}
	group := [t | some t in task_objects; t.key == k]
}

task_objects := array.concat(
	[{"key": sprintf("%s/%s", [o.ref.namespace, o.ref.name]), "obj": o.obj} | some o in objects.promotion_tasks],
	[{"key": sprintf("/%s", [o.ref.name]), "obj": o.obj} | some o in objects.cluster_promotion_tasks],
)

steps(obj, ctx, base_vars) := [s |
	some i, step in objects.array_at(obj, ["spec", "promotionTemplate", "spec", "steps"])
	is_object(step)
	some s in inflate(step, i, ctx, base_vars)
]

# The steps the model reads; the others (commits, image updates, renders) are
# skipped before any work is done on them.
read_steps := {"git-clone", "git-push", "github-push", "git-open-pr", "argocd-update"}

inflate(step, i, ctx, base_vars) := [{
	"alias": object.get(step, "as", sprintf("step-%d", [i])),
	"uses": step.uses,
	"config": objects.object_at(step, ["config"]),
	"env": {"ctx": ctx, "vars": step_vars(step, base_vars, ctx)},
	"task": "",
	"task_resolved": true,
}] if {
	read_steps[step.uses]
} else := [] if {
	not is_task(step)
}

inflate(step, i, ctx, base_vars) := [s |
	task_alias := object.get(step, "as", sprintf("task-%d", [i]))
	some t in task_for(step.task, ctx)
	task_defaults := expr.resolve_vars(objects.array_at(t.obj, ["spec", "vars"]), {}, ctx)
	env_vars := expr.resolve_vars(objects.array_at(step, ["vars"]), object.union(task_defaults, base_vars), ctx)
	some j, ts in objects.array_at(t.obj, ["spec", "steps"])
	read_steps[ts.uses]
	s := {
		"alias": sprintf("%s::%s", [task_alias, object.get(ts, "as", sprintf("step-%d", [j]))]),
		"uses": ts.uses,
		"config": objects.object_at(ts, ["config"]),
		"env": {"ctx": ctx, "vars": step_vars(ts, env_vars, ctx)},
		"task": task_alias,
		"task_resolved": true,
	}
] if {
	is_task(step)
	count(task_for(step.task, ctx)) > 0
}

# A task step whose task is not among the inputs inflates to one placeholder step,
# so rules can say the Stage's promotion is only partly known.
inflate(step, i, ctx, _) := [{
	"alias": object.get(step, "as", sprintf("task-%d", [i])),
	"uses": "",
	"config": {},
	"env": {"ctx": ctx, "vars": {}},
	"task": object.get(step, "as", sprintf("task-%d", [i])),
	"task_resolved": false,
	"task_ref": {"kind": task_kind(step.task), "name": object.get(step.task, "name", ""), "namespace": task_namespace(step.task, ctx)},
}] if {
	is_object(step.task)
	count(task_for(step.task, ctx)) == 0
}

task_for(task, ctx) := object.get(tasks, sprintf("/%s", [object.get(task, "name", "")]), []) if {
	task.kind == "ClusterPromotionTask"
} else := object.get(tasks, sprintf("%s/%s", [ctx.project, object.get(task, "name", "")]), [])

is_task(step) if is_object(step.task)

task_kind(task) := "ClusterPromotionTask" if {
	task.kind == "ClusterPromotionTask"
} else := "PromotionTask"

task_namespace(task, ctx) := "" if {
	task.kind == "ClusterPromotionTask"
} else := ctx.project

step_vars(step, base_vars, ctx) := expr.resolve_vars(step.vars, base_vars, ctx) if {
	is_array(step.vars)
	count(step.vars) > 0
} else := base_vars

# value substitutes a step's env into a config value.
value(step, v) := expr.subst(v, step.env)
