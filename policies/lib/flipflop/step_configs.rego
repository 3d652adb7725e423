# METADATA
# title: Step configs
# description: |
#   Every promotion step as written (a Stage's own, a PromotionTask's or a
#   ClusterPromotionTask's) checked against the keys Kargo's step config schema
#   of the version followed allows and requires (lib.flipflop.step_schemas,
#   generated from Kargo's module): Kargo validates a step's config only when a
#   Promotion runs the step, and fails the step on a config its schema rejects.
#   Types are invalid-object's; the keys are checked here, at the top level and
#   one level down, by the table of the minor release followed (one patch
#   release of each, v0.9 to the newest). Steps Kargo does not ship (custom
#   steps of a platform) and versions before v0.9 are not judged.
package lib.flipflop.step_configs

import data.lib.flipflop.config
import data.lib.flipflop.expr_syntax
import data.lib.flipflop.objects
import data.lib.flipflop.stages
import data.lib.flipflop.step_schemas

# minor is the minor release followed, as the table keys it ("1.10").
minor := sprintf("%d.%d", array.slice(config.kargo, 0, 2))

# applies: the table has the minor release followed.
applies if step_schemas.releases[minor]

# release names the release whose schemas judge the steps (v1.10.10).
release := step_schemas.releases[minor].version

# tables holds each step's nodes with their keys as sets, and the patterns
# that clear a config in few evaluations: the top level's keys, marshalled
# (json.marshal sorts them), match top when the top level allows them all and
# has every key it requires; each nested node's likewise (nested: its key,
# whether it holds a list of objects, its pattern). Only a config that is not
# cleared is read key by key (problems). A partial rule, read by key only: a
# query builds the tables of the kinds of step its estate uses, not of all
# thirty (about 2,300 evaluations saved on every query, a Gatekeeper review
# or a conftest run as much as an evaluation of 10k objects).
tables[uses] := {
	"nodes": [{"path": n.path, "allowed": as_set(n.allowed), "required": {k | some k in n.required}} | some n in ns],
	"top": top_pattern(ns),
	"nested": [{"key": n.path[0], "list": count(n.path) == 2, "pattern": nested_pattern(n)} | some n in ns; count(n.path) > 0],
} if {
	some uses, raw in object.get(step_schemas.nodes, minor, {})
	ns := [object.union(n, {"allowed": allowed(uses, n)}) | some n in raw]
}

as_set(null) := null

as_set(keys) := {k | some k in keys} if keys != null

# allowed is a node's allowed keys, sorted (null: any). An apps[] entry of
# argocd-update may also hold the fields the model reports when the version
# lacks them (config.argocd_update_fields, unsupported-field), so that one
# field gets one finding.
allowed(_, {"allowed": null}) := null

allowed(uses, n) := sort({k | some k in array.concat(n.allowed, reported_elsewhere(uses, n.path))}) if n.allowed != null

reported_elsewhere(uses, path) := [f.field | some f in config.argocd_update_fields; f.where == "app"] if {
	uses == "argocd-update"
	path == ["apps", "[]"]
} else := []

top_pattern(ns) := concat("", ["^", keys_pattern(ns[0]), "$"]) if {
	ns[0].path == []
} else := "^"

nested_pattern(n) := concat("", ["^", keys_pattern(n), "$"]) if {
	count(n.path) == 1
} else := concat("", ["^\\[(?:", keys_pattern(n), ",?)*\\]$"])

# keys_pattern matches the marshalled keys of an object the node accepts: a
# closed node's allowed keys in order, each optional unless required; an open
# node's required keys in order, anything around them.
keys_pattern(n) := concat("", ["\\[", concat("", [key_pattern(k, n.required) | some k in n.allowed]), "\\]"]) if {
	n.allowed != null
} else := concat("", ["\\[", concat("", [sprintf(`(?:[^\]]*?)"%s",?`, [regex_quote(k)]) | some k in n.required]), "[^\\]]*\\]"])

key_pattern(k, required) := sprintf(`"%s",?`, [regex_quote(k)]) if k in required

else := sprintf(`(?:"%s",?)?`, [regex_quote(k)])

regex_quote(s) := regex.replace(s, `[.*+?()|\[\]{}^$\\-]`, `\$0`)

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

