# METADATA
# title: Two documents define one object
# description: |
#   Two documents that differ define the same Kubernetes object: the same API group,
#   kind, namespace and name (a Stage, an Application, an ApplicationSet, a
#   PromotionTask, a ClusterPromotionTask or a Warehouse). Kubernetes keeps one
#   object under that name, so whichever document is applied last overwrites the
#   other, and which one that is depends on file order, sync order or who synced
#   last. Identical copies (a folder duplicated, a file given twice) are left alone:
#   whichever is applied, the object is the same. flipflop checks both documents
#   as they are written; a `flipflop.dev/ignore` annotation on either of them
#   waives nothing, since a copy of someone else's object could otherwise waive
#   findings about the original.
# related_resources:
#   - ref: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/
#     description: Kubernetes, object names and IDs (a name is unique per kind and namespace)
#   - ref: https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/
#     description: Argo CD, sync options (one resource managed by two Applications, SharedResourceWarning)
# custom:
#   id: duplicate-object
#   severity: error
#   why: |
#     Kubernetes names an object by its API group, kind, namespace and name. Two
#     documents with the same four are two versions of one object, not two objects:
#     `kubectl apply` applies both and the last one wins; Argo CD keeps the last one
#     when one Application's manifests repeat it ("Resource ... appeared 2 times among
#     application resources", RepeatedResourceWarning), and when two Applications
#     each hold one, every sync of either overwrites the other (SharedResourceWarning).
#     A Stage or Application defined twice therefore flips between two definitions,
#     and a check of either one alone says nothing about the object that runs.
#
#     The second document is also a way to speak for someone else's object: a short
#     copy of another project's Stage carrying a `flipflop.dev/ignore` annotation, in a
#     file its owners do not review, would otherwise waive the findings about the
#     real Stage. flipflop binds an annotation to the document that carries it (it
#     counts only for findings whose facts come from that document) and ignores the
#     annotations of every document of an object defined twice.
#
#     A namespaced object written without `metadata.namespace` lands in the namespace
#     it is applied to, which the files do not say: two such documents collide only
#     when one file (one render) holds both, and never with a document that names its
#     namespace. flipflop reads its inputs as one estate, one Kargo and one Argo CD:
#     folders for separate clusters, each with its own Argo CD and an Application of
#     the same name, are separate estates and are checked one at a time.
#   remediation: |
#     Keep one definition of the object: delete the other document, or give it its
#     own name (or namespace) if it was meant to be a separate object.
package lib.flipflop.rules.duplicate_object

import data.lib.flipflop.claims
import data.lib.flipflop.result

report contains finding if {
	some claim in claims.by_identity
	refs := claim.refs
	first := refs[0]
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"%s %s is defined by %d documents that differ: Kubernetes keeps one object under that name, so the one applied last overwrites the others.",
				"flipflop checks each as written, and the flipflop.dev/ignore annotations of these documents waive nothing.",
			]),
			[first.kind, name(first), claim.documents],
		),
		result.refs(refs),
		key(first),
		subject(first),
		{"kind": first.kind, "namespace": first.namespace, "name": first.name, "documents": [place(r) | some r in refs]},
	)
}

name(ref) := ref.name if ref.namespace == ""

name(ref) := sprintf("%s/%s", [ref.namespace, ref.name]) if ref.namespace != ""

# key names the object: Kind/namespace/name, and the file for an object whose
# namespace is not written.
key(ref) := sprintf("%s/%s/%s", [ref.kind, ref.namespace, ref.name]) if claims.known_namespace(ref)

key(ref) := sprintf("%s//%s (%s)", [ref.kind, ref.name, ref.file]) if not claims.known_namespace(ref)

place(r) := sprintf("%s:%d", [r.file, r.line]) if r.line > 0

place(r) := r.file if r.line <= 0

# subject names a Stage or an Application (with its namespace written) by its
# model key, for tools that join findings on the model.
subject(ref) := result.about([], [name(ref)], [], [], []) if {
	ref.kind == "Stage"
	ref.namespace != ""
} else := result.about([], [], [name(ref)], [], []) if {
	ref.kind == "Application"
	ref.namespace != ""
} else := result.nothing
