# METADATA
# title: ApplicationSets
# description: |
#   Applications an ApplicationSet generates. `list` generators, and `matrix` /
#   `merge` of them, are expanded exactly in both fasttemplate (`{{key}}`) and
#   `goTemplate: true` (`{{.key}}`) syntax, with `template.metadata` and a static
#   `templatePatch`. Other generators (git, clusters, pull requests, ...) yield
#   parameters the model cannot know: the template is still rendered, unknown
#   placeholders become unknown values, and the generated name becomes a glob
#   pattern that `argocd-update` app names are matched against. Generated
#   Applications live in the ApplicationSet's namespace.
#
#   A matrix multiplies: two lists of 200 elements make 40,000 Applications, and
#   each doubling of the lists quadruples them; and each Application costs the
#   text its template renders to. The parameter sets of each ApplicationSet and
#   the bytes they render to are therefore counted before any is built (from the
#   sizes of its list generators, its templates and its values), and an
#   ApplicationSet is expanded only when it makes at most max_per_appset units
#   (a set, or unit_bytes of text) and the estate at most max_total in all (the
#   smaller ApplicationSets first). One over a bound is rendered as if its
#   generators were ones nobody can know (one Application per distinct template,
#   whose unknown values match nothing and whose name is a pattern; one
#   Application of which nothing is known when even that would cost too much),
#   so nothing is concluded from the Applications it was not expanded into, and
#   the oversized-applicationset rule says so. A merge generator touches each
#   set a constant number of times (see merged).
package lib.flipflop.appsets

import data.lib.flipflop.application
import data.lib.flipflop.expr
import data.lib.flipflop.labels
import data.lib.flipflop.objects

# unknown is what an unresolvable placeholder renders to: an expression, so every
# consumer treats the value as unknown.
unknown := "${{ applicationset-parameter }}"

generated := [app |
	some i, o in objects.application_sets
	spec := objects.object_at(o.obj, ["spec"])
	go := object.get(spec, "goTemplate", false) == true
	ns := application.namespace_of(o.obj)
	some app in applications(i, o, spec, go, ns)
]

# applications renders the Applications of objects.application_sets[i] (o):
# one per selected parameter set of each generator; for one not expanded (see
# Bounds), one per distinct template its generators render, from a parameter
# set nobody can know; and when even those would cost more than
# max_unknown_ratio times its templates' own text, one Application of which
# nothing is known.
applications(i, o, spec, go, ns) := [app |
	some gi, g in objects.array_at(spec, ["generators"])
	template := object.union(objects.object_at(spec, ["template"]), own_template(g))
	nested := object.get(spec, "applyNestedSelectors", false) == true
	some p in level2(g, sprintf("/spec/generators/%d", [gi]), nested)
	selected(g, p)
	app := render(spec, template, p, go, o, ns, template_path(g, gi))
] if {
	expanded(i)
} else := [render(spec, t[0], unknown_set, go, o, ns, t[1]) | some t in templates(spec)] if {
	templates_fit(i)
} else := [nothing_known(spec, go, o, ns)]

# templates lists the distinct [template, template path] pairs an
# ApplicationSet's generators render: each generator's own template merged over
# spec.template. The own templates are told apart first, so spec.template is
# merged once per distinct own template, not once per generator.
templates(spec) := {[object.union(objects.object_at(spec, ["template"]), t[0]), t[1]] | some t in own_templates(spec)}

own_templates(spec) := {[own_template(g), template_path(g, gi)] | some gi, g in objects.array_at(spec, ["generators"])}

# nothing_known is the one Application read for an ApplicationSet whose
# templates are not rendered either: its name a pattern every name matches,
# its one source and its metadata unknown, its auto-sync unknown.
nothing_known(spec, go, o, ns) := object.union(app, {"metadata_known": false, "auto_sync": "unknown"}) if {
	template := {"metadata": {"name": "{{unknown}}"}, "spec": {"source": {"repoURL": "{{unknown}}", "targetRevision": "{{unknown}}"}}}
	app := render(object.remove(spec, ["templatePatch"]), template, unknown_set, go, o, ns, "/spec/template")
}

