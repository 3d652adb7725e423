# METADATA
# title: Object with a field of the wrong type
# description: |
#   A field flipflop reads has the wrong type (`spec.source: 42`, `steps: null`,
#   `apps: "x"`, an unquoted `targetRevision: 1.0`, an Application without `spec`).
#   Kubernetes would reject most of these at apply time; flipflop reads around them,
#   but cannot check what the field should have said, so a contradiction could hide
#   there. Every field the model reads is checked, with the type Kargo's and Argo
#   CD's CRDs (and, for step configs, Kargo's step config schemas) give it.
# related_resources:
#   - ref: https://github.com/akuity/kargo/tree/main/charts/kargo/resources/crds
#     description: Kargo CRDs (the Stage, PromotionTask and Warehouse schemas)
#   - ref: https://argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/
#     description: Argo CD, declarative setup (the Application and ApplicationSet specs)
# custom:
#   id: invalid-object
#   severity: warning
#   why: |
#     Kubernetes checks a custom resource against its CRD's schema when it is applied,
#     so most of these objects would be rejected by `kubectl apply` or by Argo CD's sync
#     (`The Application "<name>" is invalid: ...`). Not all of them: a Stage's step
#     `config` is opaque to the Stage CRD (`x-kubernetes-preserve-unknown-fields`), so a
#     wrong type there is accepted and fails only when a promotion runs the step. Either
#     way flipflop reads around the field, and a contradiction it would have caused stays
#     hidden until the field is fixed.
#   remediation: |
#     Fix the field to the type the CRD expects (see the message), or exclude the
#     file from the check if it is not a real manifest (e.g. a Helm template).
package lib.flipflop.rules.invalid_object

import data.lib.flipflop.objects
import data.lib.flipflop.result
import data.lib.flipflop.stages

# Fields that must be there (an object).
required_fields := {
	"Application": ["spec"],
	"ApplicationSet": ["spec"],
	"PromotionTask": ["spec"],
	"ClusterPromotionTask": ["spec"],
}

# Fields that may be absent but not null, with their type.
not_null_fields := {
	"Stage": [[["spec", "promotionTemplate", "spec", "steps"], "array"]],
	"PromotionTask": [[["spec", "steps"], "array"]],
	"ClusterPromotionTask": [[["spec", "steps"], "array"]],
}

# ---------------------------------------------------------------------------
# Problems: [ref, field, want, got].

# The tables are walked as a trie: the entries without wildcards grouped by
# their parent, and those with wildcards by what they iterate, so that each
# container is fetched once per object, the keys below it are picked with one
# object.filter, and each check is a few built-in calls (written out for up to
# three wildcards: Rego has no recursion). A field's path is spelled only for a
# value of the wrong type.

problems contains [o.ref, dotted(array.concat(parent, [key])), want, got] if {
	some o in suspect_docs
	some [parent, children] in compiled[o.ref.kind].flat
	x := object.get(o.obj, parent, null)
	is_object(x)
	some key, v in object.filter(x, children)
	v != null
	want := children[key]
	got := type_name(v)
	got != want
	not var_expression([key], v)
}

problems contains [o.ref, concat("", [dotted(c0), step(k1)]), want, got] if {
	some o in suspect_docs
	some [c0, w0, want, _, _] in compiled[o.ref.kind].d1
	want != ""
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	got := type_name(e1)
	got != want
}

problems contains [o.ref, concat("", [dotted(c0), step(k1), sub([key])]), want, got] if {
	some o in suspect_docs
	some [c0, w0, _, singles, _] in compiled[o.ref.kind].d1
	count(singles) > 0
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	some key, v in object.filter(e1, singles)
	v != null
	want := singles[key]
	got := type_name(v)
	got != want
	not var_expression([key], v)
}

problems contains [o.ref, concat("", [dotted(c0), step(k1), sub(rel)]), want, got] if {
	some o in suspect_docs
	some [c0, w0, _, _, multis] in compiled[o.ref.kind].d1
	count(multis) > 0
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	some [rel, want] in multis
	v := object.get(e1, rel, null)
	v != null
	got := type_name(v)
	got != want
	not var_expression(rel, v)
}

problems contains [o.ref, concat("", [dotted(c0), step(k1), sub(c1), step(k2)]), want, got] if {
	some o in suspect_docs
	some [c0, w0, c1, w1, want, _, _] in compiled[o.ref.kind].d2
	want != ""
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	got := type_name(e2)
	got != want
}

