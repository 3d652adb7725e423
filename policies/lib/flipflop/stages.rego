# METADATA
# title: Stages
# description: |
#   Kargo Stages with their promotion steps inflated: `task:` steps expand into the
#   PromotionTask (Stage namespace) or ClusterPromotionTask steps with aliases
#   `<task>::<step>`, and each step gets the vars Kargo would give it, in Kargo's
#   order: task var defaults, Stage `spec.vars`, `promotionTemplate.spec.vars`, the
#   task step's `vars`. `ctx.stage` is known statically, and `ctx.project` when
#   the Stage's namespace is (lib.flipflop.placement): a Stage written without
#   one has an unknown project, and nothing that depends on it is judged.
package lib.flipflop.stages

import data.lib.flipflop.expr
import data.lib.flipflop.objects
import data.lib.flipflop.placement

# records lists every Stage record.
records := [record(o) | some o in objects.stages]

record(o) := {
	"key": sprintf("%s/%s", [project, name]),
	"project": project,
	"project_known": project != "",
	"placement": where,
	"name": name,
	"ref": object.union(o.ref, {"namespace": project}),
	"ctx": ctx,
	"vars": base_vars,
	"steps": steps(o, ctx, {"ctx": ctx, "vars": base_vars, "under": []}, read_steps),
	"legacy": objects.object_at(o.obj, ["spec", "promotionMechanisms"]),
	"upstream": upstream(o.obj, project),
} if {
	where := placement.of(o)
	project := where.namespace
	name := objects.string_at(o.obj, ["metadata", "name"])
	ctx := {"project": project, "stage": name}
	base_vars := vars_of(o.obj, ctx)
}

# assumed says, for a message, where a Stage's project came from when its
# file names no namespace ("" when it does).
assumed(s) := sprintf(" (the Stage's file names no namespace: its project %s is the namespace the run applies such manifests to, -n)", [s.project]) if {
	s.placement.from == "setting"
} else := sprintf(
	" (the Stage's file names no namespace: its project %s is the destination namespace of Application %s, which deploys the file's directory)",
	[s.project, concat(", ", s.placement.by)],
) if {
	s.placement.from == "application"
} else := ""

# unknown_note says, for a message, which Stages of records have an unknown
# project because the estate gives their directory several namespaces
# (lib.flipflop.placement), and who gave which ("" when none has).
unknown_note(records) := concat("", [unknown_sentence(keys, given) |
	some given in sort({s.placement.given | some s in records; s.placement.from == "conflict"})
	keys := sort({s.key | some s in records; s.placement.given == given})
])

unknown_sentence(keys, given) := sprintf(
	concat(" ", [
		" (Stage %s: its file names no namespace, and the estate gives its directory more than one: %s.",
		"Its project is unknown: nothing that depends on it is judged, and no annotation outside its file waives for it.)",
	]),
	[keys[0], given_text(given)],
) if {
	count(keys) == 1
} else := sprintf(
	concat(" ", [
		" (Stages %s: their files name no namespace, and the estate gives their directory more than one: %s.",
		"Their project is unknown: nothing that depends on it is judged, and no annotation outside their files waives for them.)",
	]),
	[concat(", ", keys), given_text(given)],
)

given_text(given) := concat(", ", [sprintf("%s (%s)", [namespace_text(g.namespace), g.by]) | some g in given])

namespace_text(ns) := ns if expr.known(ns)

else := "a namespace flipflop cannot know"

vars_of(obj, ctx) := expr.resolve_vars(
	array.concat(
		objects.array_at(obj, ["spec", "vars"]),
		objects.array_at(obj, ["spec", "promotionTemplate", "spec", "vars"]),
	),
	{}, ctx,
)

# upstream lists the Stages a Stage takes Freight from (requestedFreight[].sources.stages),
# as keys in the Stage's project.
upstream(obj, project) := sort({sprintf("%s/%s", [project, u]) |
	some r in objects.array_at(obj, ["spec", "requestedFreight"])
	some u in objects.array_at(r, ["sources", "stages"])
	is_string(u)
})

# tasks groups PromotionTasks by "namespace/name" and ClusterPromotionTasks by
# "/name" (lists, in case an estate holds one twice). A PromotionTask whose
# namespace nothing says is filed under "?/name", where a Stage whose project
# nothing says looks: both are left to apply time, and a repository that keeps
# them so applies them to one project (kargo apply --project).
tasks := {k: group |
	some k in {t.key | some t in task_objects}
	group := [t | some t in task_objects; t.key == k]
}