# unknown_set is a parameter set nobody can know.
unknown_set := {"unknown_params": true, element_key: []}

# ---------------------------------------------------------------------------
# Bounds

# max_per_appset is the most parameter sets the model builds for one
# ApplicationSet; max_total, for all of them. Argo CD sets no such bound (it
# builds every combination a matrix asks for); these keep what a few kilobytes
# can cost to what a large estate costs (docs/model.md): 5,000 is the number of
# Applications Argo CD lists in an ApplicationSet's status at most by default.
max_per_appset := 5000

max_total := 10000

# A parameter set costs what its Application's template renders to, not one
# unit: 10,000 sets of a 16 KB template are 160 MB of text (and about 20 bytes
# of memory per byte). So the bounds count units: a parameter set is one unit,
# or one per unit_bytes of the text its Application renders to (rendered_bytes),
# whichever is more. One ApplicationSet is built only within max_per_appset
# units (max_bytes_per_appset of text), and all of them within max_total
# (max_total_bytes): what the bounds let through costs about as much as
# max_total Applications of ordinary templates (the largest real-world
# template, rendered, is 1.4 KB), whatever their templates say.
unit_bytes := 2048

max_bytes_per_appset := max_per_appset * unit_bytes

max_total_bytes := max_total * unit_bytes

# sizes lists, for each ApplicationSet (as objects.application_sets), how many
# parameter sets its generators would build at most: counted from the sizes of
# its list generators, before any set is built.
sizes := [sum([size2(g) | some g in objects.array_at(o.obj, ["spec", "generators"])]) |
	some o in objects.application_sets
]

# rendered lists, for each ApplicationSet, how many bytes of text its
# Applications would render to at most, counted before any is rendered (see
# rendered_bytes).
rendered := [rendered_bytes(objects.object_at(o.obj, ["spec"])) | some o in objects.application_sets]

# costs lists, for each ApplicationSet, the units it counts against the bounds.
costs := [max([n, ceil(rendered[i] / unit_bytes)]) | some i, n in sizes]

# rendered_bytes bounds the text an ApplicationSet's Applications render to:
# for each generator, its parameter sets (size2) times what one of them renders
# to, at most: the template's text (spec.template, the generator's own template
# and the templatePatch, as JSON) with every placeholder replaced by the longest
# value the generator's elements hold (or the unknown marker, if longer). A
# placeholder is counted at every "{{", and a value by its JSON text: neither
# can be undercounted. All of it is read once from the ApplicationSet's own
# text: linear in its size.
rendered_bytes(spec) := sum(per_generator) if {
	template := json.marshal(objects.object_at(spec, ["template"]))
	patch := patch_text(spec)
	base := {"bytes": count(template) + count(patch), "placeholders": placeholders(template) + placeholders(patch)}
	per_generator := [n | some g in objects.array_at(spec, ["generators"]); n := size2(g) * per_set_bytes(base, g)]
}

per_set_bytes(base, g) := (base.bytes + count(own)) + ((base.placeholders + placeholders(own)) * value_bytes(g)) if {
	own := json.marshal(own_template(g))
}

patch_text(spec) := spec.templatePatch if is_string(spec.templatePatch)

else := ""

placeholders(text) := strings.count(text, "{{")

# value_bytes: the longest text a placeholder of generator g can become: the
# longest scalar value (as JSON) of the list elements it or its children hold,
# at the two levels flatten reads, or the unknown marker.
value_bytes(g) := max(array.concat([count(unknown)], [n |
	some e in elements2(g)
	is_object(e)
	some v in array.concat([x | some x in e], [y | some x in e; is_object(x); some y in x])
	not is_object(v)
	not is_array(v)
	n := count(json.marshal(v))
]))

# elements2 and elements1 list the list elements level2 and level1 read: a
# generator's own, and those of the children of its matrix or merge.
elements2(g) := [e | some c in array.concat([g], children(g)); some e in elements1(c)]

elements1(g) := [e | some c in array.concat([g], children(g)); some e in objects.array_at(c, ["list", "elements"])]

children(g) := array.concat(objects.array_at(g, ["matrix", "generators"]), objects.array_at(g, ["merge", "generators"]))