problems contains [o.ref, concat("", [dotted(c0), step(k1), sub(c1), step(k2), sub([key])]), want, got] if {
	some o in suspect_docs
	some [c0, w0, c1, w1, _, singles, _] in compiled[o.ref.kind].d2
	count(singles) > 0
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	some key, v in object.filter(e2, singles)
	v != null
	want := singles[key]
	got := type_name(v)
	got != want
	not var_expression([key], v)
}

problems contains [o.ref, concat("", [dotted(c0), step(k1), sub(c1), step(k2), sub(rel)]), want, got] if {
	some o in suspect_docs
	some [c0, w0, c1, w1, _, _, multis] in compiled[o.ref.kind].d2
	count(multis) > 0
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	some [rel, want] in multis
	v := object.get(e2, rel, null)
	v != null
	got := type_name(v)
	got != want
	not var_expression(rel, v)
}

problems contains [o.ref, concat("", [dotted(c0), step(k1), sub(c1), step(k2), sub(c2), step(k3)]), want, got] if {
	some o in suspect_docs
	some [c0, w0, c1, w1, c2, w2, want, _, _] in compiled[o.ref.kind].d3
	want != ""
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	x3 := object.get(e2, c2, null)
	type_name(x3) == container[w2]
	some k3, e3 in x3
	got := type_name(e3)
	got != want
}

problems contains [o.ref, concat("", [dotted(c0), step(k1), sub(c1), step(k2), sub(c2), step(k3), sub([key])]), want, got] if {
	some o in suspect_docs
	some [c0, w0, c1, w1, c2, w2, _, singles, _] in compiled[o.ref.kind].d3
	count(singles) > 0
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	x3 := object.get(e2, c2, null)
	type_name(x3) == container[w2]
	some k3, e3 in x3
	is_object(e3)
	some key, v in object.filter(e3, singles)
	v != null
	want := singles[key]
	got := type_name(v)
	got != want
	not var_expression([key], v)
}

problems contains [o.ref, concat("", [dotted(c0), step(k1), sub(c1), step(k2), sub(c2), step(k3), sub(rel)]), want, got] if {
	some o in suspect_docs
	some [c0, w0, c1, w1, c2, w2, _, _, multis] in compiled[o.ref.kind].d3
	count(multis) > 0
	x1 := object.get(o.obj, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	x3 := object.get(e2, c2, null)
	type_name(x3) == container[w2]
	some k3, e3 in x3
	is_object(e3)
	some [rel, want] in multis
	v := object.get(e3, rel, null)
	v != null
	got := type_name(v)
	got != want
	not var_expression(rel, v)
}

problems contains [o.ref, field, "object", "missing"] if {
	some o in objects.docs
	some field in required_fields[o.ref.kind]
	object.get(o.obj, field, null) == null
}

problems contains [o.ref, concat(".", path), want, "null"] if {
	some o in objects.docs
	some [path, want] in not_null_fields[o.ref.kind]
	object.get(o.obj, path, absent) == null
}

problems contains [ref, concat("", [where, ".", dotted(array.concat(parent, [key]))]), want, got] if {
	some [ref, where, uses, config] in configs
	some [parent, children] in compiled_config[uses].flat
	x := object.get(config, parent, null)
	is_object(x)
	some key, v in object.filter(x, children)
	v != null
	want := children[key]
	got := type_name(v)
	got != want
	not expression(v)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1)]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, want, _, _] in compiled_config[uses].d1
	want != ""
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	got := type_name(e1)
	got != want
	not expression(e1)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1), sub([key])]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, _, singles, _] in compiled_config[uses].d1
	count(singles) > 0
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	some key, v in object.filter(e1, singles)
	v != null
	want := singles[key]
	got := type_name(v)
	got != want
	not expression(v)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1), sub(rel)]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, _, _, multis] in compiled_config[uses].d1
	count(multis) > 0
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	some [rel, want] in multis
	v := object.get(e1, rel, null)
	v != null
	got := type_name(v)
	got != want
	not expression(v)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1), sub(c1), step(k2)]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, c1, w1, want, _, _] in compiled_config[uses].d2
	want != ""
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	got := type_name(e2)
	got != want
	not expression(e2)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1), sub(c1), step(k2), sub([key])]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, c1, w1, _, singles, _] in compiled_config[uses].d2
	count(singles) > 0
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	some key, v in object.filter(e2, singles)
	v != null
	want := singles[key]
	got := type_name(v)
	got != want
	not expression(v)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1), sub(c1), step(k2), sub(rel)]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, c1, w1, _, _, multis] in compiled_config[uses].d2
	count(multis) > 0
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	some [rel, want] in multis
	v := object.get(e2, rel, null)
	v != null
	got := type_name(v)
	got != want
	not expression(v)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1), sub(c1), step(k2), sub(c2), step(k3)]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, c1, w1, c2, w2, want, _, _] in compiled_config[uses].d3
	want != ""
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	x3 := object.get(e2, c2, null)
	type_name(x3) == container[w2]
	some k3, e3 in x3
	got := type_name(e3)
	got != want
	not expression(e3)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1), sub(c1), step(k2), sub(c2), step(k3), sub([key])]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, c1, w1, c2, w2, _, singles, _] in compiled_config[uses].d3
	count(singles) > 0
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	x3 := object.get(e2, c2, null)
	type_name(x3) == container[w2]
	some k3, e3 in x3
	is_object(e3)
	some key, v in object.filter(e3, singles)
	v != null
	want := singles[key]
	got := type_name(v)
	got != want
	not expression(v)
}

