# METADATA
# title: Objects
# description: |
#   The input every host hands the model: conftest's `--combine` array
#   `[{path, contents}]` (one entry per YAML document; the Go evaluator adds `line`).
#   `null` contents are skipped, `List` documents are expanded, and every object
#   carries a `ref` naming it and where it came from.
package lib.flipflop.objects

# docs lists every Kubernetes object of the input as {"obj", "ref"}.
docs := [o |
	some entry in input
	is_object(entry.contents)
	relevant(entry.contents)
	some o in expand(entry)
	relevant_kinds[o.ref.kind]
]

# The kinds the model reads; every other object is dropped before any work.
relevant_kinds := {"Application", "ApplicationSet", "Stage", "PromotionTask", "ClusterPromotionTask"}

relevant(doc) if relevant_kinds[doc.kind]

relevant(doc) if is_list(doc)

expand(entry) := [{"obj": entry.contents, "ref": ref(entry.contents, entry)}] if not is_list(entry.contents)

expand(entry) := [{"obj": item, "ref": ref(item, entry)} | some item in entry.contents.items; is_object(item)] if is_list(entry.contents)

is_list(doc) if {
	is_string(doc.kind)
	endswith(doc.kind, "List")
	is_array(doc.items)
}

# ref names an object in findings: apiVersion, kind, namespace, name, file and line.
ref(obj, entry) := {
	"apiVersion": str(obj, ["apiVersion"]),
	"kind": str(obj, ["kind"]),
	"namespace": str(obj, ["metadata", "namespace"]),
	"name": str(obj, ["metadata", "name"]),
	"file": object.get(entry, "path", ""),
	"line": object.get(entry, "line", 0),
}

str(obj, path) := v if {
	v := object.get(obj, path, "")
	is_string(v)
} else := ""

# group returns the API group of an apiVersion ("" for the core group).
group(api_version) := g if {
	parts := split(api_version, "/")
	count(parts) == 2
	g := parts[0]
} else := ""

of_kind(group_name, kind) := [o |
	some o in docs
	o.ref.kind == kind
	group(o.ref.apiVersion) == group_name
]

applications := of_kind("argoproj.io", "Application")

application_sets := of_kind("argoproj.io", "ApplicationSet")

stages := of_kind("kargo.akuity.io", "Stage")

promotion_tasks := of_kind("kargo.akuity.io", "PromotionTask")

cluster_promotion_tasks := of_kind("kargo.akuity.io", "ClusterPromotionTask")

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