# max_unknown_ratio: an ApplicationSet not expanded renders each of its distinct
# templates once, from a parameter set nobody can know, when that costs at most
# this many times the text of its templates (spec.template, the templatePatch
# and every generator's own template, each generator counted at least 16 bytes,
# the size of `{"clusters":{}}`); otherwise nothing of it is rendered
# (nothing_known). A large spec.template merged under thousands of distinct
# generator templates would cost their product. (Its list elements are not
# read: they may be the many thousands a checkout gave.)
max_unknown_ratio := 8

templates_fit(i) if {
	spec := objects.object_at(objects.application_sets[i].obj, ["spec"])
	template := json.marshal(objects.object_at(spec, ["template"]))
	patch := patch_text(spec)
	per_template := (count(template) + count(patch)) + ((placeholders(template) + placeholders(patch)) * count(unknown))
	cost := sum([n |
		some t in own_templates(spec)
		own := json.marshal(t[0])
		n := (per_template + count(own)) + (placeholders(own) * count(unknown))
	])
	written := sum([max([16, count(json.marshal(own_template(g)))]) | some g in objects.array_at(spec, ["generators"])])
	cost <= max_unknown_ratio * ((count(template) + count(patch)) + written)
} else := false

# size2 and size1 count what level2 and level1 build: a matrix the product of
# its children, a merge the sum of its children's sets (it combines them all,
# and yields at most that many), a list its elements, any other generator one.
size2(g) := size1(g.matrix.generators[0]) * size1(g.matrix.generators[1]) if {
	count(objects.array_at(g, ["matrix", "generators"])) == 2
} else := sum([size1(c) | some c in g.merge.generators]) if {
	is_array(g.merge.generators)
} else := size0(g)

size1(g) := size0(g.matrix.generators[0]) * size0(g.matrix.generators[1]) if {
	count(objects.array_at(g, ["matrix", "generators"])) == 2
} else := sum([size0(c) | some c in g.merge.generators]) if {
	is_array(g.merge.generators)
} else := size0(g)

size0(g) := count(g.list.elements) if is_array(g.list.elements)

else := 1

# within lists the units of the ApplicationSets under max_per_appset.
within := [n | some n in costs; n <= max_per_appset]

# threshold is the largest number of units up to which every ApplicationSet is
# expanded: max_per_appset when the ApplicationSets under it make at most
# max_total in all; otherwise the largest power of two t for which those of at
# most t do (a few sums over the units, not a running total per
# ApplicationSet). The smaller ApplicationSets are expanded first, whatever
# their order in the files.
default threshold := 0

threshold := max_per_appset if {
	sum(within) <= max_total
} else := max(fitting) if {
	count(fitting) > 0
}

fitting := {t |
	some t in steps
	sum([n | some n in within; n <= t]) <= max_total
}

steps := {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}

# admitted: of the next band of units (above threshold, up to twice it), as
# many ApplicationSets as surely fit in what max_total leaves (room divided by
# the band's largest), in the order of the files.
default admitted := set()

admitted := {band[k][0] | some k in numbers.range(0, floor(room / top) - 1)} if {
	count(band) > 0
	top := max([n | some [_, n] in band])
	room >= top
}

# band lists [index, units] of the ApplicationSets of the next band.
band := [[i, n] |
	some i, n in costs
	n > threshold
	n <= min([max([2 * threshold, 1]), max_per_appset])
]

room := max_total - sum([n | some n in within; n <= threshold])

expanded(i) if {
	costs[i] <= max_per_appset
	costs[i] <= threshold
}

expanded(i) if i in admitted

# oversized lists the ApplicationSets not expanded, with their size (parameter
# sets), the bytes they would render, the bound they passed: "per-appset"
# (max_per_appset sets), "per-appset-bytes" (max_bytes_per_appset) or "total"
# (max_total units), and whether their templates were rendered (templates_fit).
oversized := [{
	"ref": o.ref, "size": sizes[i], "bytes": rendered[i], "bound": bound(i),
	"templates_rendered": templates_fit(i),
} |
	some i, o in objects.application_sets
	not expanded(i)
]

bound(i) := "per-appset" if {
	sizes[i] > max_per_appset
} else := "per-appset-bytes" if {
	costs[i] > max_per_appset
} else := "total"

