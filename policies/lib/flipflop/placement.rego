# METADATA
# title: Placement
# description: |
#   The namespace a Kargo document (Stage, PromotionTask, Warehouse) is applied
#   to: for a Stage, its project. Teams keep Kargo manifests without
#   `metadata.namespace` and apply them with `kubectl apply -n <project>` or
#   `kargo apply --project`, so the file alone may not say it. In order:
#   `metadata.namespace`; the namespace the run applies namespace-less
#   manifests to (`config.namespace`, `flipflop check -n`); the destination
#   namespace of the Argo CD Applications that deploy the document's
#   directory, when they all name one (Argo CD puts a namespaced resource
#   without a namespace in `spec.destination.namespace`); otherwise unknown,
#   and nothing that depends on it is judged.
package lib.flipflop.placement

import data.lib.flipflop.apps
import data.lib.flipflop.config
import data.lib.flipflop.expr
import data.lib.flipflop.objects

# of(o) says where the document o ({obj, ref}) is applied: {"namespace",
# "from", "by"}. from is "metadata", "setting" (config.namespace), or
# "application" (by: the keys of the Applications that deploy its directory);
# "" with namespace "" when nothing says it.
of(o) := {"namespace": o.ref.namespace, "from": written_from(o.obj), "by": []} if {
	o.ref.namespace != ""
} else := {"namespace": ns, "from": "application", "by": sort({d.app | some d in found})} if {
	found := deployers(o.ref)
	namespaces := {d.namespace | some d in found}
	count(namespaces) == 1
	some ns in namespaces
} else := {"namespace": "", "from": "", "by": []}

written_from(obj) := "metadata" if {
	config.namespace == ""
} else := "metadata" if {
	objects.string_at(obj, ["metadata", "namespace"]) != ""
} else := "setting"

# unplaced: whether some Kargo document names no namespace. The Applications'
# deployed paths are indexed only then.
unplaced if {
	some o in array.concat(array.concat(objects.stages, objects.promotion_tasks), objects.warehouses)
	o.ref.namespace == ""
}

# deploys lists each path an Application source deploys (relative to its
# repository, cleaned) with the Application's key and destination namespace;
# recurse is directory.recurse (the subdirectories are deployed too). Paths
# that are the repository's root, or not known, are left out: a root cannot be
# told apart from any other directory by its name.
deploys := [{"path": p, "app": a.key, "namespace": ns, "recurse": recurse(s.fields)} |
	unplaced
	some a in apps.records
	ns := a.destination_namespace
	expr.known(ns)
	ns != ""
	some s in a.sources
	raw := object.get(s.fields, "path", "")
	expr.known(raw)
	p := clean(raw)
	p != ""
]

by_path := {p: group |
	some p in {d.path | some d in deploys}
	group := [d | some d in deploys; d.path == p]
}

recurse(fields) if {
	fields.directory.recurse == true
} else := false

# clean drops a leading "./" (repeated), a leading "/" and a trailing "/":
# "./kargo/" and "kargo" name one directory; "" and "." the root.
clean(p) := "" if {
	trimmed(p) == "."
} else := trimmed(p)

trimmed(p) := trim(regex.replace(p, `^(\./)+`, ""), "/")

# directory is where a document's file lies, relative to wherever the run was
# started or absolute; for a rendered document, the directory that was
# rendered (the one an Application points at).
directory(ref) := clean(trim_prefix(rendered, concat("", [tool, " "]))) if {
	rendered := object.get(ref, "renderedBy", "")
	some tool in ["kustomize", "helm"]
	startswith(rendered, concat("", [tool, " "]))
} else := clean(regex.replace(object.get(ref, "file", ""), `/?[^/]*$`, ""))

# deployers lists the deploys that reach ref's directory d: a path that is d,
# or that d ends with after a "/" (the run may have started above or inside
# the repository), or, with recurse, such a path of a directory above d.
deployers(ref) := [d |
	unplaced
	dir := directory(ref)
	dir != ""
	parts := split(dir, "/")
	some j in numbers.range(1, count(parts))
	some i in numbers.range(0, j - 1)
	key := concat("/", array.slice(parts, i, j))
	some d in object.get(by_path, key, [])
	reaches(d, j, count(parts))
]

reaches(_, j, n) if j == n

reaches(d, j, n) if {
	j < n
	d.recurse
}
