# METADATA
# title: An ApplicationSet generates more Applications than flipflop expands
# description: |
#   An ApplicationSet's generators would make more parameter sets (Applications)
#   than flipflop builds for one ApplicationSet (5,000), or Applications whose
#   templates would render to more text than it renders for one ApplicationSet
#   (5,000 x 2 KiB, about 10 MB: a parameter set counts as one Application per
#   2 KiB of text), or the estate's ApplicationSets would make more than it
#   builds in all (10,000 such Applications, about 20 MB; the smaller
#   ApplicationSets are expanded first). A matrix multiplies its children: two
#   list generators of 200 elements make 40,000 Applications, and 5,000
#   Applications of a 16 KB template are 80 MB of text. flipflop does not build
#   them: it reads the ApplicationSet as if its generators were ones it cannot
#   know (like a cluster generator), so its Applications' values are unknown,
#   match nothing and prove nothing, and the rest of the estate is checked as
#   usual. When even rendering each of its distinct templates once would cost
#   more than eight times the text of its templates (a large spec.template
#   under thousands of generators with templates of their own), nothing of it
#   is rendered: one Application whose name, metadata and source are all
#   unknown stands for it. With --repo-root, the git generators of a run are
#   expanded from the checkout within one budget (20,000 parameter sets,
#   --max-file-size bytes of parameters, 4,000,000 paths matched), in the order
#   of the files: those past it are read as git generators whose parameters
#   cannot be known, and their ApplicationSets are named here too.
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
#     tries to create them all. Each of them is its template rendered with its
#     parameters, so a large template, or a long value in many placeholders,
#     multiplies again. Expanding them would make a run's time and memory grow
#     with the product rather than with the input, so flipflop counts the
#     parameter sets of each ApplicationSet first, from the sizes of its list
#     generators, and the text they render to, from its templates' size and
#     placeholders and its longest value (upper bounds: selectors and merge keys
#     can only remove sets), and builds none of an ApplicationSet that is over
#     its bound. Contradictions that involve its Applications are then neither
#     found nor ruled out: their repositories, revisions and names are unknown,
#     and a Stage naming one of them is not told that the Application does not
#     exist.
#   remediation: |
#     If the ApplicationSet really is meant to generate that many Applications,
#     check the Kargo Stages that use them with the ApplicationSet split into
#     smaller ones (a generator per environment or team). If it is not, the matrix
#     combines more than intended: narrow its children (selectors, smaller lists) or
#     use a merge generator, which joins sets on keys instead of combining every
#     pair. A template that renders to more than 2 KiB per Application (large
#     inline Helm values) counts as several Applications: move the values into
#     the repository (a values file) to keep the template small.
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
				"what they track and their names are unknown, so no finding depends on them.%s",
			]),
			[name(o.ref), o.size, over(o), templates(o)],
		),
		[o.ref],
		sprintf("ApplicationSet/%s/%s", [o.ref.namespace, o.ref.name]),
		result.nothing,
		{
			"applicationSet": name(o.ref), "parameterSets": o.size, "bound": o.bound,
			"maxPerApplicationSet": appsets.max_per_appset, "maxTotal": appsets.max_total,
			"renderedBytes": o.bytes, "maxBytesPerApplicationSet": appsets.max_bytes_per_appset,
			"maxTotalBytes": appsets.max_total_bytes, "templatesRendered": o.templates_rendered,
		},
	)
}

report contains finding if {
	some o in appsets.not_expanded
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"ApplicationSet %s: %d of its git generators were not expanded from --repo-root: with them, the git generators",
				"of this run would expand into more than the %d %s flipflop expands from checkouts in one run.",
				"They are read as git generators whose parameters cannot be known (as without --repo-root):",
				"what their Applications track and their names are unknown, so no finding depends on them.",
			]),
			[name(o.ref), o.generators, o.bound.limit, o.bound.bound],
		),
		[o.ref],
		sprintf("ApplicationSet/%s/%s/repo-root", [o.ref.namespace, o.ref.name]),
		result.nothing,
		{
			"applicationSet": name(o.ref), "bound": "repo-root", "gitGenerators": o.generators,
			"repoRootBound": o.bound.bound, "repoRootLimit": o.bound.limit,
		},
	)
}

over(o) := sprintf("more than the %d flipflop builds for one ApplicationSet.", [appsets.max_per_appset]) if o.bound == "per-appset"

over(o) := sprintf(
	"whose templates would render to up to %d bytes, more than the %d flipflop renders for one ApplicationSet.",
	[o.bytes, appsets.max_bytes_per_appset],
) if {
	o.bound == "per-appset-bytes"
}

over(o) := sprintf(
	concat(" ", [
		"and with it the ApplicationSets of this estate would generate more than the %d flipflop builds in all",
		"(an Application counting once for every %d bytes its template renders to; the smaller ones were built first).",
	]),
	[appsets.max_total, appsets.unit_bytes],
) if {
	o.bound == "total"
}

templates(o) := "" if o.templates_rendered

templates(o) := sprintf(
	concat(" ", [
		" Its templates were not rendered either: rendering each of them once would cost more than %d times their",
		"own text, so one Application whose name, metadata and source are unknown stands for them.",
	]),
	[appsets.max_unknown_ratio],
) if {
	not o.templates_rendered
}

name(ref) := ref.name if ref.namespace == ""

name(ref) := sprintf("%s/%s", [ref.namespace, ref.name]) if ref.namespace != ""