# not_expanded lists the ApplicationSets holding git generators (or matrices of
# one) that the loader's budget for --repo-root left as written
# (evaluator/loader, gitBudget: N ApplicationSets over a checkout of D
# directories would make N x D parameter sets), with how many and the bound
# passed ({"bound", "limit"}). Such a generator is read as one nobody can
# know, as a git generator is without a checkout.
not_expanded := [{"ref": o.ref, "generators": count(marks), "bound": marks[0]} |
	some o in objects.application_sets
	marks := [m |
		some g in objects.array_at(o.obj, ["spec", "generators"])
		some c in array.concat([g], children(g))
		some x in array.concat([c], children(c))
		m := x[not_expanded_key]
		is_object(m)
	]
	count(marks) > 0
]

not_expanded_key := "x-flipflop-not-expanded"

# generator_types are the keys of a generator that name its kind; each kind
# can carry its own template (spec.generators[].list.template, ...), which
# Argo CD merges over spec.template. The templates of the generators nested in
# a matrix or merge are ignored (Argo CD renders them with an empty template).
generator_types := [
	"list", "clusters", "git", "matrix", "merge", "scmProvider",
	"pullRequest", "clusterDecisionResource", "plugin",
]

# written_type is the kind a generator is written as in the file (a git
# generator expanded by --repo-root is a list generator marked with the kind
# it was written as).
written_type(g) := t if {
	t := g["x-flipflop-expanded-from"]
	is_string(t)
} else := stored_type(g)

# stored_type is the kind the generator holds now (the first, when several
# are written: Argo CD rejects such a generator).
stored_type(g) := types[0] if {
	types := [t | some t in generator_types; is_object(g[t])]
	count(types) > 0
}

# own_template is a generator's own template ({} when it has none).
own_template(g) := t if {
	t := objects.object_at(g, [stored_type(g), "template"])
} else := {}

# template_path is where the template that renders an Application's spec is
# written: the generator's own, else spec.template.
template_path(g, gi) := sprintf("/spec/generators/%d/%s/template", [gi, written_type(g)]) if {
	is_object(g)
	some field in ["source", "sources", "sourceHydrator"]
	object.get(own_template(g), ["spec", field], null) != null
} else := "/spec/template"

# element_key holds, in each parameter set, the generator elements it came from
# (JSON pointers into the ApplicationSet, with the generator kind that wrote
# them): a key no template can name.
element_key := "\u0000elements"

# selected applies a generator's label selector to its parameter sets, as Argo
# CD does after generating them; parameters nobody can know are kept.
selected(g, _) if not has_selector(g)

selected(g, p) if {
	has_selector(g)
	p.unknown_params
}

selected(g, p) if {
	has_selector(g)
	not p.unknown_params
	labels.matches(g.selector, p)
}

has_selector(g) if is_object(g.selector)

# params returns the parameter sets of a generator list: the union of each
# generator's sets. A set holding "unknown_params" has parameters nobody can know.
# Matrix and merge nest at most two levels deep (as Argo CD allows), so the
# levels are written out: Rego has no recursion. Each set lists the elements it
# came from under element_key.
params(gens) := [p | some i, g in gens; some p in level2(g, sprintf("/spec/generators/%d", [i]), false)]

# The children of a matrix or merge are filtered by their own selectors before
# they are combined, as Argo CD does; the children of a nested matrix or merge
# only when nested (spec.applyNestedSelectors), as Argo CD drops their
# selectors otherwise.
level2(g, path, nested) := cartesian(
	only_selected(g.matrix.generators[0], level1(g.matrix.generators[0], sprintf("%s/matrix/generators/0", [path]), nested)),
	only_selected(g.matrix.generators[1], level1(g.matrix.generators[1], sprintf("%s/matrix/generators/1", [path]), nested)),
) if {
	count(objects.array_at(g, ["matrix", "generators"])) == 2
} else := merged(
	[only_selected(c, level1(c, sprintf("%s/merge/generators/%d", [path, i]), nested)) | some i, c in g.merge.generators],
	objects.array_at(g, ["merge", "mergeKeys"]),
) if {
	is_array(g.merge.generators)
} else := leaf(g, path)

