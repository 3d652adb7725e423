# The bounds on how many Applications an ApplicationSet is expanded into
# (appsets.rego, Bounds; docs/model.md).
package lib.flipflop.appsets_bounds_test

import data.flipflop
import data.lib.flipflop.appsets
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model

elements_of(elements) := {"list": {"elements": elements}}

# numbered lists n objects {key: "i"}. The key goes in through object.union:
# the type checkers of OPA 1.0 and 1.7 (the support floor, Gatekeeper 3.20's)
# reject an object literal with a variable key built in a function's head.
numbered(key, n) := [object.union({}, {key: sprintf("%d", [i])}) | some i in numbers.range(1, n)]

grid_template := {
	"metadata": {"name": "grid-{{.x}}-{{.y}}", "annotations": {"kargo.akuity.io/authorized-stage": "acme:{{.x}}"}},
	"spec": {"source": {"repoURL": f.repo, "targetRevision": "env/{{.x}}", "path": "{{.y}}"}},
}

grid(name, nx, ny) := f.application_set("apps", name, {"goTemplate": true, "template": grid_template, "generators": [{"matrix": {"generators": [
	elements_of(numbered("x", nx)),
	elements_of(numbered("y", ny)),
]}}]})

# A matrix is counted from its children's sizes, a merge sums its children,
# and a nested matrix multiplies its own children.
test_sizes_are_counted if {
	nested := f.application_set("apps", "nested", {"generators": [{"matrix": {"generators": [
		{"matrix": {"generators": [elements_of(numbered("a", 3)), elements_of(numbered("b", 4))]}},
		{"merge": {"mergeKeys": ["c"], "generators": [elements_of(numbered("c", 5)), elements_of(numbered("c", 2)), {"clusters": {}}]}},
	]}}]})
	two := f.application_set("apps", "two", {"generators": [elements_of(numbered("a", 7)), {"git": {}}]})
	appsets.sizes == [(3 * 4) * ((5 + 2) + 1), 8] with input as f.estate([nested, two])
}

# Over the bound, nothing of the matrix is built: one Application whose
# parameters nobody knows (its name a pattern), and the ApplicationSet is listed
# as oversized.
test_over_the_bound_is_not_built if {
	records := appsets.generated with input as f.estate([grid("big", 60, 100)])
	[[a.name_pattern, a.generator_params_known, a.sources[0].repo_known, a.sources[0].rev.kind] | some a in records] == [["grid-*-*", false, true, "unknown"]]
	oversized := appsets.oversized with input as f.estate([grid("big", 60, 100)])
	oversized == [{
		"ref": {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "namespace": "apps", "name": "big", "file": "test.yaml", "line": 0},
		"size": 6000, "bytes": 6000 * 377, "bound": "per-appset", "templates_rendered": true,
	}]
}

# Not built, an ApplicationSet renders each of its templates once, however many
# generators share it: what cannot be known costs no more than its text.
test_not_built_renders_each_template_once if {
	own := {"clusters": {"template": {"spec": {"source": {"repoURL": f.repo, "targetRevision": "own", "path": "x"}}}}}
	many := f.application_set("apps", "many", {"goTemplate": true, "template": grid_template, "generators": array.concat(
		[{"clusters": {}} | some _ in numbers.range(1, 60)],
		[own, own],
	)})
	records := appsets.generated with input as f.estate([many]) with appsets.max_per_appset as 50
	count(records) == 3
	{a.sources[0].raw_revision | some a in records} == {"env/${{ applicationset-parameter }}", "own"}
}

# At the bound, every set is built (a bound of 50 here: 5,000 renders would
# outlast opa test's timeout on a busy machine).
test_at_the_bound_is_built if {
	count(appsets.generated) == 50 with input as f.estate([grid("edge", 5, 10)]) with appsets.max_per_appset as 50
	count(appsets.oversized) == 0 with input as f.estate([grid("edge", 5, 10)]) with appsets.max_per_appset as 50
	count(appsets.generated) == 1 with input as f.estate([grid("edge", 3, 17)]) with appsets.max_per_appset as 50
}

# Over the total, the smaller ApplicationSets are built first, whatever their
# order; the others are oversized for the total.
test_total_bound_builds_the_smaller_first if {
	estate := f.estate([grid("large", 30, 10), grid("small", 2, 2), grid("medium", 10, 10)])
	bounded := appsets.oversized with input as estate with appsets.max_total as 200
	[[o.ref.name, o.size, o.bound] | some o in bounded] == [["large", 300, "total"]]
	appsets.threshold == 256 with input as estate with appsets.max_total as 200
	count(appsets.generated) == (4 + 100) + 1 with input as estate with appsets.max_total as 200
}

