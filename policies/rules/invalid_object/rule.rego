# METADATA
# title: Object with a field of the wrong type
# description: |
#   A field flipflop reads has the wrong type (`spec.source: 42`, `steps: null`,
#   `apps: "x"`, an Application without `spec`). Kubernetes would reject most of
#   these at apply time; flipflop reads around them, but cannot check what the
#   field should have said, so a contradiction could hide there.
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

# The fields the model reads whose type decides what it sees, with the JSON
# type each must have when present (absent or null is fine).
optional_fields := {
	"Application": [
		[["spec", "source"], "object"],
		[["spec", "sources"], "array"],
		[["spec", "sourceHydrator"], "object"],
		[["spec", "syncPolicy"], "object"],
	],
	"ApplicationSet": [
		[["spec", "generators"], "array"],
		[["spec", "template"], "object"],
		[["spec", "templatePatch"], "string"],
	],
	"Stage": [
		[["spec"], "object"],
		[["spec", "vars"], "array"],
		[["spec", "promotionTemplate"], "object"],
		[["spec", "promotionTemplate", "spec"], "object"],
		[["spec", "promotionTemplate", "spec", "vars"], "array"],
	],
	"PromotionTask": [[["spec", "vars"], "array"]],
	"ClusterPromotionTask": [[["spec", "vars"], "array"]],
}

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

missing_or_type(null) := "missing"

missing_or_type(v) := type_name(v) if v != null

# absent marks a key that is not there at all.
absent := "\u0000absent"

# Fields of the steps the model reads (and of task steps).
step_fields := [
	[["config"], "object"],
	[["vars"], "array"],
	[["as"], "string"],
	[["task"], "object"],
]

app_entry_fields := [
	[["name"], "string"],
	[["namespace"], "string"],
	[["selector"], "object"],
	[["sources"], "array"],
]

source_entry_fields := [
	[["repoURL"], "string"],
	[["chart"], "string"],
	[["desiredRevision"], "string"],
	[["desiredCommitFromStep"], "string"],
	[["updateTargetRevision"], "boolean"],
]

# step_rows lists the steps worth a look, once: [ref, "<steps field>[i]", step]
# for steps that are not objects, that the model reads, or whose uses is odd.
step_rows := [[o.ref, sprintf("%s[%d]", [prefix, i]), step] |
	some o in objects.docs
	some prefix, steps in steps_of(o)
	some i, step in steps
	look_at(step)
]

look_at(step) if not is_object(step)

look_at(step) if stages.read_steps[step.uses]

look_at(step) if step.task

look_at(step) if {
	is_object(step)
	not is_string(object.get(step, "uses", ""))
}

# argocd-update configs, app entries and source entries.
updates := [[ref, sprintf("%s.config", [where]), step.config] |
	some [ref, where, step] in step_rows
	step.uses == "argocd-update"
	is_object(step.config)
]

array_at(o, key) := v if {
	is_object(o)
	v := o[key]
	is_array(v)
} else := []

steps_of(o) := {"spec.promotionTemplate.spec.steps": s} if {
	o.ref.kind == "Stage"
	s := o.obj.spec.promotionTemplate.spec.steps
	is_array(s)
} else := {"spec.steps": s} if {
	o.ref.kind in {"PromotionTask", "ClusterPromotionTask"}
	s := o.obj.spec.steps
	is_array(s)
} else := {}

problems contains [o.ref, concat(".", path), want, got] if {
	some o in objects.docs
	some [path, want] in optional_fields[o.ref.kind]
	v := object.get(o.obj, path, null)
	v != null
	got := type_name(v)
	got != want
}

problems contains [o.ref, field, "object", got] if {
	some o in objects.docs
	some field in required_fields[o.ref.kind]
	v := object.get(o.obj, field, null)
	not is_object(v)
	got := missing_or_type(v)
}

problems contains [o.ref, concat(".", path), want, got] if {
	some o in objects.docs
	some [path, want] in not_null_fields[o.ref.kind]
	v := object.get(o.obj, path, absent)
	v != absent
	got := type_name(v)
	got != want
}

problems contains [ref, where, "object", type_name(step)] if {
	some [ref, where, step] in step_rows
	not is_object(step)
}

problems contains [ref, sprintf("%s.%s", [where, concat(".", path)]), want, got] if {
	some [ref, where, step] in step_rows
	is_object(step)
	some [path, want] in step_fields
	v := object.get(step, path, null)
	v != null
	got := type_name(v)
	got != want
}

problems contains [ref, sprintf("%s.uses", [where]), "string", type_name(step.uses)] if {
	some [ref, where, step] in step_rows
	is_object(step)
	not is_string(object.get(step, "uses", ""))
}

problems contains [ref, sprintf("%s.apps", [where]), "array", type_name(config.apps)] if {
	some [ref, where, config] in updates
	config.apps != null
	not is_array(config.apps)
}

problems contains [ref, where_app, "object", type_name(app)] if {
	some [ref, where, config] in updates
	some j, app in array_at(config, "apps")
	not is_object(app)
	where_app := sprintf("%s.apps[%d]", [where, j])
}

problems contains [ref, sprintf("%s.apps[%d].%s", [where, j, concat(".", path)]), want, got] if {
	some [ref, where, config] in updates
	some j, app in array_at(config, "apps")
	is_object(app)
	some [path, want] in app_entry_fields
	v := object.get(app, path, null)
	v != null
	got := type_name(v)
	got != want
}

problems contains [ref, sprintf("%s.apps[%d].sources[%d].%s", [where, j, k, concat(".", path)]), want, got] if {
	some [ref, where, config] in updates
	some j, app in array_at(config, "apps")
	some k, src in array_at(app, "sources")
	is_object(src)
	some [path, want] in source_entry_fields
	v := object.get(src, path, null)
	v != null
	got := type_name(v)
	got != want
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
