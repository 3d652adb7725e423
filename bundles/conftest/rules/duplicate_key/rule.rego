# METADATA
# title: A manifest repeats a key
# description: |
#   A Stage, PromotionTask, Application or other object flipflop reads repeats a
#   mapping key (two `steps:` in one PromotionTask, two `args:` in one step).
#   Kubernetes' decoder, and so `kubectl apply` and Argo CD, keep the last value and
#   silently drop the first; flipflop does the same and checks the object, but the
#   dropped value is usually not what the author meant. Reported by `flipflop check`
#   (conftest and Gatekeeper parse YAML themselves).
# related_resources:
#   - ref: https://yaml.org/spec/1.2.2/#mapping
#     description: YAML 1.2, mapping keys are unique
#   - ref: https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation
#     description: Kubernetes, field validation (duplicate fields)
# custom:
#   id: duplicate-key
#   severity: warning
#   why: |
#     YAML requires the keys of a mapping to be unique, but Kubernetes' YAML decoder
#     accepts a repeated key and keeps its last value, and Argo CD applies such a
#     manifest without complaint. Whatever the first occurrence held is gone: a
#     PromotionTask with two `steps:` runs only the second list, a step with two
#     `config:` uses only the second. flipflop keeps the last value too (so it checks
#     what Kargo and Argo CD will see) and warns at the repeated key, because the
#     file almost certainly does not say what its author meant.
#   remediation: |
#     Merge the two occurrences into one key (or delete the one that is not meant),
#     so that the file says what Kargo and Argo CD will use.
package lib.flipflop.rules.duplicate_key

import data.lib.flipflop.objects
import data.lib.flipflop.result

report contains finding if {
	some entry in input
	obj := entry.contents
	objects.read(obj)
	some d in entry.duplicateKeys

	# The finding points at the repeated key; documentLine keeps the line of the
	# document itself, which an annotation waiver is bound to (lib.flipflop.claims).
	ref := object.union(objects.ref(obj, entry), {"line": d.line, "documentLine": object.get(entry, "line", 0)})
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("%s %s repeats the key %q at line %d (first at line %d): the last value is used, as Kubernetes and Argo CD use it, and the first is ignored.", [
			ref.kind, name(ref), d.key, d.line, d.first,
		]),
		[ref],
		sprintf("%s:%d", [ref.file, d.line]),
		result.nothing,
		{"key": d.key, "line": d.line, "first": d.first},
	)
}

name(ref) := ref.name if ref.namespace == ""

name(ref) := sprintf("%s/%s", [ref.namespace, ref.name]) if ref.namespace != ""
