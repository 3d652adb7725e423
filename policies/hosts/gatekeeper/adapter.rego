# METADATA
# title: Gatekeeper adapter
# description: |
#   Turns a Gatekeeper review into the model's input: the reviewed object plus the
#   synced inventory of Applications, ApplicationSets, Stages, PromotionTasks and
#   ClusterPromotionTasks (the reviewed object's stale inventory copy excluded),
#   runs one rule, and keeps the findings that involve the reviewed object.
#   Settings come from the constraint's parameters (defaultBranch, argocdNamespace).
#   Findings waived by a flipflop.dev/ignore annotation are not violations.
package lib.flipflop.gatekeeper

# The inventory paths read: one per kind the model needs, nothing wider.
namespaced := [
	["argoproj.io/v1alpha1", "Application"],
	["argoproj.io/v1alpha1", "ApplicationSet"],
	["kargo.akuity.io/v1alpha1", "Stage"],
	["kargo.akuity.io/v1alpha1", "PromotionTask"],
]

review := input.review.object

review_ref := {"kind": review.kind, "namespace": object.get(review, ["metadata", "namespace"], ""), "name": review.metadata.name}

# docs is the model's input: conftest's combined shape.
docs := array.concat([{"path": "admission review", "contents": review}], inventory)

inventory := array.concat(
	[{"path": "inventory", "contents": o} |
		some [gv, kind] in namespaced
		some ns, name
		o := data.inventory.namespace[ns][gv][kind][name]
		not same(review_ref, kind, ns, name)
	],
	[{"path": "inventory", "contents": o} |
		some name
		o := data.inventory.cluster["kargo.akuity.io/v1alpha1"].ClusterPromotionTask[name]
		not same(review_ref, "ClusterPromotionTask", "", name)
	],
)

same(ref, kind, ns, name) if {
	kind == ref.kind
	ns == ref.namespace
	name == ref.name
}

settings := {k: v |
	some [param, k] in [["defaultBranch", "default_branch"], ["argocdNamespace", "argocd_namespace"]]
	v := input.parameters[param]
	is_string(v)
	v != ""
}

# violations turns a rule's findings (evaluated by the template's entry module
# with input as docs and the settings) into Gatekeeper violations, keeping those
# that involve the reviewed object.
violations(findings) := {{"msg": sprintf("[%s] %s", [f.rule, f.message]), "details": details(f)} |
	some f in findings
	not f.waived
	involves(f, review_ref)
}

involves(f, ref) if {
	some r in f.resources
	r.kind == ref.kind
	r.namespace == ref.namespace
	r.name == ref.name
}

involves(f, ref) if {
	ref.kind == "ApplicationSet"
	some r in f.resources
	r.generatedBy == sprintf("ApplicationSet %s/%s", [ref.namespace, ref.name])
}

details(f) := {
	"rule": f.rule,
	"severity": f.severity,
	"remediation": f.remediation,
	"resources": [sprintf("%s %s/%s", [r.kind, r.namespace, r.name]) | some r in f.resources],
}
