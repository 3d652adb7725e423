# METADATA
# title: An ApplicationSet generates more Applications than flipflop expands
# description: |
#   An ApplicationSet's generators would make more parameter sets (Applications)
#   than flipflop builds for one ApplicationSet (5,000), or the estate's
#   ApplicationSets would make more than it builds in all (10,000; the smaller
#   ApplicationSets are expanded first). A matrix multiplies its children: two
#   list generators of 200 elements make 40,000 Applications. flipflop does not
#   build them: it reads the ApplicationSet as if its generators were ones it
#   cannot know (like a cluster generator), so its Applications' values are
#   unknown, match nothing and prove nothing, and the rest of the estate is
#   checked as usual.
# related_resources:
#   - ref: https://argo-cd.readthedocs.io/en/stable/operator-manual/applicationset/Generators-Matrix/
#     description: Argo CD, the Matrix generator (every combination of its two children)
# custom:
#   id: oversized-applicationset
#   severity: warning
#   why: |
#     A matrix generator yields every combination of its two children's parameter
#     sets, and a matrix may nest another matrix, so a few kilobytes of list
#     elements can describe millions of Applications; Argo CD sets no limit and
#     tries to create them all. Expanding them would make a run's time and memory
#     grow with the product rather than with the input, so flipflop counts the
#     parameter sets of each ApplicationSet first, from the sizes of its list
#     generators (an upper bound: selectors and merge keys can only remove sets),
#     and builds none of an ApplicationSet that is over its bound. Contradictions
#     that involve its Applications are then neither found nor ruled out: their
#     repositories, revisions and names are unknown, and a Stage naming one of
#     them is not told that the Application does not exist.
#   remediation: |
#     If the ApplicationSet really is meant to generate that many Applications,
#     check the Kargo Stages that use them with the ApplicationSet split into
#     smaller ones (a generator per environment or team). If it is not, the matrix
#     combines more than intended: narrow its children (selectors, smaller lists) or
#     use a merge generator, which joins sets on keys instead of combining every
#     pair.
package lib.flipflop.rules.oversized_applicationset

import data.lib.flipflop.appsets
import data.lib.flipflop.result

report contains finding if {
	some o in appsets.oversized
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"ApplicationSet %s would generate up to %d Applications (parameter sets), %s",
				"Its Applications are read as if its generators could not be known:",
				"what they track and their names are unknown, so no finding depends on them.",
			]),
			[name(o.ref), o.size, over(o)],
		),
		[o.ref],
		sprintf("ApplicationSet/%s/%s", [o.ref.namespace, o.ref.name]),
		result.nothing,
		{
			"applicationSet": name(o.ref), "parameterSets": o.size, "bound": o.bound,
			"maxPerApplicationSet": appsets.max_per_appset, "maxTotal": appsets.max_total,
		},
	)
}

over(o) := sprintf("more than the %d flipflop builds for one ApplicationSet.", [appsets.max_per_appset]) if o.bound == "per-appset"

over(o) := sprintf(
	"and with it the ApplicationSets of this estate would generate more than the %d flipflop builds in all (the smaller ones were built first).",
	[appsets.max_total],
) if {
	o.bound == "total"
}

name(ref) := ref.name if ref.namespace == ""

name(ref) := sprintf("%s/%s", [ref.namespace, ref.name]) if ref.namespace != ""
