# METADATA
# title: Objects
# description: |
#   The input every host hands the model: conftest's `--combine` array
#   `[{path, contents}]` (one entry per YAML document; the Go evaluator adds `line`).
#   `null` contents are skipped, `List` documents are expanded, and every object
#   carries a `ref` naming it and where it came from.
package lib.flipflop.objects

import data.lib.flipflop.config

# docs lists every Kubernetes object of the input the model reads, as
# {"obj", "ref"}; every other object is dropped before any work is done on it.
docs := array.concat(
	[{"obj": c, "ref": ref(c, entry)} |
		some entry in input
		c := entry.contents
		read(c)
	],
	[{"obj": item, "ref": ref(item, entry)} |
		some entry in input
		c := entry.contents
		is_array(c.items)
		is_string(c.kind)
		endswith(c.kind, "List")
		some item in c.items
		read(item)
	],
)

# The kinds the model reads, with the prefix their apiVersion must have.
read_kinds := {
	"Application": "argoproj.io/",
	"ApplicationSet": "argoproj.io/",
	"Stage": "kargo.akuity.io/",
	"PromotionTask": "kargo.akuity.io/",
	"ClusterPromotionTask": "kargo.akuity.io/",
	"Warehouse": "kargo.akuity.io/",
}

read(doc) if {
	is_string(doc.apiVersion)
	startswith(doc.apiVersion, read_kinds[doc.kind])
}

# ref names an object in findings: apiVersion, kind, namespace, name, file and
# line (and renderedBy, for an object a Helm chart or kustomization rendered).
ref(obj, entry) := object.union(
	{
		"apiVersion": obj.apiVersion,
		"kind": obj.kind,
		"namespace": namespace(obj),
		"name": str(obj, ["metadata", "name"]),
		"file": str(entry, ["path"]),
		"line": object.get(entry, "line", 0),
	},
	rendered_by(entry),
)

# namespace is the document's metadata.namespace, else the namespace the run
# applies namespace-less manifests to (config.namespace; "" when it names none,
# and for a cluster-scoped kind).
namespace(obj) := str(obj, ["metadata", "namespace"]) if {
	config.namespace == ""
} else := ns if {
	ns := str(obj, ["metadata", "namespace"])
	ns != ""
} else := config.namespace if {
	obj.kind != "ClusterPromotionTask"
} else := ""

rendered_by(entry) := {"renderedBy": entry.renderedBy} if {
	is_string(entry.renderedBy)
	entry.renderedBy != ""
} else := {}

str(obj, path) := v if {
	v := object.get(obj, path, "")
	is_string(v)
} else := ""

# by_kind groups the objects by kind, all kinds at once: OPA indexes a
# comprehension in a rule body by the variable it closes over (k), so the
# objects are read once, not once per kind, but only within one evaluation
# of the rule: each kind looked up by itself (by_kind.Stage) would build the
# index again (80,000 evaluations on a 10,000-object estate, 10,000 this way).
# Only the kinds the input holds are keys: a kind the index has no entry for
# would read every object again.
by_kind := {k: group | some k, group in kind_groups}

kind_groups[k] := group if {
	some k in {o.ref.kind | some o in docs}
	group := [o | some o in docs; o.ref.kind == k]
}

applications := object.get(by_kind, "Application", [])

application_sets := object.get(by_kind, "ApplicationSet", [])

stages := object.get(by_kind, "Stage", [])

promotion_tasks := object.get(by_kind, "PromotionTask", [])

cluster_promotion_tasks := object.get(by_kind, "ClusterPromotionTask", [])

warehouses := object.get(by_kind, "Warehouse", [])

# value_at reads a path from an object, returning def when it is absent or null.
value_at(obj, path, def) := v if {
	is_object(obj)
	v := object.get(obj, path, null)
	v != null
} else := def

# array_at returns the array at path, or [] when it is absent or not an array.
array_at(obj, path) := v if {
	is_object(obj)
	v := object.get(obj, path, [])
	is_array(v)
} else := []

# object_at returns the object at path, or {} when it is absent or not an object.
object_at(o, path) := v if {
	is_object(o)
	v := object.get(o, path, {})
	is_object(v)
} else := {}

# string_at returns the string at path, or "" when it is absent or not a string.
string_at(o, path) := v if {
	is_object(o)
	v := object.get(o, path, "")
	is_string(v)
} else := ""