task_objects := array.concat(
	[{"key": sprintf("%s/%s", [namespace_key(ns), o.ref.name]), "obj": o.obj, "ref": object.union(o.ref, {"namespace": ns})} |
		some o in objects.promotion_tasks
		ns := placement.of(o).namespace
	],
	[{"key": sprintf("/%s", [o.ref.name]), "obj": o.obj, "ref": o.ref} | some o in objects.cluster_promotion_tasks],
)

# stage_steps is the path of a Stage's own promotion steps.
stage_steps := "/spec/promotionTemplate/spec/steps"

# task_steps is the path of a PromotionTask's (or ClusterPromotionTask's) steps.
task_steps := "/spec/steps"

# steps inflates a Stage's promotion steps whose `uses` is in kinds ("*": every
# step). Each step says where it is written (origin: the object holding it and
# the JSON pointer of the step there), the list of steps it belongs to (scope:
# the Stage's own, or a task's), and for a task step the task step of the Stage
# that brought it in (via).
steps(o, ctx, scope, kinds) := [s |
	some i, step in objects.array_at(o.obj, ["spec", "promotionTemplate", "spec", "steps"])
	is_object(step)
	some s in inflate(o, step, i, ctx, scope, kinds)
]

# The steps the model reads; the others (commits, image updates, renders) are
# skipped before any work is done on them.
read_steps := {"git-clone", "git-push", "github-push", "git-open-pr", "argocd-update"}

wanted("*", _)

wanted(kinds, uses) if kinds[uses]

# inflate turns one step of a Stage into the steps it runs: itself, when
# kinds wants it and it can run; nothing for any other step that is not a
# task step; a task step's task's steps (inflated_task); or, when no input
# defines the task, one placeholder. One chain, cheapest test first: most
# steps are steps the model does not read.
inflate(o, step, i, ctx, scope, kinds) := [own_step(o, step, i, ctx, scope)] if {
	wanted(kinds, step.uses)
	runs(step, ctx, scope) != "no"
} else := [] if {
	not is_task(step)
} else := inflated_task(step, i, ctx, scope, kinds) if {
	count(task_for(step.task, ctx)) > 0
} else := [placeholder(o, step, i, ctx)]

inflated_task(step, i, ctx, scope, kinds) := [s |
	task_alias := object.get(step, "as", sprintf("task-%d", [i]))
	some t in task_for(step.task, ctx)
	task_scope := {"ctx": ctx, "vars": task_vars(t, step, ctx, scope), "under": array.concat([scope.vars], scope.under)}
	some j, ts in objects.array_at(t.obj, ["spec", "steps"])
	wanted(kinds, ts.uses)
	runs(ts, ctx, task_scope) != "no"
	s := {
		"id": sprintf("%s/%s/%d/%d", [ctx.project, ctx.stage, i, j]),
		"alias": sprintf("%s::%s", [task_alias, object.get(ts, "as", sprintf("step-%d", [j]))]),
		"uses": ts.uses,
		"config": objects.object_at(ts, ["config"]),
		"env": step_env(ts, ctx, task_scope),
		"task": task_alias,
		"task_resolved": true,
		"index": j,
		"origin": {"ref": t.ref, "path": sprintf("%s/%d", [task_steps, j])},
		"scope": {"ref": t.ref, "path": task_steps, "task": task_alias},
		"via": sprintf("%s/%d", [stage_steps, i]),
	}
]

# placeholder is the one step a task step whose task is not among the inputs
# inflates to, so rules can say the Stage's promotion is only partly known.
placeholder(o, step, i, ctx) := {
	"id": sprintf("%s/%s/%d", [ctx.project, ctx.stage, i]),
	"alias": object.get(step, "as", sprintf("task-%d", [i])),
	"uses": "",
	"config": {},
	"env": {"ctx": ctx, "vars": {}},
	"task": object.get(step, "as", sprintf("task-%d", [i])),
	"task_resolved": false,
	"index": i,
	"origin": {"ref": o.ref, "path": sprintf("%s/%d", [stage_steps, i])},
	"scope": {"ref": o.ref, "path": stage_steps, "task": ""},
	"via": "",
	"task_ref": {"kind": task_kind(step.task), "name": object.get(step.task, "name", ""), "namespace": task_namespace(step.task, ctx)},
}

# task_vars are the vars a task step gives its task's steps, over scope (the
# Stage's vars): the task step's vars, then the task's defaults that scope does
# not define (the Stage's vars win over a task's defaults), resolved over scope.
task_vars(t, step, ctx, scope) := expr.resolve_over(objects.array_at(step, ["vars"]), defaults, array.concat([scope.vars], scope.under), ctx) if {
	task_defaults := expr.resolve_vars(objects.array_at(t.obj, ["spec", "vars"]), {}, ctx)
	defaults := {k: v |
		some k, v in task_defaults
		not defined(scope, k)
	}
}

defined(scope, name) if _ = scope.vars[name]

