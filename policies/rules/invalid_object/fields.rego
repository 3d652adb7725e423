# The fields the model reads, with their types: the tables the invalid-object
# rule checks (rule.rego), and the trie they are walked as.
package lib.flipflop.rules.invalid_object

# ---------------------------------------------------------------------------
# The fields the model reads, with the JSON type each must have when present
# (absent or null is fine, but an array element that is null is not). A path
# is a list of keys; "[]" stands for every element of an array, "*" for every
# value of an object (a map such as labels). The types are those of the CRDs (metadata: Kubernetes'
# ObjectMeta) and of Kargo's step config schemas; evaluator tests check every
# entry against them, and that a wrong type anywhere the model reads is
# reported here.

# metadata_fields are read of every kind (annotations for waivers, whose
# values the invalid-waiver rule checks); labels and the authorized-stage
# annotation only of Applications.
metadata_fields := [
	[["metadata"], "object"],
	[["metadata", "name"], "string"],
	[["metadata", "namespace"], "string"],
	[["metadata", "annotations"], "object"],
]

application_metadata := [
	[["metadata", "labels"], "object"],
	[["metadata", "labels", "*"], "string"],
	[["metadata", "annotations", "kargo.akuity.io/authorized-stage"], "string"],
]

# flat joins lists of entries.
flat(groups) := [e | some g in groups; some e in g]

# under puts entries (paths relative to p) under p.
under(p, entries) := [[array.concat(p, rel), want] | some [rel, want] in entries]

source_fields := [
	[[], "object"],
	[["repoURL"], "string"],
	[["targetRevision"], "string"],
	[["chart"], "string"],
	[["ref"], "string"],
	[["path"], "string"],
	[["directory"], "object"],
	[["directory", "recurse"], "boolean"],
]

application_spec := flat([
	[
		[[], "object"],
		[["destination"], "object"],
		[["destination", "namespace"], "string"],
		[["sources"], "array"],
		[["sourceHydrator"], "object"],
		[["sourceHydrator", "drySource"], "object"],
		[["sourceHydrator", "drySource", "repoURL"], "string"],
		[["sourceHydrator", "syncSource"], "object"],
		[["sourceHydrator", "syncSource", "repoURL"], "string"],
		[["sourceHydrator", "syncSource", "targetBranch"], "string"],
		[["syncPolicy"], "object"],
		[["syncPolicy", "automated"], "object"],
		[["syncPolicy", "automated", "enabled"], "boolean"],
	],
	under(["source"], source_fields),
	under(["sources", "[]"], source_fields),
])

# generator_fields are the fields of one ApplicationSet generator the model reads.
generator_fields := [
	[[], "object"],
	[["selector"], "object"],
	[["list"], "object"],
	[["list", "elements"], "array"],
	[["list", "elements", "[]"], "object"],
	[["matrix"], "object"],
	[["matrix", "generators"], "array"],
	[["merge"], "object"],
	[["merge", "generators"], "array"],
	[["merge", "mergeKeys"], "array"],
	[["merge", "mergeKeys", "[]"], "string"],
]

var_fields := [
	[[], "array"],
	[["[]"], "object"],
	[["[]", "name"], "string"],
	[["[]", "value"], "string"],
]

step_fields := flat([
	[
		[[], "array"],
		[["[]"], "object"],
		[["[]", "uses"], "string"],
		[["[]", "as"], "string"],
		[["[]", "config"], "object"],
		[["[]", "task"], "object"],
		[["[]", "task", "name"], "string"],
		[["[]", "task", "kind"], "string"],
	],
	under(["[]", "vars"], var_fields),
])

task_fields := flat([
	metadata_fields,
	[[["spec"], "object"]],
	under(["spec", "vars"], var_fields),
	under(["spec", "steps"], step_fields),
])

fields := {
	"Application": flat([metadata_fields, application_metadata, under(["spec"], application_spec)]),
	"ApplicationSet": flat([
		metadata_fields,
		[
			[["spec"], "object"],
			[["spec", "goTemplate"], "boolean"],
			[["spec", "generators"], "array"],
			[["spec", "templatePatch"], "string"],
			[["spec", "template"], "object"],
			[["spec", "template", "metadata"], "object"],
			[["spec", "template", "metadata", "name"], "string"],
			[["spec", "template", "metadata", "labels"], "object"],
			[["spec", "template", "metadata", "labels", "*"], "string"],
			[["spec", "template", "metadata", "annotations"], "object"],
			[["spec", "template", "metadata", "annotations", "kargo.akuity.io/authorized-stage"], "string"],
		],
		under(["spec", "generators", "[]"], generator_fields),
		under(["spec", "generators", "[]", "matrix", "generators", "[]"], generator_fields),
		under(["spec", "generators", "[]", "merge", "generators", "[]"], generator_fields),
		under(["spec", "template", "spec"], application_spec),
	]),
	"Stage": flat([
		metadata_fields,
		[
			[["spec"], "object"],
			[["spec", "promotionTemplate"], "object"],
			[["spec", "promotionTemplate", "spec"], "object"],
		],
		under(["spec", "vars"], var_fields),
		under(["spec", "promotionTemplate", "spec", "vars"], var_fields),
		under(["spec", "promotionTemplate", "spec", "steps"], step_fields),
	]),
	"PromotionTask": task_fields,
	"ClusterPromotionTask": task_fields,
}

