package lib.flipflop.rules.invalid_object_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.invalid_object as rule

fields(estate) := {fi.details.field: [fi.details.want, fi.details.got] |
	# regal ignore:with-outside-test-context
	some fi in rule.report with input as f.estate(estate)
}

app(spec) := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a", "namespace": "argocd"}, "spec": spec}

spec := {"project": "default", "destination": {}}

test_wrong_types_are_named if {
	got := fields([
		app(object.union(spec, {"source": 42})),
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "b", "namespace": "argocd"}},
		f.stage_steps("dev", [
			{"uses": "argocd-update", "config": {"apps": "x"}},
			"not-a-step",
		]),
	])
	got["spec.source"] == ["object", "number"]
	got.spec == ["present", "missing"]
	got["spec.promotionTemplate.spec.steps[1]"] == ["object", "string"]

	# a step's config is Kargo's to check (invalid-step-config)
	not got["spec.promotionTemplate.spec.steps[0].config.apps"]
}

# A finding names the field, its JSON pointer, what the CRD wants and the
# release the CRD is read from.
test_message if {
	some fi in rule.report with input as f.estate([app(object.union(spec, {"source": {"repoURL": "r", "targetRevision": 1.0}}))])
	fi.message == concat("", [
		"Application argocd/a: spec.source.targetRevision is a number, want string ",
		"(Argo CD v3.5.1's Application CRD, at /spec/source/targetRevision); ",
		"flipflop reads around it, so what it should say is not checked.",
	])
	fi.details.pointer == "/spec/source/targetRevision"
	fi.details.version == "Argo CD v3.5.1"
	fi.key == "Application/argocd/a|spec.source.targetRevision"
}

test_well_formed_estate_is_clean if {
	count(rule.report) == 0 with input as f.estate([f.app("dev", "main"), f.stage("dev", "main", [f.pin("dev")])])
}

# A field that is not required may be null (the API server drops it); an
# element of a list may not.
test_null if {
	got := fields([app(object.union(spec, {"source": null, "sources": [null]}))])
	got == {"spec.sources[0]": ["object", "null"]}
}

test_fields_of_every_kind_at_any_depth if {
	got := fields([
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": 7, "namespace": "argocd", "labels": {"a": 1}}, "spec": object.union(spec, {
			"source": {"repoURL": 5, "targetRevision": 1.0, "helm": {"valueFiles": "v.yaml"}},
			"sources": [5],
			"syncPolicy": {"automated": {"enabled": "yes"}},
		})},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "metadata": {"name": "s", "namespace": "argocd"}, "spec": {
			"goTemplate": "true",
			"template": {"metadata": {}, "spec": spec},
			"generators": [{"list": {"elements": [5]}}, {"merge": {"mergeKeys": [1], "generators": []}}],
		}},
	])
	got["metadata.name"] == ["string", "number"]
	got["metadata.labels.a"] == ["string", "number"]
	got["spec.source.repoURL"] == ["string", "number"]
	got["spec.source.targetRevision"] == ["string", "number"]
	got["spec.source.helm.valueFiles"] == ["array", "string"]
	got["spec.sources[0]"] == ["object", "number"]
	got["spec.syncPolicy.automated.enabled"] == ["boolean", "string"]
	got["spec.goTemplate"] == ["boolean", "string"]
	got["spec.generators[1].merge.mergeKeys[0]"] == ["string", "number"]

	# a list generator's element is any JSON value to the CRD (Argo CD reads it
	# when it generates; flipflop reads around one that is no object)
	not got["spec.generators[0].list.elements[0]"]
}

# A map (labels) is not read like an array, nor an array like a map; a key
# with dots in it is named as it is.
test_containers_and_dotted_keys if {
	got := fields([{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": {"name": "a", "namespace": "argocd", "labels": ["x"], "annotations": {"kargo.akuity.io/authorized-stage": 1}},
		"spec": object.union(spec, {"sources": {"a": 1}}),
	}])
	got["metadata.labels"] == ["object", "array"]
	got["metadata.annotations.kargo.akuity.io/authorized-stage"] == ["string", "number"]
	got["spec.sources"] == ["array", "object"]
	count(got) == 3
}

# Enum and pattern: a task step's kind, a var's name. Every host reports the
# same, whether its OPA honours patterns or not (the policies test them).
test_enum_and_pattern if {
	stage := f.full_stage("dev", {
		"requestedFreight": f.freight,
		"vars": [{"name": "1st", "value": "x"}],
		"promotionTemplate": {"spec": {"steps": [{"task": {"name": "t", "kind": "Task"}}]}},
	})
	got := [[x.details.field, x.details.problem, x.details.want] | some x in rule.report] with input as f.estate([stage])
	got == [
		["spec.promotionTemplate.spec.steps[0].task.kind", "enum", `spec.promotionTemplate.spec.steps[0].task.kind must be one of the following: "PromotionTask", "ClusterPromotionTask", null`],
		["spec.vars[0].name", "pattern", `^[a-zA-Z_]\w*$`],
	]
}

test_nested_generators if {
	nested := [{"list": {"elements": [], "template": 5}}, {"merge": {"mergeKeys": [true], "generators": []}}]
	got := fields([{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": {"name": "s", "namespace": "argocd"},
		"spec": {"template": {"metadata": {}, "spec": spec}, "generators": [{"matrix": {"generators": nested}}]},
	}])
	got["spec.generators[0].matrix.generators[0].list.template"] == ["object", "number"]

	# a generator nested in a matrix or merge is any JSON value below its
	# kind to the CRD (Argo CD reads it when it generates)
	not got["spec.generators[0].matrix.generators[1].merge.mergeKeys[0]"]
}

# A Stage written for Kargo v0.8 or earlier asks for its Freight through
# subscriptions: read as legacy (no Kargo version named, or one before v1.0),
# it lacks no requestedFreight; once the run names a later Kargo, it does.
test_legacy_stage_lacks_no_requested_freight if {
	stage := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": {"name": "dev", "namespace": "acme"},
		"spec": {"subscriptions": {"warehouse": "w"}, "promotionMechanisms": {"gitRepoUpdates": []}},
	}
	fields([stage]) == {}
	got := [x.details.field | some x in rule.report] with input as f.estate([stage])
		with data.lib.flipflop.config.settings as {"kargo_version": "v1.0.0"}
	got == ["spec.requestedFreight"]
}