# Of ApplicationSets of one size, as many as fit are built, in file order.
test_total_bound_admits_what_fits if {
	estate := f.estate([grid("one", 4, 10), grid("two", 4, 10), grid("three", 4, 10)])
	bounded := appsets.oversized with input as estate with appsets.max_total as 100
	[[o.ref.name, o.bound] | some o in bounded] == [["three", "total"]]
	count(appsets.generated) == 81 with input as estate with appsets.max_total as 100
}

# The cost of an ApplicationSet over the bound does not depend on its product:
# a matrix of matrices of 1,000 elements each (10^12 sets) is counted, not built.
test_product_is_not_materialised if {
	huge := f.application_set("apps", "huge", {"generators": [{"matrix": {"generators": [
		{"matrix": {"generators": [elements_of(numbered("a", 1000)), elements_of(numbered("b", 1000))]}},
		{"matrix": {"generators": [elements_of(numbered("c", 1000)), elements_of(numbered("d", 1000))]}},
	]}}]})
	count(appsets.generated) == 1 with input as f.estate([huge])
	[o.size | some o in appsets.oversized] == [1000000000000] with input as f.estate([huge])
}

# A Stage naming one of the Applications not built is not told it does not exist.
test_not_built_is_unknown_not_absent if {
	stage := f.stage("3", "main", [{"name": "grid-3-7", "namespace": "apps"}])
	resolved := [count(u.targets) | some u in model.updates] with input as f.estate([grid("big", 60, 100), stage])
	resolved == [1]
}

# ---------------------------------------------------------------------------
# Bytes: a parameter set costs what its template renders to.

# padded is grid_template with an annotation of about n bytes, and values a
# string of n bytes.
padded(n) := json.patch(grid_template, [{"op": "add", "path": "/metadata/annotations/pad", "value": text(n)}])

text(n) := concat("", ["0123456789abcdef" | some _ in numbers.range(1, floor(n / 16))])

listed(name, n, template) := f.application_set("apps", name, {"goTemplate": true, "template": template, "generators": [
	elements_of([{"x": sprintf("%d", [i]), "y": "y"} | some i in numbers.range(1, n)]),
]})

# bytes is the size of what the model holds for the generated Applications.
bytes(records) := count(json.marshal(records))

# A template of 20 KB under 40 parameter sets, inside a bound of 50 sets: the
# bytes it renders to (800 KB) are over that bound's 50 x 2 KiB, so it is not
# built, and what is held grows with the input, not with sets x template (built,
# it held 40 times its input).
test_template_bytes_bound_per_appset if {
	set := listed("wide", 40, padded(20000))
	records := appsets.generated with input as f.estate([set]) with appsets.max_per_appset as 50
	bytes(records) <= 2 * count(json.marshal(set))
	[[o.ref.name, o.size, o.bound, o.templates_rendered] | some o in appsets.oversized] == [["wide", 40, "per-appset-bytes", true]] with input as f.estate([set])
		with appsets.max_per_appset as 50
}

# One parameter set can be as costly: 400 placeholders of one 32 KB value render
# to 13 MB from 36 KB, over the default bound of 10 MB (5,000 x 2 KiB) for one
# ApplicationSet.
test_value_bytes_bound_per_appset if {
	template := json.patch(grid_template, [{"op": "add", "path": "/metadata/annotations/pad", "value": concat("-", ["{{.y}}" | some _ in numbers.range(1, 400)])}])
	set := f.application_set("apps", "long", {"goTemplate": true, "template": template, "generators": [elements_of([{"x": "1", "y": text(32768)}])]})
	records := appsets.generated with input as f.estate([set])
	bytes(records) <= 2 * count(json.marshal(set))
	[[o.size, o.bound] | some o in appsets.oversized] == [[1, "per-appset-bytes"]] with input as f.estate([set])
}

# The total bound counts bytes too: three ApplicationSets of 20 sets of a 4 KB
# template count 43 units each (20 x 4.4 KB / 2 KiB); within 50 for one, the
# first two fill a total of 100 and the third is over it. Counted as sets (60 in
# all), all three were built.
test_template_bytes_bound_total if {
	estate := f.estate([listed("one", 20, padded(4000)), listed("two", 20, padded(4000)), listed("three", 20, padded(4000))])
	appsets.costs == [43, 43, 43] with input as estate
	bounded := appsets.oversized with input as estate with appsets.max_per_appset as 50 with appsets.max_total as 100
	[[o.ref.name, o.bound] | some o in bounded] == [["three", "total"]]
	count(appsets.generated) == 41 with input as estate with appsets.max_per_appset as 50 with appsets.max_total as 100
}

