# METADATA
# title: Claims
# description: |
#   Which documents claim one Kubernetes object. Kubernetes names an object by its
#   API group, kind, namespace and name (the version is not part of it): two
#   documents with the same four define one object, and `kubectl apply` or Argo CD
#   leaves whichever was applied last. The model reads every document on its own
#   (each becomes its own Stage or Application record, named in findings by its own
#   file and line); this library says which of them claim an object another
#   document claims too, for the duplicate-object rule and for the waivers (an
#   annotation on such a document waives nothing).
#
#   A namespaced object without `metadata.namespace` lands in whatever namespace
#   it is applied to, which the files do not say: such a document claims an object
#   another namespace-less document claims only when both come from one file (and
#   one render): a file is applied to one namespace. It never collides with a
#   document that names its namespace. Documents that say the same thing (one file
#   given twice, a folder copied whole) leave Kubernetes with the same object
#   whichever is applied last: only documents that differ are a duplicate.
package lib.flipflop.claims

import data.lib.flipflop.objects

# cluster_scoped are the kinds the model reads that have no namespace.
cluster_scoped := {"ClusterPromotionTask"}

# identity is the key of the object a document claims: [kind, name, namespace,
# scope], where the namespace is "" for a cluster-scoped kind and the scope,
# for a namespaced document without a namespace, is its file and render
# ([] otherwise). The API group is not in it: every kind the model reads has
# one group (objects.read_kinds), and the version is no part of an object's
# name. Undefined when the name is "".
identity(ref) := [ref.kind, ref.name, ref.namespace, []] if {
	# The common case first: a namespaced document that names its namespace.
	ref.namespace != ""
	ref.name != ""
	not cluster_namespace[ref.kind]
} else := [ref.kind, ref.name, ns, object.get({"": [ref.file, object.get(ref, "renderedBy", "")]}, ns, [])] if {
	ref.name != ""
	ns := object.get(cluster_namespace, ref.kind, ref.namespace)
}

# cluster_namespace stands for the namespace of a cluster-scoped object: not ""
# (unknown), since the object has none to be given.
cluster_namespace := {"ClusterPromotionTask": "(cluster-scoped)"}

known_namespace(ref) if ref.kind in cluster_scoped

known_namespace(ref) if ref.namespace != ""

# identities lists every document that names an object, with the object it
# claims and its index in objects.docs.
identities := [{"id": identity(o.ref), "i": i} | some i, o in objects.docs]

claimed := {c.id | some c in identities}

# by_identity maps each object that documents of differing content claim to
# how many documents claim it and their refs (distinct, sorted by file and
# line). When no two documents claim one object (fewer distinct claims than
# claiming documents is the only way there can be a group), nothing is grouped.
# Readings of one document by different kustomizations (a base built on its
# own and as an overlay patches it) are not two documents: which of them an
# Application applies is not in the files, and an estate that applies both is
# unknown, so they are not grouped.
by_identity := {id: {"documents": count(group), "refs": sorted} |
	count(claimed) < count(identities)
	some id in claimed
	group := [c.i | some c in identities; c.id == id]
	count(group) > 1
	count({objects.docs[i].obj | some i in group}) > 1
	not readings_of_one_document(group)
	sorted := [p[1] | some p in sort({[ref_key(r), r] | some i in group; r := objects.docs[i].ref})]
}

# readings_of_one_document is true when every document of group was rendered
# from one line of one file (a line is known: conftest gives none, and two
# documents of one file are then told apart by nothing).
readings_of_one_document(group) if {
	every i in group {
		objects.docs[i].ref.line > 0
		objects.docs[i].ref.renderedBy != ""
	}
	count({[r.file, r.line] | some i in group; r := objects.docs[i].ref}) == 1
}

ref_key(r) := [r.file, object.get(r, "line", 0), object.get(r, "renderedBy", ""), r.apiVersion, r.namespace]

# contested is true when the document ref names claims an object that another
# document, which differs from it, claims too; else false.
contested(ref) if {
	by_identity[identity(ref)]
} else := false

# doc_key names one document exactly: kind, namespace and name as the finding
# shows them, file, line (documentLine when a finding points inside the
# document), and the render or ApplicationSet it came from.
doc_key(ref) := concat("\u0000", [
	object.get(ref, "kind", ""), object.get(ref, "namespace", ""), object.get(ref, "name", ""),
	object.get(ref, "file", ""), sprintf("%v", [object.get(ref, "documentLine", object.get(ref, "line", 0))]),
	object.get(ref, "renderedBy", ""), object.get(ref, "generatedBy", ""),
])