problems contains [ref, concat("", [where, ".", dotted(c0), step(k1), sub(c1), step(k2), sub(c2), step(k3), sub(rel)]), want, got] if {
	some [ref, where, uses, config] in configs
	some [c0, w0, c1, w1, c2, w2, _, _, multis] in compiled_config[uses].d3
	count(multis) > 0
	x1 := object.get(config, c0, null)
	type_name(x1) == container[w0]
	some k1, e1 in x1
	is_object(e1)
	x2 := object.get(e1, c1, null)
	type_name(x2) == container[w1]
	some k2, e2 in x2
	is_object(e2)
	x3 := object.get(e2, c2, null)
	type_name(x3) == container[w2]
	some k3, e3 in x3
	is_object(e3)
	some [rel, want] in multis
	v := object.get(e3, rel, null)
	v != null
	got := type_name(v)
	got != want
	not expression(v)
}

report contains finding if {
	some [ref, field, want, got] in problems
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("%s %s/%s: %s is %s, want %s; flipflop reads around it, so what it should say is not checked.", [
			ref.kind, ref.namespace, ref.name, field, article(got), want,
		]),
		[ref],
		sprintf("%s/%s/%s|%s", [ref.kind, ref.namespace, ref.name, field]),
		result.nothing,
		{"field": field, "want": want, "got": got},
	)
}

article("missing") := "missing"

article(t) := sprintf("a %s", [t]) if t != "missing"

# absent marks a key that is not there at all.
absent := "\u0000absent"

# A var's value may be an expression whatever it yields (keys: the last
# chunk of the var's path).
var_expression(keys, v) if {
	keys == ["value"]
	expression(v)
}

# expression reports a value Kargo evaluates before the step runs (allowed
# for any type in a step's config and a var's value).
expression(v) if {
	is_string(v)
	contains(v, "${{")
}

# The configs of the steps the model reads, by step: [ref, "<steps>[i].config", uses, config].
configs := [[o.ref, sprintf("%s[%d].config", [prefix, i]), step.uses, step.config] |
	some o in suspect_docs
	some prefix, steps in steps_of(o)
	some i, step in steps
	is_object(step)
	is_string(step.uses)
	stages.read_steps[step.uses]
	is_object(step.config)
]

steps_of(o) := {"spec.promotionTemplate.spec.steps": s} if {
	o.ref.kind == "Stage"
	s := o.obj.spec.promotionTemplate.spec.steps
	is_array(s)
} else := {"spec.steps": s} if {
	o.ref.kind in {"PromotionTask", "ClusterPromotionTask"}
	s := o.obj.spec.steps
	is_array(s)
} else := {}

# container is the type a wildcard iterates.
container := {"[]": "array", "*": "object"}

dotted(keys) := concat(".", keys)

sub([]) := ""

sub(keys) := concat("", [".", concat(".", keys)]) if count(keys) > 0

step(k) := sprintf("[%d]", [k]) if is_number(k)

step(k) := sprintf(".%s", [k]) if is_string(k)
