# METADATA
# title: Object with a field of the wrong type
# description: |
#   An object does not meet its kind's CRD: a field of the wrong type
#   (`spec.source: 42`, `apps: "x"`, an unquoted `targetRevision: 1.0`), an
#   Application without `spec`, a value the CRD's enum, pattern or bounds do not
#   allow. The API server rejects such an object when it is applied; flipflop
#   reads around it, but cannot check what the field should have said, so a
#   contradiction could hide there. Every object the model reads is validated
#   against the CRD of Kargo's and Argo CD's release (lib.flipflop.validation),
#   every field at any depth.
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
#     so these objects would be rejected by `kubectl apply` or by Argo CD's sync
#     (`The Application "<name>" is invalid: ...`). A field that is not required may be
#     null (the API server drops it). A Stage's step `config` is opaque to the Stage CRD
#     (`x-kubernetes-preserve-unknown-fields`): Kargo checks it against the step's own
#     schema when a promotion runs the step, and `invalid-step-config` reports it. Either
#     way flipflop reads around the field, and a contradiction it would have caused stays
#     hidden until the field is fixed.
#   remediation: |
#     Fix the field to the type the CRD expects (see the message), or exclude the
#     file from the check if it is not a real manifest (e.g. a Helm template).
package lib.flipflop.rules.invalid_object

import data.lib.flipflop.kind_schemas
import data.lib.flipflop.legacy
import data.lib.flipflop.objects
import data.lib.flipflop.result
import data.lib.flipflop.validation

report contains finding if {
	some p in object_problems
	ref := p.ref
	field := validation.dotted(p.path)
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("%s %s/%s: %s (%s's %s CRD, at %s); flipflop reads around it, so what it should say is not checked.", [
			ref.kind, ref.namespace, ref.name, validation.text(field, p, {"missing": "is missing", "unknown": "is not a field it has"}), p.version, ref.kind, validation.pointer(p.path),
		]),
		[ref],
		sprintf("%s/%s/%s|%s", [ref.kind, ref.namespace, ref.name, field]),
		result.nothing,
		{"field": field, "want": p.want, "got": p.got, "problem": p.problem, "pointer": validation.pointer(p.path), "version": p.version},
	)
}

# object_problems lists what is wrong with each object as written, against
# its kind's CRD: {"ref", "version", "path" (keys and indices), "problem"
# ("type", "missing", "unknown", "pattern", or the validator's name of the
# keyword that failed), "want", "got" (a JSON type, "missing", or "")}
# (validation.problems). Only this rule reads the CRDs' schemas.
object_problems := [object.union(p, {"ref": group[i].ref, "version": k.version}) |
	some kind, k in kind_schemas.kinds
	group := objects.by_kind[kind]
	count(group) > 0
	some [i, p] in validation.problems([o.obj | some o in group], k, kind_schemas.definitions)
	not legacy_shape(kind, group[i].obj, p)
]

# legacy_shape: a Stage written for Kargo v0.8 or earlier, which the model
# reads too unless the run names a later Kargo (legacy.read), asks for its
# Freight through spec.subscriptions: requestedFreight, which the newest CRD
# requires, came later. (Its legacy fields are Kargo v0.8's, not validated.)
legacy_shape("Stage", obj, p) if {
	p.problem == "missing"
	p.path == ["spec", "requestedFreight"]
	legacy.read
	some field in ["subscriptions", "promotionMechanisms"]
	obj.spec[field]
}