defined(scope, name) if {
	some layer in scope.under
	_ = layer[name]
}

own_step(o, step, i, ctx, scope) := {
	"id": sprintf("%s/%s/%d", [ctx.project, ctx.stage, i]),
	"alias": object.get(step, "as", sprintf("step-%d", [i])),
	"uses": step.uses,
	"config": objects.object_at(step, ["config"]),
	"env": step_env(step, ctx, scope),
	"task": "",
	"task_resolved": true,
	"index": i,
	"origin": {"ref": o.ref, "path": sprintf("%s/%d", [stage_steps, i])},
	"scope": {"ref": o.ref, "path": stage_steps, "task": ""},
	"via": "",
}

task_for(task, ctx) := object.get(tasks, sprintf("/%s", [object.get(task, "name", "")]), []) if {
	task.kind == "ClusterPromotionTask"
} else := object.get(tasks, sprintf("%s/%s", [namespace_key(ctx.project), object.get(task, "name", "")]), [])

# namespace_key is how a namespace is filed in tasks: "?" when it is unknown.
namespace_key("") := "?"

namespace_key(ns) := ns if ns != ""

is_task(step) if is_object(step.task)

task_kind(task) := "ClusterPromotionTask" if {
	task.kind == "ClusterPromotionTask"
} else := "PromotionTask"

task_namespace(task, ctx) := "" if {
	task.kind == "ClusterPromotionTask"
} else := ctx.project

# step_env is the env a step's expressions read (expr.subst): ctx, and its
# own vars resolved over scope (the env of a step without vars: {"ctx": ctx,
# "vars": ..., "under": [...]}, the vars of its
# Stage, and for a task's step the task step's over them), layered under them (expr.var) rather than merged with a
# copy of them: a Stage of n vars and n steps with vars would copy n² vars.
step_env(step, ctx, scope) := {"ctx": ctx, "vars": expr.resolve_over(step.vars, {}, under, ctx), "under": under} if {
	is_array(step.vars)
	count(step.vars) > 0
	under := array.concat([scope.vars], scope.under)
} else := scope

# runs says whether a step runs in a promotion that succeeds: "yes" without
# an if: condition (or with one that is success(), always() or true), "no"
# with failure() or false (such a step runs only when an earlier one failed,
# and such a promotion leaves the Stage Unknown), else what the condition
# resolves to with ctx and vars (a var or ctx compared with a literal
# included), and "unknown" when it does not resolve: such a step is read as
# running, as it does on some promotions (pkg/promotion/evaluator.go,
# ShouldSkip). A task step's own if: is dropped
# when Kargo inflates the task (pkg/api/promotion.go, inflateTaskSteps): only
# the task's steps' count.
runs(step, ctx, scope) := "yes" if {
	object.get(step, "if", "") == ""
} else := condition(c, step_env(step, ctx, scope)) if {
	c := object.get(step, "if", "")
	is_string(c)
} else := "yes"

condition(c, env) := "yes" if {
	regex.match(`^\s*(\$\{\{\s*(success\(\)|always\(\)|true)\s*\}\})?\s*$`, c)
} else := "no" if {
	regex.match(`^\s*\$\{\{\s*(failure\(\)|false)\s*\}\}\s*$`, c)
} else := compared(m[0], env) if {
	m := regex.find_all_string_submatch_n(`^\s*\$\{\{\s*((?:vars|ctx)\.[A-Za-z_][A-Za-z0-9_]*)\s*(==|!=)\s*(?:'([^']*)'|"([^"]*)")\s*\}\}\s*$`, c, 1)
	count(m) == 1
} else := resolved(expr.subst(c, env))

# compared evaluates `${{ vars.x == 'v' }}` (or !=, or ctx.stage) when the
# left side resolves to a known value ("unknown" when it does not).
compared(m, env) := yes_no((v == concat("", [m[3], m[4]])) == (m[2] == "==")) if {
	v := expr.subst(sprintf("${{ %s }}", [m[1]]), env)
	expr.known(v)
} else := "unknown"

yes_no(true) := "yes"

yes_no(false) := "no"

resolved("true") := "yes"

resolved("false") := "no"

resolved(v) := "unknown" if not v in {"true", "false"}

# value substitutes a step's env into a config value: expr.subst, called
# only for a string that holds an expression (most hold none).
value(step, v) := expr.subst(v, step.env) if {
	is_string(v)
	contains(v, "${{")
} else := v

# all_steps lists every promotion step of records[i], inflated as the model's
# steps are (for tools that show or edit a promotion; the rules read only
# read_steps). records[i] is the record of objects.stages[i].
all_steps(i) := steps(objects.stages[i], r.ctx, {"ctx": r.ctx, "vars": r.vars, "under": []}, "*") if r := records[i]