# Fields of Kargo versions before v1.x (not in the current CRDs or schemas),
# still read: promotionMechanisms and desiredCommitFromStep.
legacy_fields := {"Stage": [
	[["spec", "promotionMechanisms"], "object"],
	[["spec", "promotionMechanisms", "gitRepoUpdates"], "array"],
	[["spec", "promotionMechanisms", "gitRepoUpdates", "[]"], "object"],
	[["spec", "promotionMechanisms", "gitRepoUpdates", "[]", "repoURL"], "string"],
	[["spec", "promotionMechanisms", "gitRepoUpdates", "[]", "writeBranch"], "string"],
]}

push_fields := [
	[["path"], "string"],
	[["targetBranch"], "string"],
	[["generateTargetBranch"], "boolean"],
]

# config_fields are the fields of the step configs the model reads, by step;
# the step's config is opaque to the CRDs, so its types come from Kargo's step
# config schemas (<step>-config.json).
config_fields := {
	"git-clone": [
		[["repoURL"], "string"],
		[["checkout"], "array"],
		[["checkout", "[]"], "object"],
		[["checkout", "[]", "branch"], "string"],
		[["checkout", "[]", "commit"], "string"],
		[["checkout", "[]", "tag"], "string"],
		[["checkout", "[]", "path"], "string"],
	],
	"git-push": push_fields,
	"github-push": push_fields,
	"git-open-pr": [
		[["targetBranch"], "string"],
		[["sourceBranch"], "string"],
	],
	"argocd-update": [
		[["apps"], "array"],
		[["apps", "[]"], "object"],
		[["apps", "[]", "name"], "string"],
		[["apps", "[]", "namespace"], "string"],
		[["apps", "[]", "selector"], "object"],
		[["apps", "[]", "selector", "matchLabels"], "object"],
		[["apps", "[]", "selector", "matchLabels", "*"], "string"],
		[["apps", "[]", "selector", "matchExpressions"], "array"],
		[["apps", "[]", "selector", "matchExpressions", "[]"], "object"],
		[["apps", "[]", "selector", "matchExpressions", "[]", "key"], "string"],
		[["apps", "[]", "selector", "matchExpressions", "[]", "operator"], "string"],
		[["apps", "[]", "selector", "matchExpressions", "[]", "values"], "array"],
		[["apps", "[]", "selector", "matchExpressions", "[]", "values", "[]"], "string"],
		[["apps", "[]", "sources"], "array"],
		[["apps", "[]", "sources", "[]"], "object"],
		[["apps", "[]", "sources", "[]", "repoURL"], "string"],
		[["apps", "[]", "sources", "[]", "chart"], "string"],
		[["apps", "[]", "sources", "[]", "desiredRevision"], "string"],
		[["apps", "[]", "sources", "[]", "updateTargetRevision"], "boolean"],
	],
}

legacy_config_fields := {"argocd-update": [[["apps", "[]", "sources", "[]", "desiredCommitFromStep"], "string"]]}

# ---------------------------------------------------------------------------
# Walking the tables.

# compiled turns each table into a trie (see the problems rules of rule.rego):
#   flat: [[parent, {key: want}], ...] for the entries without wildcards;
#   d1, d2, d3: [[c0, w0, ..., element want or "", {key: want}, [[rel, want], ...]], ...]
#   for the entries with 1, 2, 3 wildcards, grouped by the path up to their
#   last wildcard: the element's own type, the single keys below it, and the
#   longer paths below it.
compiled := {kind: trie(array.concat(entries, object.get(legacy_fields, kind, []))) |
	some kind, entries in fields
}

compiled_config := {uses: trie(array.concat(entries, object.get(legacy_config_fields, uses, []))) |
	some uses, entries in config_fields
}

trie(entries) := {
	"flat": [[parent, {p[count(p) - 1]: want | some [p, want] in plain; array.slice(p, 0, count(p) - 1) == parent}] |
		some parent in {array.slice(p, 0, count(p) - 1) | some [p, _] in plain}
	],
	"d1": wild(compiled_entries, 1),
	"d2": wild(compiled_entries, 2),
	"d3": wild(compiled_entries, 3),
} if {
	plain := [[p, want] | some [p, want] in entries; not wildcard(p)]
	compiled_entries := [compile(p, want) | some [p, want] in entries; wildcard(p)]
}

wildcard(p) if {
	some k in p
	k in {"[]", "*"}
}

# wild groups the compiled entries with n wildcards by their prefix.
wild(es, n) := [array.concat(prefix, [
	elem_want(group),
	{e[0][n][0]: e[2] | some e in group; count(e[0][n]) == 1},
	[[e[0][n], e[2]] | some e in group; count(e[0][n]) > 1],
]) |
	some prefix in {head(e, n) | some e in es; count(e[1]) == n}
	group := [e | some e in es; count(e[1]) == n; head(e, n) == prefix]
]

# head is [c0, w0, c1, w1, ...] up to the last wildcard.
head(e, n) := [x | some i in numbers.range(0, n - 1); some x in [e[0][i], e[1][i]]]

elem_want(group) := [e[2] | some e in group; e[0][count(e[0]) - 1] == []][0]

elem_want(group) := "" if not has_elem(group)

has_elem(group) if {
	some e in group
	e[0][count(e[0]) - 1] == []
}

# compile splits a path at its wildcards: [chunks, wildcards, want], where
# chunks are the key lists between wildcards.
compile(p, want) := [
	[array.slice(p, bounds[i] + 1, bounds[i + 1]) | some i in numbers.range(0, count(bounds) - 2)],
	[p[j] | some j in array.slice(bounds, 1, count(bounds) - 1)],
	want,
] if {
	bounds := flat([[-1], [i | some i, k in p; k in {"[]", "*"}], [count(p)]])
}
