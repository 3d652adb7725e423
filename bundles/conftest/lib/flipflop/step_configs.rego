# METADATA
# title: Step configs
# description: |
#   Every promotion step as written (a Stage's own, a PromotionTask's or a
#   ClusterPromotionTask's) validated against Kargo's step config schema of the
#   version followed (lib.flipflop.validation; one patch release of each minor
#   release, v0.9 to the newest): Kargo validates a step's config only when a
#   Promotion runs the step, and fails the step on a config its schema
#   rejects. Steps Kargo does not ship (custom steps of a platform) and
#   versions before v0.9 are not judged.
package lib.flipflop.step_configs

import data.lib.flipflop.config
import data.lib.flipflop.expr_syntax
import data.lib.flipflop.objects
import data.lib.flipflop.schemas
import data.lib.flipflop.stages
import data.lib.flipflop.validation

# minor is the minor release followed, as the table keys it ("1.10").
minor := sprintf("%d.%d", array.slice(config.kargo, 0, 2))

# release names the release whose schemas judge the steps (v1.10.10).
release := schemas.releases[minor].version

# reported_elsewhere are the keys of an argocd-update apps[] entry ("app")
# and of its sources[] entries ("source") the model reports when the version
# lacks them (config.argocd_update_fields, unsupported-field), so that one
# field gets one finding.
reported_elsewhere := {where: {f.field | some f in config.argocd_update_fields; f.where == where} | some where in {"app", "source"}}

# invalid lists the promotion steps as written (a Stage's own, a task's)
# that fail when a Promotion runs them, each with its kind and problems, and
# who runs it: a Stage (stage: its key) or a task (task: its key). Kind
# "schema": the step's config schema rejects the config (a config that is no
# object is invalid-object's), problems [{"field", "problem": "unknown" |
# "missing"}]; kind "expression": a value of its config, its if: condition or
# a var holds an expression Kargo cannot parse (lib.flipflop.expr_syntax),
# problems [{"field", "problem": "expression", "reason", "expression"}];
# kind "output": its pull request number reads an output the git-open-pr
# step does not have in the version followed (output_fields), problems
# [{"field", "problem": "output", "alias", "output", "since", "until", "instead"}];
# kind "var": a var of a Stage (spec.vars, promotionTemplate.spec.vars) or of
# a task (spec.vars) holds an expression Kargo cannot parse (alias: the
# var's name, uses: ""), problems as for "expression".
invalid := array.concat(array.concat(array.concat(schema_invalid, expression_invalid), output_invalid), var_invalid)

schema_invalid := [object.union(written(l, i, l.steps[i]), {"kind": "schema", "problems": ps}) |
	some [li, i] in {[li, i] | some [li, i, _] in schema_problems}
	l := step_lists[li]
	ps := [p | some [li2, i2, p] in schema_problems; [li2, i2] == [li, i]]
]

# step_schemas are the step config schemas of the release followed.
step_schemas := {uses: schemas.configs[uses][i] | some uses, i in schemas.releases[minor].steps}

# written_configs groups the configs of the steps as written by step (uses),
# for the steps the release followed has a schema for: [index in step_lists,
# index in its steps, config] (absent: {}; a config that is no object is
# invalid-object's). The steps are read once for all steps: OPA indexes the
# comprehension by uses, but a uses no step has misses the index and reads
# every step again, so only the steps' own are looked up.
written_configs[uses] := group if {
	some uses in {s.uses | some l in step_lists; some s in l.steps}
	step_schemas[uses]
	group := [[li, i, c] |
		some li, l in step_lists
		some i, s in l.steps
		s.uses == uses
		c := object.get(s, "config", {})
		is_object(c)
	]
	count(group) > 0
}

# schema_problems are [index in step_lists, index in its steps, problem] for
# every step whose config its schema rejects, each step's configs validated
# at once. A value that holds an expression is what Kargo evaluates before it
# validates, so only what holds whatever it yields is a problem: a missing
# key, a key the schema does not allow (Kargo evaluates values, never keys).
schema_problems := [[li, i, shown(p)] |
	some uses, group in written_configs
	some [k, p] in validation.problems([c | some [_, _, c] in group], step_schemas[uses], schemas.definitions)
	[li, i, c] := group[k]
	certain(c, p)
	not reported_elsewhere_at(uses, p, c)
]

certain(_, p) if p.problem in {"missing", "unknown"}

certain(config, p) if not regex.match(`\$\{[{%]`, json.marshal(object.get(config, p.path, null)))

# reported_elsewhere_at: the problem is another rule's. An argocd-update
# field the version lacks is unsupported-field's, and a selector with no
# criterion unmatched-application-selector's (model.empty_selector: the
# schema's anyOf and what its branches say of it).
reported_elsewhere_at("argocd-update", p, _) if {
	p.problem == "unknown"
	p.path[count(p.path) - 1] in reported_elsewhere[entry_of(p.path)]
}