# Not built, an ApplicationSet renders each distinct template once; when that
# would cost more than max_unknown_ratio times its templates' text (a 20 KB
# spec.template under 40 generators with templates of their own: 40 renders of
# 20 KB, 35 times the input), one Application stands for it, of which nothing
# is known: its name matches any name, so a Stage naming one of its
# Applications is not told that it does not exist, and nothing is concluded
# from it.
test_templates_not_rendered_when_too_many if {
	gens := [{"clusters": {"template": {
		"metadata": {"labels": {"g": sprintf("%d", [i])}},
		"spec": {"project": "default", "destination": {}},
	}}} |
		some i in numbers.range(1, 40)
	]
	set := f.application_set("apps", "many", {"goTemplate": true, "template": padded(20000), "generators": gens})
	records := appsets.generated with input as f.estate([set]) with appsets.max_per_appset as 50
	bytes(records) <= 2 * count(json.marshal(set))
	[[a.name_pattern, a.metadata_known, a.auto_sync, a.generator_params_known, a.sources[0].repo_known] | some a in records] == [["*", false, "unknown", false, false]]
	[[o.bound, o.templates_rendered] | some o in appsets.oversized] == [["per-appset-bytes", false]] with input as f.estate([set])
		with appsets.max_per_appset as 50

	stage := f.stage("3", "main", [{"name": "grid-3-7", "namespace": "apps"}])
	[count(u.targets) | some u in model.updates] == [1] with input as f.estate([set, stage]) with appsets.max_per_appset as 50

	# (the template is no whole Application spec: invalid-object's)
	{x.rule | some x in flipflop.findings; x.rule != "invalid-object"} == {"oversized-applicationset"} with input as f.estate([set, stage])
		with appsets.max_per_appset as 50
}

# ---------------------------------------------------------------------------
# Merge: a constant number of overlays per set.

# A merge of two lists of n elements that all share one merge-key value joined
# every base set with every overlay: n² overlays (n = 2,500: 36-53 s and 2 GB).
# Argo CD rejects such a merge (a generator's sets must differ on the merge
# keys), and what is held for it grows with n.
test_merge_on_one_key_is_linear if {
	n := 200
	base := elements_of([{"env": "dev", "i": sprintf("%d", [k])} | some k in numbers.range(1, n)])
	overlay := elements_of([{"env": "dev", "j": sprintf("%d", [k])} | some k in numbers.range(1, n)])
	set := f.application_set("apps", "one-key", {"goTemplate": true, "template": grid_template, "generators": [{"merge": {"mergeKeys": ["env"], "generators": [base, overlay]}}]})
	records := appsets.generated with input as f.estate([set])
	sum([count(a.generator.elements) | some a in records]) <= 2 * n
	bytes(records) <= 2 * count(json.marshal(set))
}

# ---------------------------------------------------------------------------
# --repo-root: git generators the loader's budget left as written.

# A git generator the loader left as written (evaluator/loader, gitBudget:
# the git generators of a run expand into at most 20,000 parameter sets) is
# read as one nobody can know, beside the ApplicationSet's other generators,
# and the warning names its ApplicationSet and the bound.
test_git_generator_not_expanded_is_named if {
	cut := {
		"git": {"repoURL": f.repo, "revision": "HEAD", "directories": [{"path": "envs/*"}]},
		"x-flipflop-not-expanded": {"bound": "parameter sets", "limit": 20000},
	}
	set := f.application_set("apps", "cut", {"goTemplate": true, "template": grid_template, "generators": [cut, elements_of([{"x": "1", "y": "2"}])]})
	records := appsets.generated with input as f.estate([set])
	[[a.name_pattern, a.generator_params_known] | some a in records] == [["grid-*-*", false], ["grid-1-2", true]]
	some x in flipflop.findings with input as f.estate([set])
	x.rule == "oversized-applicationset"
	x.message == concat(" ", [
		"ApplicationSet apps/cut: 1 of its git generators were not expanded from --repo-root: with them, the git generators",
		"of this run would expand into more than the 20000 parameter sets flipflop expands from checkouts in one run.",
		"They are read as git generators whose parameters cannot be known (as without --repo-root):",
		"what their Applications track and their names are unknown, so no finding depends on them.",
	])
	x.details.repoRootBound == "parameter sets"
}