schema_invalid := array.concat(
	[object.union(written(r.ref, i, s, stages.stage_steps), {"stage": r.key, "task": "", "kind": "schema", "problems": ps}) |
		applies
		some l in stage_lists
		some i, s in l.steps
		t := tables[s.uses]
		c := object.get(s, "config", {})
		is_object(c)
		not cleared(c, t)
		ps := problems(c, t.nodes)
		count(ps) > 0
		r := stages.records[l.j]
	],
	[object.union(written(l.task.ref, i, s, stages.task_steps), {"stage": "", "task": l.task.key, "kind": "schema", "problems": ps}) |
		applies
		some l in task_lists
		some i, s in l.steps
		tb := tables[s.uses]
		c := object.get(s, "config", {})
		is_object(c)
		not cleared(c, tb)
		ps := problems(c, tb.nodes)
		count(ps) > 0
	],
)

# expression_invalid: the steps with an expression Kargo cannot parse. The
# steps of a Stage or task are read one by one only when their JSON is
# suspect (a few evaluations for all of them).
expression_invalid := array.concat(
	[object.union(written(r.ref, i, s, stages.stage_steps), {"stage": r.key, "task": "", "kind": "expression", "problems": ps}) |
		some l in stage_lists
		expr_syntax.suspect_json(l.text)
		some i, s in l.steps
		ps := expression_problems(s)
		count(ps) > 0
		r := stages.records[l.j]
	],
	[object.union(written(l.task.ref, i, s, stages.task_steps), {"stage": "", "task": l.task.key, "kind": "expression", "problems": ps}) |
		some l in task_lists
		expr_syntax.suspect_json(l.text)
		some i, s in l.steps
		ps := expression_problems(s)
		count(ps) > 0
	],
)

# var_invalid: the vars of a Stage or task with an expression Kargo cannot
# parse. A Promotion's vars are a Stage's spec.vars, then its
# promotionTemplate.spec.vars (pkg/webhook/kubernetes/promotion/webhook.go),
# and Kargo evaluates them all whenever a step reads its vars (its config or
# its if:, pkg/promotion/evaluator.go, Vars): the first step fails. A task's
# vars are defaults its steps get (pkg/api/promotion.go,
# promotionTaskVarsToStepVars) unless the Promotion sets the var, and are
# evaluated with the step's vars: the task's first step fails (task_var_users
# says for which Stages). Only lists whose JSON is suspect are read var by var.
var_invalid := array.concat(
	[{
		"ref": r.ref, "index": k, "alias": object.get(v, "name", ""), "uses": "",
		"path": sprintf("%s/%d", [l.path, k]), "stage": r.key, "task": "", "kind": "var", "problems": ps,
	} |
		some j, r in stages.records
		r.vars != {}
		some l in stage_var_lists
		vars := object.get(objects.stages[j].obj, l.at, [])
		is_array(vars)
		count(vars) > 0
		expr_syntax.suspect(vars)
		some k, v in vars
		ps := var_problems(v)
		count(ps) > 0
	],
	[{
		"ref": t.ref, "index": k, "alias": object.get(v, "name", ""), "uses": "",
		"path": sprintf("/spec/vars/%d", [k]), "stage": "", "task": t.key, "kind": "var", "problems": ps,
	} |
		some t in stages.task_objects
		vars := objects.array_at(t.obj, ["spec", "vars"])
		expr_syntax.suspect(vars)
		some k, v in vars
		ps := var_problems(v)
		count(ps) > 0
	],
)

# stage_var_lists are where a Stage keeps vars.
stage_var_lists := [
	{"path": "/spec/vars", "at": ["spec", "vars"]},
	{"path": "/spec/promotionTemplate/spec/vars", "at": ["spec", "promotionTemplate", "spec", "vars"]},
]

var_problems(v) := [expression_problem("value", q) |
	is_string(v.value)
	some q in expr_syntax.problems(v.value)
]

# promotion_var_names are the names of the vars a Stage's Promotions set
# (with a value), which take the place of a task's default of that name.
promotion_var_names(obj) := {v.name |
	some l in stage_var_lists
	some v in objects.array_at(obj, l.at)
	is_string(v.name)
	is_string(v.value)
	v.value != ""
}

