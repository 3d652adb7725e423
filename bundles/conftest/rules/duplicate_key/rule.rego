# METADATA
# title: A manifest repeats a key
# description: |
#   A Stage, PromotionTask, Application or other object flipflop reads repeats a
#   mapping key (two `steps:` in one PromotionTask, two `args:` in one step, or a
#   `vars` entry that lost its `- ` and so repeats `name:` and `value:`; the keys one
#   mapping repeats are one finding).
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
	keys := entry.duplicateKeys
	obj := entry.contents
	objects.read(obj)
	some m in {mapping(d) | some d in keys}

	# The keys one mapping repeats are one mistake (most often a list entry
	# that lost its "- " and took the next entry's keys): one finding, at the
	# first repeated key, in line order.
	dups := sort([[d.line, d.first, d.key] | some d in keys; mapping(d) == m])
	line := dups[0][0]

	# The finding points at the repeated key; documentLine keeps the line of the
	# document itself, which an annotation waiver is bound to (lib.flipflop.claims).
	ref := object.union(objects.ref(obj, entry), {"line": line, "documentLine": object.get(entry, "line", 0)})
	finding := result.fail(
		rego.metadata.chain(),
		message(ref, dups),
		[ref],
		sprintf("%s:%d", [ref.file, line]),
		result.nothing,
		details(dups),
	)
}

# mapping places the mapping that repeats a key; a host that does not say
# (an older one) gives each repeated key its own.
mapping(d) := d.mapping if is_array(d.mapping)

else := [d.line, -1]

message(ref, dups) := sprintf(
	"%s %s repeats the key %q at line %d (first at line %d): the last value is used, as Kubernetes and Argo CD use it, and the first is ignored.",
	[ref.kind, name(ref), dups[0][2], dups[0][0], dups[0][1]],
) if {
	count(dups) == 1
} else := sprintf(
	concat(" ", [
		"%s %s repeats the keys %s in one mapping at lines %s (first at lines %s): the last values are used,",
		"as Kubernetes and Argo CD use them, and the first are ignored. If the second ones were meant as another list entry, it lacks its \"- \".",
	]),
	[ref.kind, name(ref), concat(", ", [sprintf("%q", [d[2]]) | some d in dups]), concat(", ", [format_int(d[0], 10) | some d in dups]), concat(", ", [format_int(d[1], 10) | some d in dups])],
)

# details name the first repeated key and, when the mapping repeats more, all
# of them.
details(dups) := {"key": dups[0][2], "line": dups[0][0], "first": dups[0][1]} if {
	count(dups) == 1
} else := {
	"key": dups[0][2], "line": dups[0][0], "first": dups[0][1],
	"keys": [{"key": d[2], "line": d[0], "first": d[1]} | some d in dups],
}

name(ref) := ref.name if ref.namespace == ""

name(ref) := sprintf("%s/%s", [ref.namespace, ref.name]) if ref.namespace != ""
