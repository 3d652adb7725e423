package lib.flipflop.rules.duplicate_object_test

import data.flipflop
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.duplicate_object as rule

at(path, line, obj) := {"path": path, "line": line, "contents": obj}

stage(ns, name) := {"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage", "metadata": {"name": name, "namespace": ns}, "spec": {}}

task(kind, meta) := {"apiVersion": "kargo.akuity.io/v1alpha1", "kind": kind, "metadata": meta, "spec": {"steps": []}}

# other is obj with something else in it: another definition of the same object.
other(obj) := object.union(obj, {"metadata": {"annotations": {"flipflop.dev/ignore": "shared-branch-contradiction: ours"}}})

test_one_stage_in_two_files if {
	findings := rule.report with input as [at("shop/kargo.yaml", 3, stage("shop", "dev")), at("mallory/copy.yaml", 1, other(stage("shop", "dev")))]
	count(findings) == 1
	some finding in findings
	finding.severity == "error"
	finding.key == "Stage/shop/dev"
	finding.details.documents == ["mallory/copy.yaml:1", "shop/kargo.yaml:3"]
	[r.file | some r in finding.resources] == ["mallory/copy.yaml", "shop/kargo.yaml"]
	finding.stages == ["shop/dev"]
	contains(finding.message, "Stage shop/dev is defined by 2 documents that differ: ")
}

# The same document read twice (a path given twice), or copied unchanged, gives
# Kubernetes the same object whichever is applied last.
test_same_content if {
	count(rule.report) == 0 with input as [at("kargo.yaml", 3, stage("shop", "dev")), at("kargo.yaml", 3, stage("shop", "dev"))]
	count(rule.report) == 0 with input as [at("prod/stages.yaml", 3, stage("shop", "dev")), at("staging/stages.yaml", 3, stage("shop", "dev"))]
}

# The version is not part of an object's identity; the group is.
test_versions_of_one_group if {
	beta := object.union(stage("shop", "dev"), {"apiVersion": "kargo.akuity.io/v1beta1"})
	count(rule.report) == 1 with input as [at("a.yaml", 1, stage("shop", "dev")), at("b.yaml", 1, beta)]
}

test_other_namespace_kind_or_name if {
	app := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "dev", "namespace": "shop"}, "spec": {}}
	count(rule.report) == 0 with input as [
		at("a.yaml", 1, stage("shop", "dev")),
		at("a.yaml", 9, stage("web", "dev")),
		at("a.yaml", 20, stage("shop", "qa")),
		at("b.yaml", 1, app),
	]
}

# Without metadata.namespace, the namespace is whatever the file is applied to:
# never the same as a written one, the same as another only within one file.
test_unknown_namespace if {
	bare := task("PromotionTask", {"name": "promote"})
	placed := task("PromotionTask", {"name": "promote", "namespace": "shop"})
	count(rule.report) == 0 with input as [at("a.yaml", 1, bare), at("b.yaml", 1, placed)]
	count(rule.report) == 0 with input as [at("a.yaml", 1, bare), at("b.yaml", 1, other(bare))]
	some finding in rule.report with input as [at("a.yaml", 1, bare), at("a.yaml", 9, other(bare))]
	finding.key == "PromotionTask//promote (a.yaml)"
	finding.details.documents == ["a.yaml:1", "a.yaml:9"]
}

# Documents of one file rendered by two charts or kustomizations are two renders.
test_unknown_namespace_other_render if {
	bare := task("PromotionTask", {"name": "promote"})
	count(rule.report) == 0 with input as [
		object.union(at("base/task.yaml", 1, bare), {"renderedBy": "kustomize overlays/dev"}),
		object.union(at("base/task.yaml", 1, other(bare)), {"renderedBy": "kustomize overlays/prod"}),
	]
}

# One document read by two kustomizations (a base built on its own, and an
# overlay that patches it) is two readings, not two documents: which one an
# Application applies is not in the files (issue 39). Two documents still are,
# rendered or not.
test_readings_of_one_document if {
	count(rule.report) == 0 with input as [
		object.union(at("base/kargo.yaml", 3, stage("shop", "dev")), {"renderedBy": "kustomize base"}),
		object.union(at("base/kargo.yaml", 3, other(stage("shop", "dev"))), {"renderedBy": "kustomize overlay"}),
	]
	count(rule.report) == 1 with input as [
		object.union(at("base/kargo.yaml", 3, stage("shop", "dev")), {"renderedBy": "kustomize base"}),
		object.union(at("overlay/kargo.yaml", 3, other(stage("shop", "dev"))), {"renderedBy": "kustomize overlay"}),
	]
}