# stage_lists and task_lists are the step lists as written, read once for the
# three checks, each with its JSON text, marshalled once for the expression
# and the output checks (whose first pass each reads the text only).
stage_lists := [{"j": j, "steps": steps, "text": json.marshal(steps)} |
	some j, o in objects.stages
	steps := objects.array_at(o.obj, ["spec", "promotionTemplate", "spec", "steps"])
]

task_lists := [{"task": t, "steps": steps, "text": json.marshal(steps)} |
	some t in stages.task_objects
	steps := objects.array_at(t.obj, ["spec", "steps"])
]

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
			p := expression_problem(concat(".", array.concat(["config"], [format_segment(x) | some x in path])), q)
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
output_invalid := array.concat(
	[object.union(written(r.ref, i, s, stages.stage_steps), {"stage": r.key, "task": "", "kind": "output", "problems": ps}) |
		count(lacking_outputs) > 0
		some l in stage_lists
		regex.match(`prNumber|\.pr\.id`, l.text)
		some i, s in l.steps
		ps := output_problems(s, l.steps)
		count(ps) > 0
		r := stages.records[l.j]
	],
	[object.union(written(l.task.ref, i, s, stages.task_steps), {"stage": "", "task": l.task.key, "kind": "output", "problems": ps}) |
		count(lacking_outputs) > 0
		some l in task_lists
		regex.match(`prNumber|\.pr\.id`, l.text)
		some i, s in l.steps
		ps := output_problems(s, l.steps)
		count(ps) > 0
	],
)

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

format_segment(x) := sprintf("%d", [x]) if is_number(x)

else := x

written(ref, i, s, steps) := {
	"ref": ref, "index": i, "alias": object.get(s, "as", sprintf("step-%d", [i])), "uses": s.uses,
	"path": sprintf("%s/%d", [steps, i]),
}

cleared(c, t) if {
	regex.match(t.top, json.marshal(object.keys(c)))
	every n in t.nested {
		nested_cleared(object.get(c, n.key, null), n)
	}
}

nested_cleared(v, n) if {
	n.list
	is_array(v)
	regex.match(n.pattern, json.marshal([object.keys(e) | some e in v; is_object(e)]))
}

nested_cleared(v, n) if {
	not n.list
	is_object(v)
	regex.match(n.pattern, json.marshal(object.keys(v)))
}

# A container of another type (or none) has no keys to check: its type is
# invalid-object's.
nested_cleared(v, n) if {
	n.list
	not is_array(v)
}

nested_cleared(v, n) if {
	not n.list
	not is_object(v)
}

problems(c, nodes) := [p |
	some n in nodes
	some [where, v] in values(c, n.path)
	some p in object_problems(v, n, where)
]

values(c, []) := [["", c]]

values(c, [k]) := [[k, v] | v := object.get(c, k, null); is_object(v)]

values(c, [k, "[]"]) := [[sprintf("%s[%d]", [k, i]), e] |
	v := object.get(c, k, null)
	is_array(v)
	some i, e in v
	is_object(e)
]

object_problems(v, n, where) := array.concat(
	[{"field": field(where, k), "problem": "unknown"} | n.allowed != null; some k in (object.keys(v) - n.allowed)],
	[{"field": field(where, k), "problem": "missing"} | some k in (n.required - object.keys(v))],
)

field("", k) := k

field(where, k) := sprintf("%s.%s", [where, k]) if where != ""

# failing_stages are the Stages whose promotions always fail at a step whose
# config the schema rejects: their own steps', and those of the tasks they run.
failing_stages contains w.stage if {
	some w in invalid
	w.stage != ""
}

failing_stages contains r.key if {
	some w in invalid
	w.task != ""
	w.kind != "var"
	some j, o in objects.stages
	some s in objects.array_at(o.obj, ["spec", "promotionTemplate", "spec", "steps"])
	stages.is_task(s)
	r := stages.records[j]
	some t in stages.task_for(s.task, r.ctx)
	t.key == w.task
}

# A task's var fails the Stages that run the task and do not set the var.
failing_stages contains r.key if {
	some w in invalid
	w.kind == "var"
	w.task != ""
	some j, o in objects.stages
	not w.alias in promotion_var_names(o.obj)
	some s in objects.array_at(o.obj, ["spec", "promotionTemplate", "spec", "steps"])
	stages.is_task(s)
	r := stages.records[j]
	some t in stages.task_for(s.task, r.ctx)
	t.key == w.task
}