level1(g, path, nested) := cartesian(
	nested_selected(nested, g.matrix.generators[0], leaf(g.matrix.generators[0], sprintf("%s/matrix/generators/0", [path]))),
	nested_selected(nested, g.matrix.generators[1], leaf(g.matrix.generators[1], sprintf("%s/matrix/generators/1", [path]))),
) if {
	count(objects.array_at(g, ["matrix", "generators"])) == 2
} else := merged(
	[nested_selected(nested, c, leaf(c, sprintf("%s/merge/generators/%d", [path, i]))) | some i, c in g.merge.generators],
	objects.array_at(g, ["merge", "mergeKeys"]),
) if {
	is_array(g.merge.generators)
} else := leaf(g, path)

only_selected(g, sets) := [p | some p in sets; selected(g, p)]

nested_selected(true, g, sets) := only_selected(g, sets)

nested_selected(false, _, sets) := sets

# leaf: a list generator's elements (written in the file, or expanded from a git
# generator by --repo-root: generator "git"); any other generator yields
# parameters nobody can know.
leaf(g, path) := [object.union(flatten(e), {element_key: [{"path": sprintf("%s/list/elements/%d", [path, k]), "generator": from}]}) |
	from := element_generator(g)
	some k, e in g.list.elements
	is_object(e)
] if {
	is_array(g.list.elements)
} else := [unknown_set]

# element_generator is "git" for the elements a checkout gave (--repo-root
# expanded a git generator, or a matrix with a git child): they are in no file.
element_generator(g) := "git" if is_string(g["x-flipflop-expanded-from"])

else := "list"

cartesian(a, b) := [object.union_n([x, y, {element_key: array.concat(x[element_key], y[element_key])}]) |
	some x in a
	some y in b
]

# merged: the base generator's sets (sets[0]), each overlaid by the sets of the
# other generators that agree with it on every merge key, as Argo CD's merge
# generator does (applicationset/generators/merge.go): it keys every
# generator's sets by their merge-key values and fails when a generator has two
# sets under one key, or when no merge key is given. Such a merge generates
# nothing Argo CD would apply (the ApplicationSet reports the error and its
# Applications stay as they are), so it yields a parameter set nobody can know.
# Otherwise each base set meets at most one set of each other generator: the
# overlays are grouped by their merge-key values once (merge_index), and each
# base set looks its group up, so every set is touched a constant number of
# times (one merge key shared by every set of two lists of n elements made n²
# overlays).
merged(sets, keys) := [unknown_set] if {
	not mergeable(sets, merge_keyset(keys))
} else := [object.union_n(layers) |
	keyset := merge_keyset(keys)
	index := merge_index(sets, keyset)
	some base in sets[0]
	overlays := object.get(index, [merge_values(base, keyset)], [])
	elements := array.concat(base[element_key], [e | some o in overlays; some e in o[element_key]])
	layers := [x | some part in [[base], overlays, [{element_key: elements}]]; some x in part]
]

# merge_keyset: the merge keys, as a set (Argo CD removes repeated keys).
merge_keyset(keys) := {k | some k in keys}

# mergeable: at least one merge key, and no generator with two sets of the same
# merge-key values.
mergeable(sets, keyset) if {
	count(keyset) > 0
	every set in sets {
		count({merge_values(o, keyset) | some o in set}) == count(set)
	}
}

# merge_values: a parameter set's values of the merge keys, as an object of the
# keys it holds with a value that is not null (Argo CD compares the JSON of
# {key: value} over every merge key, an absent or null value being null). It is
# built from the set's own keys, so its cost is the set's size, whatever the
# number of merge keys.
merge_values(o, keyset) := {k: v |
	some k, v in o
	k in keyset
	v != null
}

# merge_index groups the overlay sets (those of sets[1:]) by merge_values, each
# group in the order of the generators and their elements. Grouping sorts the
# rows by [values, generator, element] and cuts the runs of equal values (a
# grouping comprehension would compare every row with every group).
merge_index(sets, keyset) := {rows[start][0]: [r[3] | some r in array.slice(rows, start, bounds[n + 1])] |
	rows := sort([[merge_values(o, keyset), i, j, o] |
		some i, set in sets
		i > 0
		some j, o in set
	])
	starts := [k | some k, _ in rows; run_starts(rows, k)]
	bounds := array.concat(starts, [count(rows)])
	some n, start in starts
}

