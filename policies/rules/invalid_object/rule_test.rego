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
