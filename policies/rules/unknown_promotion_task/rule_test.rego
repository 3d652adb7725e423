package lib.flipflop.rules.unknown_promotion_task_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.rules.unknown_promotion_task as rule
import data.lib.flipflop.rules.unreachable_desired_revision

task(kind, ns, name) := {
	"apiVersion": "kargo.akuity.io/v1alpha1", "kind": kind,
	"metadata": {"name": name, "namespace": ns},
	"spec": {"steps": [{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./out"}]}}]},
}

uses_task(ref) := f.stage_steps("dev", [{"task": ref}])

test_missing_task if {
	findings := rule.report with input as f.estate([uses_task({"name": "promote"})])
	count(findings) == 1
	some finding in findings
	finding.details == {"stage": "acme/dev", "step": "task-0", "task": "acme/promote", "kind": "PromotionTask", "similar": []}
	finding.severity == "warning"
}

test_defined_task if {
	count(rule.report) == 0 with input as f.estate([task("PromotionTask", "acme", "promote"), uses_task({"name": "promote"})])
}

test_task_in_other_project if {
	some finding in rule.report with input as f.estate([task("PromotionTask", "shared", "promote"), uses_task({"name": "promote"})])
	finding.details.similar == ["PromotionTask shared/promote"]
	contains(finding.message, "Defined with that name: PromotionTask shared/promote.")
}

test_cluster_task_without_kind if {
	some finding in rule.report with input as f.estate([task("ClusterPromotionTask", "", "promote"), uses_task({"name": "promote"})])
	finding.details.similar == ["ClusterPromotionTask promote"]
}

test_cluster_task_missing if {
	some finding in rule.report with input as f.estate([uses_task({"name": "promote", "kind": "ClusterPromotionTask"})])
	finding.details.task == "promote"
	finding.details.kind == "ClusterPromotionTask"
}

test_cluster_task_defined if {
	estate := f.estate([task("ClusterPromotionTask", "", "promote"), uses_task({"name": "promote", "kind": "ClusterPromotionTask"})])
	count(rule.report) == 0 with input as estate
}

# A Stage with an unknown task: its writes are unknown, so a pin of its own commit
# on a branch its known steps do not push is not called unreachable.
test_unknown_task_makes_writes_unknown if {
	stage := f.stage_steps("dev", [
		{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "env/dev", "path": "./repo"}]}},
		{"uses": "git-push", "as": "push", "config": {"path": "./repo"}},
		{"task": {"name": "also-push"}},
		{"uses": "argocd-update", "config": {"apps": [f.pin("dev")]}},
	])
	estate := f.estate([f.app("dev", "main"), stage])
	"acme/dev" in model.unknown_steps with input as estate
	count(unreachable_desired_revision.report) == 0 with input as estate
	steps := stage.spec.promotionTemplate.spec.steps
	without_task := f.estate([f.app("dev", "main"), f.stage_steps("dev", [steps[0], steps[1], steps[3]])])
	count(unreachable_desired_revision.report) == 1 with input as without_task
}
