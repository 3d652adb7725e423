# METADATA
# title: Gatekeeper adapter
# description: |
#   Turns a Gatekeeper review into the model's input: the reviewed object plus the
#   synced inventory of Applications, ApplicationSets, Stages, PromotionTasks,
#   Warehouses and ClusterPromotionTasks (the reviewed object's stale inventory
#   copy excluded), runs one rule, and keeps the findings that involve the
#   reviewed object.
#   Settings come from the constraint's parameters (defaultBranch, argocdNamespace,
#   annotationWaivers: false to ignore flipflop.dev/ignore annotations).
#   Findings waived by a flipflop.dev/ignore annotation are not violations.
package lib.flipflop.gatekeeper

import data.lib.flipflop.repo

# The inventory paths read: one per kind the model needs, nothing wider.
namespaced := [
	["argoproj.io/v1alpha1", "Application"],
	["argoproj.io/v1alpha1", "ApplicationSet"],
	["kargo.akuity.io/v1alpha1", "Stage"],
	["kargo.akuity.io/v1alpha1", "PromotionTask"],
	["kargo.akuity.io/v1alpha1", "Warehouse"],
]

# The cluster-scoped inventory paths read.
cluster_scoped := [["kargo.akuity.io/v1alpha1", "ClusterPromotionTask"]]

review := input.review.object

review_ref := {"kind": review.kind, "namespace": object.get(review, ["metadata", "namespace"], ""), "name": review.metadata.name}

# docs is the model's input: conftest's combined shape. Only the inventory
# objects that can take part in a finding about the reviewed object go in:
# those that mention one of its repositories (every finding is about one
# repository's pointers and writes), and the tasks and Stages that reach them.
# Gatekeeper keeps nothing between reviews, so this keeps a review's cost to
# the related objects plus one cheap pass over the inventory.
docs := array.concat([{"path": "admission review", "contents": review}], related)

inventory := array.concat(
	[{"path": "inventory", "contents": o} |
		some [gv, kind] in namespaced
		some ns, name
		o := data.inventory.namespace[ns][gv][kind][name]
		not same(review_ref, kind, ns, name)
	],
	[{"path": "inventory", "contents": o} |
		some [gv, kind] in cluster_scoped
		some name
		o := data.inventory.cluster[gv][kind][name]
		not same(review_ref, kind, "", name)
	],
)

# texts pairs each inventory entry with the text searched for repositories and
# names, lower case, once: an Application's repository URLs and name (cheap),
# the whole JSON text of anything else.
texts := [[e, text_of(e.contents)] | some e in inventory]

text_of(o) := lower(concat(" ", array.concat([sprintf("%q", [o.metadata.name])], app_urls(o)))) if {
	o.kind == "Application"
	is_string(o.metadata.name)
} else := lower(json.marshal(o))

array_at(o, path) := v if {
	v := object.get(o, path, [])
	is_array(v)
} else := []

app_urls(o) := [u |
	some u in array.concat(
		[
			object.get(o, ["spec", "source", "repoURL"], ""),
			object.get(o, ["spec", "sourceHydrator", "drySource", "repoURL"], ""),
			object.get(o, ["spec", "sourceHydrator", "syncSource", "repoURL"], ""),
		],
		[src.repoURL | some src in array_at(o, ["spec", "sources"])],
	)
	is_string(u)
]

task_kinds := {"PromotionTask", "ClusterPromotionTask"}

# The tasks the reviewed object names, and the repositories it and they mention.
review_text := lower(json.marshal(review))

# reviewer_text is the reviewed object's text and its tasks'.
reviewer_text := concat("\n", array.concat([review_text], [lower(json.marshal(t)) | some t in review_tasks]))

review_tasks := [e.contents |
	some [e, _] in texts
	e.contents.kind in task_kinds
	contains(review_text, sprintf("%q", [lower(e.contents.metadata.name)]))
]

repos := {id |
	some obj in array.concat([review], review_tasks)
	walk(obj, [_, v])
	is_string(v)
	regex.match(`^([a-zA-Z][a-zA-Z0-9+.-]*://|[^@/\s]+@[^:/\s]+:)`, v)
	id := repo.id(v)
	id != ""
}

# needles are the spellings of those repositories as they appear in text:
# host/path (https, ssh://) and host:path (scp form).
needles := repos | {concat(":", [parts[0], concat("/", array.slice(parts, 1, count(parts)))]) |
	some id in repos
	parts := split(id, "/")
	count(parts) > 1
}

mentions_repo(text) if {
	some n in needles
	contains(text, n)
}

# Tasks that mention a repository, and the names Stages would reach them by.
related_task_names := {sprintf("%q", [lower(e.contents.metadata.name)]) |
	some [e, text] in texts
	e.contents.kind in task_kinds
	mentions_repo(text)
}

related := [e |
	some [e, text] in texts
	relevant(e.contents, text)
]

relevant(_, text) if mentions_repo(text)

# Applications the reviewed Stage (or its tasks) names, and Stages that name
# the reviewed Application: argocd-update reaches Applications by name.
relevant(obj, _) if {
	obj.kind == "Application"
	review.kind == "Stage"
	contains(reviewer_text, sprintf("%q", [lower(obj.metadata.name)]))
}

relevant(obj, text) if {
	obj.kind == "Stage"
	review.kind == "Application"
	contains(text, sprintf("%q", [lower(review.metadata.name)]))
}

relevant(obj, text) if {
	obj.kind == "Stage"
	some name in related_task_names
	contains(text, name)
}

same(ref, kind, ns, name) if {
	kind == ref.kind
	ns == ref.namespace
	name == ref.name
}

settings := object.union(
	{k: v |
		some [param, k] in [["defaultBranch", "default_branch"], ["argocdNamespace", "argocd_namespace"]]
		v := input.parameters[param]
		is_string(v)
		v != ""
	},
	{"annotation_waivers": false | input.parameters.annotationWaivers == false},
)

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
