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

# The fields the model reads and the JSON type each must have when present.
fields := {
	"Application": [
		[["spec"], "object", true],
		[["spec", "source"], "object", false],
		[["spec", "sources"], "array", false],
		[["spec", "sourceHydrator"], "object", false],
		[["spec", "syncPolicy"], "object", false],
		[["spec", "source", "repoURL"], "string", false],
		[["spec", "source", "chart"], "string", false],
		[["metadata", "annotations"], "object", false],
		[["metadata", "labels"], "object", false],
	],
	"ApplicationSet": [
		[["spec"], "object", true],
		[["spec", "generators"], "array", false],
		[["spec", "template"], "object", false],
		[["spec", "templatePatch"], "string", false],
	],
	"Stage": [
		[["spec"], "object", false],
		[["spec", "vars"], "array", false],
		[["spec", "promotionTemplate"], "object", false],
		[["spec", "promotionTemplate", "spec"], "object", false],
		[["spec", "promotionTemplate", "spec", "steps"], "array", false],
		[["spec", "promotionTemplate", "spec", "vars"], "array", false],
		[["metadata", "annotations"], "object", false],
	],
	"PromotionTask": [
		[["spec"], "object", true],
		[["spec", "steps"], "array", false],
		[["spec", "vars"], "array", false],
	],
	"ClusterPromotionTask": [
		[["spec"], "object", true],
		[["spec", "steps"], "array", false],
		[["spec", "vars"], "array", false],
	],
}

# Fields of each step (of a Stage or a task), and of argocd-update app entries.
step_fields := [
	[["config"], "object"],
	[["vars"], "array"],
	[["uses"], "string"],
	[["as"], "string"],
	[["task"], "object"],
]

update_fields := [[["apps"], "array"]]

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

problems contains [o.ref, concat(".", path), want, got] if {
	some o in objects.docs
	some [path, want, required] in object.get(fields, o.ref.kind, [])
	got := kind_at(o.obj, path, required)
	got != want
}

problems contains [o.ref, sprintf("%s[%d].%s", [prefix, i, concat(".", path)]), want, got] if {
	some o in objects.docs
	some prefix, steps in steps_of(o)
	some i, step in steps
	is_object(step)
	some [path, want] in step_fields
	got := kind_at(step, path, false)
	got != want
}

problems contains [o.ref, sprintf("%s[%d]", [prefix, i]), "object", type_name(step)] if {
	some o in objects.docs
	some prefix, steps in steps_of(o)
	some i, step in steps
	not is_object(step)
}

problems contains [o.ref, concat("", [where, ".", concat(".", path)]), want, got] if {
	some o in objects.docs
	some e in update_entries(o)
	some [where, value, checks] in [
		[e.where, e.config, update_fields],
		[e.app_where, e.app, app_entry_fields],
		[e.source_where, e.source, source_entry_fields],
	]
	is_object(value)
	some [path, want] in checks
	got := kind_at(value, path, false)
	got != want
}

steps_of(o) := {"spec.promotionTemplate.spec.steps": s} if {
	o.ref.kind == "Stage"
	s := o.obj.spec.promotionTemplate.spec.steps
	is_array(s)
} else := {"spec.steps": s} if {
	o.ref.kind in {"PromotionTask", "ClusterPromotionTask"}
	s := o.obj.spec.steps
	is_array(s)
} else := {}

update_entries(o) := [e |
	some prefix, steps in steps_of(o)
	some i, step in steps
	is_object(step)
	step.uses == "argocd-update"
	is_object(step.config)
	where := sprintf("%s[%d].config", [prefix, i])
	some e in entries(step.config, where)
]

entries(config, where) := [{"where": where, "config": config, "app_where": where, "app": null, "source_where": where, "source": null}] if {
	not is_array(config.apps)
} else := array.concat(
	[{"where": where, "config": config, "app_where": sprintf("%s.apps[%d]", [where, j]), "app": app, "source_where": where, "source": null} |
		some j, app in config.apps
	],
	[{"where": where, "config": config, "app_where": sprintf("%s.apps[%d]", [where, j]), "app": app, "source_where": sprintf("%s.apps[%d].sources[%d]", [where, j, k]), "source": src} |
		some j, app in config.apps
		is_array(app.sources)
		some k, src in app.sources
	],
)

# kind_at is the JSON type at path: "absent" when the key is missing (and the
# field optional), "missing" when a required field is, "null" when it is null.
kind_at(obj, path, required) := "absent" if {
	not required
	object.get(obj, path, absent_marker) == absent_marker
} else := "missing" if {
	required
	object.get(obj, path, null) == null
} else := type_name(object.get(obj, path, null))

absent_marker := "\u0000absent"

report contains finding if {
	some [ref, field, want, got] in problems
	got != "absent"
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("%s %s/%s: %s is %s, want %s; flipflop reads around it, so what it should say is not checked.", [
			ref.kind, ref.namespace, ref.name, field, article(got), want,
		]),
		[ref],
		sprintf("%s/%s/%s|%s", [ref.kind, ref.namespace, ref.name, field]),
		{"field": field, "want": want, "got": got},
	)
}

article("missing") := "missing"

article(t) := sprintf("a %s", [t]) if t != "missing"
