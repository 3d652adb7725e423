package lib.flipflop.rules.invalid_object_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.invalid_object as rule

fields(estate) := {fi.details.field: [fi.details.want, fi.details.got] |
	# regal ignore:with-outside-test-context
	some fi in rule.report with input as f.estate(estate)
}

test_wrong_types_are_named if {
	got := fields([
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a", "namespace": "argocd"}, "spec": {"source": 42}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "b", "namespace": "argocd"}},
		f.stage_steps("dev", [
			{"uses": "argocd-update", "config": {"apps": "x"}},
			"not-a-step",
			{"uses": "argocd-update", "config": {"apps": [{"name": 7, "sources": [{"repoURL": "r", "desiredRevision": ["a"]}]}]}},
		]),
	])
	got["spec.source"] == ["object", "number"]
	got.spec == ["object", "missing"]
	got["spec.promotionTemplate.spec.steps[0].config.apps"] == ["array", "string"]
	got["spec.promotionTemplate.spec.steps[1]"] == ["object", "string"]
	got["spec.promotionTemplate.spec.steps[2].config.apps[0].name"] == ["string", "number"]
	got["spec.promotionTemplate.spec.steps[2].config.apps[0].sources[0].desiredRevision"] == ["string", "array"]
}

test_null_steps if {
	got := fields([{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage", "metadata": {"name": "s", "namespace": "p"}, "spec": {"promotionTemplate": {"spec": {"steps": 5}}}}])
	got["spec.promotionTemplate.spec.steps"] == ["array", "number"]
}

test_well_formed_estate_is_clean if {
	count(rule.report) == 0 with input as f.estate([f.app("dev", "main"), f.stage("dev", "main", [f.pin("dev")])])
}

test_read_fields_of_every_kind if {
	got := fields([
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": 7, "namespace": "argocd", "labels": {"a": 1}}, "spec": {
			"source": {"repoURL": 5, "targetRevision": 1.0},
			"sources": [5, null],
			"syncPolicy": {"automated": {"enabled": "yes"}},
		}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "metadata": {"name": "s", "namespace": "argocd"}, "spec": {
			"goTemplate": "true",
			"generators": [{"list": {"elements": [5]}}, {"merge": {"mergeKeys": [1]}}],
		}},
	])
	got["metadata.name"] == ["string", "number"]
	got["metadata.labels.a"] == ["string", "number"]
	got["spec.source.repoURL"] == ["string", "number"]
	got["spec.source.targetRevision"] == ["string", "number"]
	got["spec.sources[0]"] == ["object", "number"]
	got["spec.sources[1]"] == ["object", "null"]
	got["spec.syncPolicy.automated.enabled"] == ["boolean", "string"]
	got["spec.goTemplate"] == ["boolean", "string"]
	got["spec.generators[0].list.elements[0]"] == ["object", "number"]
	got["spec.generators[1].merge.mergeKeys[0]"] == ["string", "number"]
}

# Kargo evaluates expressions in a step's config and a var's value before the
# step runs: an expression stands for any type there.
test_expressions_stand_for_any_type_in_configs if {
	got := fields([f.stage_steps("dev", [
		{"uses": "git-push", "config": {"path": "./repo", "generateTargetBranch": "${{ vars.generate }}"}},
		{"uses": "git-push", "config": {"path": "./repo", "generateTargetBranch": "yes"}},
	])])
	not got["spec.promotionTemplate.spec.steps[0].config.generateTargetBranch"]
	got["spec.promotionTemplate.spec.steps[1].config.generateTargetBranch"] == ["boolean", "string"]
}

# A map (labels) is not walked like an array, nor an array like a map.
test_wildcards_follow_the_container_type if {
	got := fields([{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a", "namespace": "argocd", "labels": ["x"]}, "spec": {"sources": {"a": 1}}}])
	got["metadata.labels"] == ["object", "array"]
	got["spec.sources"] == ["array", "object"]
	count(got) == 2
}

# Every table entry is walked: the trie holds as many checks as the tables.
test_every_entry_is_walked if {
	every kind, entries in rule.fields {
		trie_size(rule.compiled[kind]) == count(entries) + count(object.get(rule.legacy_fields, kind, []))
	}
	every uses, entries in rule.config_fields {
		trie_size(rule.compiled_config[uses]) == count(entries) + count(object.get(rule.legacy_config_fields, uses, []))
	}
}

trie_size(t) := sum([count(children) | some [_, children] in t.flat]) + sum([n |
	some d in ["d1", "d2", "d3"]
	some g in t[d]
	n := (count(g[count(g) - 1]) + count(g[count(g) - 2])) + to_number(g[count(g) - 3] != "")
])

test_nested_generators if {
	nested := [{"list": {"elements": [5]}}, {"merge": {"mergeKeys": [true]}}]
	got := fields([{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": {"name": "s", "namespace": "argocd"},
		"spec": {"generators": [{"matrix": {"generators": nested}}]},
	}])
	got["spec.generators[0].matrix.generators[0].list.elements[0]"] == ["object", "number"]
	got["spec.generators[0].matrix.generators[1].merge.mergeKeys[0]"] == ["string", "boolean"]
}