reported_elsewhere_at("argocd-update", p, config) if {
	["apps", i, "selector"] = array.slice(p.path, 0, 3)
	sel := config.apps[i].selector
	count(objects.object_at(sel, ["matchLabels"])) == 0
	count(objects.array_at(sel, ["matchExpressions"])) == 0
}

# entry_of names the argocd-update entry a key of the config belongs to.
entry_of(["apps", i, _]) := "app" if is_number(i)

entry_of(["apps", i, "sources", j, _]) := "source" if {
	is_number(i)
	is_number(j)
}

# shown is a problem as findings list it: the field (dotted, below the
# config), what is wrong, and what the schema wants for anything but a
# missing or unknown key.
shown(p) := {"field": field_of(p.path), "problem": p.problem} if {
	p.problem in {"missing", "unknown"}
} else := {"field": field_of(p.path), "problem": p.problem, "want": p.want, "got": p.got}

field_of(path) := object.get({"": "config"}, field, field) if field := validation.dotted(path)

# expression_invalid: the steps with an expression Kargo cannot parse. The
# steps of a Stage or task are read one by one only when their JSON is
# suspect (a few evaluations for all of them).
expression_invalid := [object.union(written(l, i, s), {"kind": "expression", "problems": ps}) |
	some l in step_lists
	expr_syntax.suspect_json(l.text)
	some i, s in l.steps
	ps := expression_problems(s)
	count(ps) > 0
]

# var_invalid: the vars of a Stage or task with an expression Kargo cannot
# parse. A Promotion's vars are a Stage's spec.vars, then its
# promotionTemplate.spec.vars (pkg/webhook/kubernetes/promotion/webhook.go),
# and Kargo evaluates them all whenever a step reads its vars (its config or
# its if:, pkg/promotion/evaluator.go, Vars): the first step fails. A task's
# vars are defaults its steps get (pkg/api/promotion.go,
# promotionTaskVarsToStepVars) unless the Promotion sets the var, and are
# evaluated with the step's vars: the task's first step fails (task_var_users
# says for which Stages). Only lists whose JSON is suspect are read var by var.
var_invalid := [object.union(l.who, {
	"index": k, "alias": object.get(v, "name", ""), "uses": "",
	"path": sprintf("%s/%d", [l.at, k]), "kind": "var", "problems": ps,
}) |
	some l in var_lists
	expr_syntax.suspect(l.vars)
	some k, v in l.vars
	is_string(v.value)
	ps := [expression_problem("value", q) | some q in expr_syntax.problems(v.value)]
	count(ps) > 0
]

# var_lists are the var lists as written (the Stages', then the tasks'), each
# with who has it (as step_lists) and where it is (at).
var_lists := array.concat(
	[{"who": {"ref": r.ref, "stage": r.key, "task": ""}, "at": pointer, "vars": vars} |
		some j, r in stages.records
		r.vars != {}
		some [pointer, at] in stage_var_lists
		vars := objects.array_at(objects.stages[j].obj, at)
	],
	[{"who": {"ref": t.ref, "stage": "", "task": t.key}, "at": "/spec/vars", "vars": objects.array_at(t.obj, ["spec", "vars"])} |
		some t in stages.task_objects
	],
)

# stage_var_lists are where a Stage keeps vars: [pointer, path].
stage_var_lists := [["/spec/vars", ["spec", "vars"]], ["/spec/promotionTemplate/spec/vars", ["spec", "promotionTemplate", "spec", "vars"]]]

# promotion_var_names are the names of the vars a Stage's Promotions set
# (with a value), which take the place of a task's default of that name.
promotion_var_names(obj) := {v.name |
	some [_, at] in stage_var_lists
	some v in objects.array_at(obj, at)
	is_string(v.name)
	is_string(v.value)
	v.value != ""
}

# step_lists are the step lists as written (the Stages', then the tasks'),
# read once for the three checks, each with who runs it (who: its ref, and
# the key of its Stage or task), where it is (at) and its JSON text,
# marshalled once for the expression and the output checks (whose first
# pass each reads the text only).
step_lists := array.concat(
	[{"who": {"ref": r.ref, "stage": r.key, "task": ""}, "at": stages.stage_steps, "steps": steps, "text": json.marshal(steps)} |
		some j, o in objects.stages
		steps := objects.array_at(o.obj, ["spec", "promotionTemplate", "spec", "steps"])
		r := stages.records[j]
	],
	[{"who": {"ref": t.ref, "stage": "", "task": t.key}, "at": stages.task_steps, "steps": steps, "text": json.marshal(steps)} |
		some t in stages.task_objects
		steps := objects.array_at(t.obj, ["spec", "steps"])
	],
)

