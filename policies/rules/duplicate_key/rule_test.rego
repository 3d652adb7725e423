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