# A ClusterPromotionTask has no namespace: one written anyway changes nothing.
test_cluster_scoped if {
	count(rule.report) == 1 with input as [
		at("a.yaml", 1, task("ClusterPromotionTask", {"name": "promote"})),
		at("b.yaml", 1, task("ClusterPromotionTask", {"name": "promote", "namespace": "shop"})),
	]
}

test_without_a_name if {
	count(rule.report) == 0 with input as [at("a.yaml", 1, stage("shop", "")), at("b.yaml", 1, stage("shop", ""))]
}

# conftest gives no lines: two documents of one file that define one object
# differently have one ref there, listed once.
test_without_lines if {
	count(rule.report) == 1 with input as [f.entry(stage("shop", "dev")), {"path": "other.yaml", "contents": other(stage("shop", "dev"))}]
	some finding in rule.report with input as [f.entry(stage("shop", "dev")), f.entry(other(stage("shop", "dev")))]
	count(finding.resources) == 1
	contains(finding.message, "defined by 2 documents")
}

# The hostile case of issue 20: an 8-line copy of another project's Stage,
# carrying an annotation, in a file its owners do not review. The real Stage's
# contradiction stays reported, unwaived, with the duplicate beside it.
test_copied_stage_waives_nothing if {
	skeleton := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": {"name": "dev", "namespace": "acme", "annotations": {"flipflop.dev/ignore": "shared-branch-contradiction, duplicate-object: known"}},
		"spec": {},
	}
	estate := [
		at("argocd.yaml", 1, f.app("dev", "main")),
		at("argocd.yaml", 20, f.app("qa", "main")),
		at("kargo.yaml", 1, f.stage("dev", "main", [f.pin("dev")])),
		at("kargo.yaml", 30, f.stage("qa", "main", [f.pin("qa")])),
		at("zz-mallory.yaml", 1, skeleton),
	]
	findings := flipflop.findings with input as estate
	some contradiction in findings
	contradiction.rule == "shared-branch-contradiction"
	not contradiction.waived
	not "zz-mallory.yaml" in {r.file | some r in contradiction.resources}
	some duplicate in findings
	duplicate.rule == "duplicate-object"
	not duplicate.waived
	{r.file | some r in duplicate.resources} == {"kargo.yaml", "zz-mallory.yaml"}
}

# Without the copy, the same annotation on the real Stage waives the finding.
test_annotation_on_the_real_stage_waives if {
	ann := {"metadata": {"annotations": {"flipflop.dev/ignore": "shared-branch-contradiction: migrating"}}}
	estate := [
		at("argocd.yaml", 1, f.app("dev", "main")),
		at("argocd.yaml", 20, f.app("qa", "main")),
		at("kargo.yaml", 1, object.union(f.stage("dev", "main", [f.pin("dev")]), ann)),
		at("kargo.yaml", 30, f.stage("qa", "main", [f.pin("qa")])),
	]
	some contradiction in flipflop.findings with input as estate
	contradiction.rule == "shared-branch-contradiction"
	contradiction.waived.reason == "migrating"
}

# A full copy carrying the annotation is read (its pins count), but an object
# defined twice waives nothing: neither document's annotation counts.
test_full_copy_waives_nothing if {
	ann := {"metadata": {"annotations": {"flipflop.dev/ignore": "shared-branch-contradiction, duplicate-object: known"}}}
	estate := [
		at("argocd.yaml", 1, f.app("dev", "main")),
		at("argocd.yaml", 20, f.app("qa", "main")),
		at("kargo.yaml", 1, f.stage("dev", "main", [f.pin("dev")])),
		at("kargo.yaml", 30, f.stage("qa", "main", [f.pin("qa")])),
		at("zz-mallory.yaml", 1, object.union(f.stage("dev", "main", [f.pin("dev")]), ann)),
	]
	findings := flipflop.findings with input as estate
	some contradiction in findings
	contradiction.rule == "shared-branch-contradiction"
	not contradiction.waived
	some duplicate in findings
	duplicate.rule == "duplicate-object"
	not duplicate.waived
}

# A waiver of the settings (given by whoever runs the check) may still waive it.
test_configured_waiver if {
	settings := {"waivers": [{"rule": "duplicate-object", "resources": ["Stage/shop/dev"], "reason": "migrating"}]}
	some finding in flipflop.findings with input as [at("a.yaml", 1, stage("shop", "dev")), at("b.yaml", 1, other(stage("shop", "dev")))]
		with data.flipflop_settings as settings
	finding.rule == "duplicate-object"
	finding.waived.reason == "migrating"
}
