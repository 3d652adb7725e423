# METADATA
# title: Placement
# description: |
#   The namespace a Kargo document (Stage, PromotionTask, Warehouse) is applied
#   to: for a Stage, its project. Teams keep Kargo manifests without
#   `metadata.namespace` and apply them with `kubectl apply -n <project>` or
#   `kargo apply --project`, so the file alone may not say it. A document that
#   names its namespace is in it. For one that does not, the estate may give its
#   directory a namespace: the namespace the run applies namespace-less
#   manifests to (`config.namespace`, `flipflop check -n`), and the destination
#   namespace of each Argo CD Application that deploys the directory (Argo CD
#   puts a namespaced resource without a namespace in
#   `spec.destination.namespace`). When all of them give one namespace, the
#   document is in it; when they give none, or more than one (two Applications
#   deploying the directory into two namespaces, an Application whose
#   destination namespace is not known, `-n` and an Application that disagree),
#   its namespace is unknown, and nothing that depends on it is judged: which of
#   the copies a finding would be about cannot be told, and a pull request
#   could otherwise take another team's directory into its own namespace.
package lib.flipflop.placement

import data.lib.flipflop.apps
import data.lib.flipflop.config
import data.lib.flipflop.expr
import data.lib.flipflop.objects

# of(o) says where the document o ({obj, ref}) is applied: {"namespace",
# "from", "by", "given"}. from is "metadata", "setting" (config.namespace), or
# "application" (by: the keys of the Applications that deploy its directory);
# "" with namespace "" when nothing says it; "conflict" with namespace "" when
# the estate gives its directory several namespaces (by: the Applications that
# deploy it; given: each namespace given, as {"namespace", "by"}, sorted).
of(o) := {"namespace": o.ref.namespace, "from": "metadata", "by": [], "given": []} if {
	o.ref.namespace != ""
	config.namespace == ""
} else := {"namespace": o.ref.namespace, "from": "metadata", "by": [], "given": []} if {
	# With -n, ref.namespace is -n's unless the document names its own.
	objects.string_at(o.obj, ["metadata", "namespace"]) != ""
} else := decide(given(o.ref))

# given lists the namespaces the estate gives ref's directory, as {"namespace",
# "by", "app"}: -n's, then each deploying Application's destination namespace
# (an expression when it is not known).
given(ref) := array.concat(setting_given, [{"namespace": d.namespace, "by": d.by, "app": d.app} | some d in deployers(ref)])

default setting_given := []

setting_given := [{"namespace": config.namespace, "by": "-n", "app": ""}] if config.namespace != ""

# decide places a document from what is given: one known namespace, given by
# all, places it (the setting's when it gives one, else the Applications');
# none known leaves it unknown, as does more than one namespace, or a known one
# beside an unknown one (unknown never equals anything).
decide(gs) := {"namespace": "", "from": "", "by": [], "given": []} if {
	count([g | some g in gs; expr.known(g.namespace)]) == 0
} else := {"namespace": ns, "from": from_of(gs), "by": by_of(gs), "given": []} if {
	namespaces := {g.namespace | some g in gs}
	count(namespaces) == 1
	some ns in namespaces
} else := {
	"namespace": "",
	"from": "conflict",
	"by": sort({g.app | some g in gs; g.app != ""}),
	"given": [{"namespace": pair[0], "by": pair[1]} | some pair in sort({[g.namespace, g.by] | some g in gs})],
}

from_of(gs) := "setting" if {
	some g in gs
	g.app == ""
} else := "application"

by_of(gs) := [] if {
	from_of(gs) == "setting"
} else := sort({g.app | some g in gs})

# unplaced: whether some Kargo document names no namespace. The Applications'
# deployed paths are indexed only then.
unplaced if {
	some o in kargo_documents
	o.ref.namespace == ""
}

# With -n, a document that names no namespace has -n's in its ref.
unplaced if {
	config.namespace != ""
	some o in kargo_documents
	objects.string_at(o.obj, ["metadata", "namespace"]) == ""
}

kargo_documents := array.concat(array.concat(objects.stages, objects.promotion_tasks), objects.warehouses)

# deploys lists each path an Application source deploys (relative to its
# repository, cleaned) with the Application's key and destination namespace
# (an expression when it is not known: such an Application still deploys the
# directory, into a namespace nobody can tell); recurse is directory.recurse
# (the subdirectories are deployed too). Paths that are the repository's
# root, or not known, are left out: a root cannot be told apart from any other
# directory by its name. So is an Application without a destination namespace:
# Argo CD does not deploy a namespaced resource that names none ("Namespace
# for ... is missing").
deploys := [{"path": p, "app": a.key, "by": deployer(a), "namespace": ns, "recurse": recurse(s.fields)} |
	unplaced
	some a in apps.records
	ns := a.destination_namespace
	ns != ""
	some s in a.sources
	raw := object.get(s.fields, "path", "")
	expr.known(raw)
	p := clean(raw)
	p != ""
]

# deployer names an Application for messages: by its key, or, when an
# ApplicationSet generates it under a name flipflop cannot know, by the
# ApplicationSet.
deployer(a) := sprintf("an Application %s generates", [g]) if {
	not a.name_known
	g := object.get(a.ref, "generatedBy", "")
	g != ""
} else := sprintf("Application %s", [a.key])

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