# expression_problems are a step's strings Kargo evaluates (its config's
# values, never its keys; its if: condition; its vars' values) whose
# expressions cannot be parsed.
expression_problems(s) := array.concat(
	array.concat(
		[p |
			is_object(s.config)
			walk(s.config, [path, v])
			is_string(v)
			some q in expr_syntax.problems(v)
			p := expression_problem(concat(".", array.concat(["config"], [validation.format(x) | some x in path])), q)
		],
		[p |
			is_string(s["if"])
			some q in expr_syntax.problems(s["if"])
			p := expression_problem("if", q)
		],
	),
	[p |
		is_array(s.vars)
		some k, var in s.vars
		is_string(var.value)
		some q in expr_syntax.problems(var.value)
		p := expression_problem(sprintf("vars[%d].value", [k]), q)
	],
)

# output_fields are the outputs of git-open-pr the steps after it read for
# the pull request's number, with the first version that has each and the
# first that no longer does ([major, minor]): prNumber until v1.6 (removed in
# v1.7.0), pr.id (and pr.url) from v1.5 (git_pr_opener.go at each tag).
output_fields := [
	{"output": "prNumber", "since": [0, 9], "until": [1, 7], "instead": "pr.id"},
	{"output": "pr.id", "since": [1, 5], "until": null, "instead": "prNumber"},
]

lacking_outputs := {f.output: f |
	some f in output_fields
	config.lacks(f)
}

# pr_number_steps are the steps that take a pull request's number.
pr_number_steps := {"git-wait-for-pr", "git-merge-pr"}

# output_invalid: the steps taking a pull request's number from an output of
# a git-open-pr step of the same list (outputs.<alias>.prNumber,
# outputs['<alias>'].pr.id, task.outputs...) that the version followed does
# not have: the number is null (or reading it fails), and Kargo fails the
# step. Only lists whose JSON names such an output are read step by step.
output_invalid := [object.union(written(l, i, s), {"kind": "output", "problems": ps}) |
	count(lacking_outputs) > 0
	some l in step_lists
	regex.match(`prNumber|\.pr\.id`, l.text)
	some i, s in l.steps
	ps := output_problems(s, l.steps)
	count(ps) > 0
]

output_problems(s, steps) := [p |
	s.uses in pr_number_steps
	is_string(s.config.prNumber)
	some m in regex.find_all_string_submatch_n(`(?:^|[^.\w])(?:task\.)?outputs(?:\.([A-Za-z0-9_-]+)|\[\s*['"]([^'"]+)['"]\s*\])\.(prNumber|pr\.id)\b`, s.config.prNumber, -1)
	alias := concat("", array.slice(m, 1, 3))
	some opener in steps
	opener.uses == "git-open-pr"
	opener["as"] == alias
	f := lacking_outputs[m[3]]
	p := {"field": "prNumber", "problem": "output", "alias": alias, "output": m[3], "since": f.since, "until": f.until, "instead": f.instead}
]

expression_problem(field, q) := {"field": field, "problem": "expression", "reason": q.reason, "expression": q.expression}

# written is step s, the i-th of step list l, as a finding names it.
written(l, i, s) := object.union(l.who, {
	"index": i, "alias": object.get(s, "as", sprintf("step-%d", [i])), "uses": s.uses,
	"path": sprintf("%s/%d", [l.at, i]),
})

# failing_stages are the Stages whose promotions always fail at a step whose
# config the schema rejects: their own steps', and those of the tasks they run.
failing_stages contains w.stage if {
	some w in invalid
	w.stage != ""
}

# A task's step fails every Stage that runs the task; a task's var, those
# that do not set the var themselves. Joined by task key: the Stages' task
# steps are read once, not once per invalid task step.
failing_stages contains stage if {
	count(invalid_by_task) > 0
	some [j, task] in stage_tasks
	some w in invalid_by_task[task]
	not sets_var(objects.stages[j].obj, w)
	stage := stages.records[j].key
}

# invalid_by_task groups the invalid steps and vars of tasks by the task's key.
invalid_by_task := {key: ws |
	some key in {w.task | some w in invalid; w.task != ""}
	ws := [w | some w in invalid; w.task == key]
}

# stage_tasks are [index in objects.stages, task key] for every task a
# Stage's task steps run.
stage_tasks := [[j, t.key] |
	some j, o in objects.stages
	some s in objects.array_at(o.obj, ["spec", "promotionTemplate", "spec", "steps"])
	stages.is_task(s)
	some t in stages.task_for(s.task, stages.records[j].ctx)
]

sets_var(obj, w) if {
	w.kind == "var"
	w.alias in promotion_var_names(obj)
}