run_starts(_, 0)

run_starts(rows, k) if rows[k - 1][0] != rows[k][0]

# flatten turns {"values": {"a": "b"}} into {"values": {...}, "values.a": "b"},
# as fasttemplate and dotted goTemplate lookups see it.
flatten(e) := object.union(e, {sprintf("%s.%s", [k, k2]): v2 |
	some k, v in e
	is_object(v)
	some k2, v2 in v
})

render(spec, template, p, go, o, ns, tpath) := app if {
	rendered := json.unmarshal(substitute(json.marshal(template), p, go))
	patch := patch_of(spec, p, go)
	obj := object.union(rendered, patch.value)
	name := objects.string_at(obj, ["metadata", "name"])
	ref := object.union(o.ref, {
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "namespace": ns, "name": name,
		"generatedBy": sprintf("ApplicationSet %s/%s", [ns, o.ref.name]),
	})
	rec := application.record(obj, ref, ns, o.ref.name)
	app := object.union(rec, {
		"metadata_known": patch.known,
		"auto_sync": sync_of(rec, patch.known),
		"name_pattern": name_pattern(rec.name),
		"generator_params_known": object.get(p, "unknown_params", false) == false,
		"reverts_spec": reverts_spec(spec),
		"generator": {
			"appset": o.ref,
			"template_path": tpath,
			"template_patch": is_string(object.get(spec, "templatePatch", null)),
			"go_template": go,
			"params": object.remove(p, [element_key, "unknown_params"]),
			"elements": p[element_key],
		},
	})
}

sync_of(rec, true) := rec.auto_sync

sync_of(_, false) := "unknown"

name_pattern(name) := replace(name, unknown, "*")

patch_of(spec, p, go) := {"known": true, "value": {}} if {
	not has_patch(spec)
} else := {"known": true, "value": v} if {
	text := substitute(spec.templatePatch, p, go)
	not contains(text, "{{")
	expr.known(text)
	v := yaml.unmarshal(text)
	is_object(v)
} else := {"known": false, "value": {}}

has_patch(spec) if is_string(spec.templatePatch)

# substitute replaces every {{...}} placeholder in text (a JSON or YAML document)
# with its parameter value, JSON-escaped; placeholders nobody can know become the
# unknown marker.
substitute(text, p, go) := strings.replace_n(replacements, text) if {
	found := regex.find_all_string_submatch_n(`\{\{-?\s*([^{}]*?)\s*-?\}\}`, text, -1)
	replacements := {m[0]: escaped(value(m[1], p, go)) | some m in found}
}

value(key, p, true) := v if {
	startswith(key, ".")
	v := scalar(object.get(p, substring(key, 1, -1), null))
} else := v if {
	not p.unknown_params
	v := "<no value>"
	startswith(key, ".")
	regex.match(`^\.[A-Za-z0-9_.]+$`, key)
} else := unknown

value(key, p, false) := v if {
	v := scalar(object.get(p, key, null))
} else := sprintf("{{%s}}", [key]) if {
	not p.unknown_params
} else := unknown

scalar(v) := v if is_string(v)

scalar(v) := sprintf("%v", [v]) if is_number(v)

scalar(v) := sprintf("%v", [v]) if is_boolean(v)

escaped(s) := substring(j, 1, count(j) - 2) if j := json.marshal(s)

# reverts_spec: the ApplicationSet controller writes its template back over a
# change to a generated Application's spec (Argo CD's default policy, sync,
# and create-update do; create-only and create-delete never update an
# Application). Any ignoreApplicationDifferences may keep the change, so it
# counts as not reverting: what it keeps is not judged.
reverts_spec(spec) if {
	not object.get(spec, ["syncPolicy", "applicationsSync"], "sync") in {"create-only", "create-delete"}
	count(objects.array_at(spec, ["ignoreApplicationDifferences"])) == 0
} else := false
