package lib.flipflop.rules.duplicate_key_test

import data.flipflop
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.duplicate_key as rule

task := {
	"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "PromotionTask",
	"metadata": {"name": "promote", "namespace": "acme"},
	"spec": {"steps": []},
}

test_repeated_key if {
	entry := object.union(f.entry(task), {"line": 1, "duplicateKeys": [{"key": "steps", "line": 8, "first": 6}]})
	findings := rule.report with input as [entry]
	count(findings) == 1
	some finding in findings
	finding.resources == [{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "PromotionTask", "namespace": "acme", "name": "promote", "file": "test.yaml", "line": 8, "documentLine": 1}]
	finding.details == {"key": "steps", "line": 8, "first": 6}
	finding.severity == "warning"
}

test_no_repeated_key if {
	count(rule.report) == 0 with input as [f.entry(task)]
}

test_kinds_the_model_does_not_read if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
	entry := object.union(f.entry(cm), {"duplicateKeys": [{"key": "data", "line": 3, "first": 2}]})
	count(rule.report) == 0 with input as [entry]
}

# The finding points at the repeated key, and the document's own annotation
# still waives it.
test_annotation_on_the_document_waives if {
	annotated := object.union(task, {"metadata": {"annotations": {"flipflop.dev/ignore": "duplicate-key: generated"}}})
	entry := object.union(f.entry(annotated), {"line": 1, "duplicateKeys": [{"key": "steps", "line": 8, "first": 6}]})
	some finding in flipflop.findings with input as [entry]
	finding.rule == "duplicate-key"
	finding.waived.reason == "generated"
}

# A vars entry that lost its "- " repeats name and value in one mapping: one
# finding naming both, at the first repeated key; another mapping's repeated
# key is its own finding.
test_keys_one_mapping_repeats_are_one_finding if {
	entry := object.union(f.entry(task), {"line": 1, "duplicateKeys": [
		{"key": "value", "line": 10, "first": 8, "mapping": [7, 9]},
		{"key": "name", "line": 9, "first": 7, "mapping": [7, 9]},
		{"key": "uses", "line": 14, "first": 13, "mapping": [13, 9]},
	]})
	findings := rule.report with input as [entry]
	count(findings) == 2
	some two in findings
	two.resources[0].line == 9
	two.details.keys == [{"key": "name", "line": 9, "first": 7}, {"key": "value", "line": 10, "first": 8}]
	contains(two.message, `repeats the keys "name", "value" in one mapping at lines 9, 10 (first at lines 7, 8)`)
	some one in findings
	one.details == {"key": "uses", "line": 14, "first": 13}
}
