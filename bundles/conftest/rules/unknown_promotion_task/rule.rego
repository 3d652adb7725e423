# METADATA
# title: A Stage runs a PromotionTask that is not among the inputs
# description: |
#   A Stage's promotion step `task:` names a PromotionTask (in the Stage's project)
#   or a ClusterPromotionTask that none of the checked manifests defines. If it does
#   not exist, Kargo rejects every Promotion of the Stage, because it cannot inflate
#   the task's steps. If it exists elsewhere, flipflop cannot see the steps, so what
#   the Stage pushes and pins is unknown: the other rules then neither clear nor
#   condemn the Stage on what those steps would do.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-tasks
#     description: Kargo reference, PromotionTasks and ClusterPromotionTasks
# custom:
#   id: unknown-promotion-task
#   severity: warning
#   why: |
#     When a Promotion is created, Kargo replaces every `task:` step with the steps of
#     the PromotionTask it names (looked up in the Stage's project namespace) or of the
#     ClusterPromotionTask (`kind: ClusterPromotionTask`). When that task does not
#     exist, the Promotion is rejected:
#
#     > `inflate task steps for task "<name>" ("<alias>"): promotiontasks.kargo.akuity.io "<name>" not found`
#
#     so the Stage can never be promoted. A misspelt name, a task defined in another
#     project, or a ClusterPromotionTask referenced without `kind: ClusterPromotionTask`
#     all end this way. When the task does exist but is not among the checked files,
#     flipflop does not know its steps: the Stage's pushes and `argocd-update` pins are
#     treated as unknown (never as absent), so no contradiction involving them can be
#     found or ruled out.
#   remediation: |
#     Check the task's name and kind (a ClusterPromotionTask needs
#     kind: ClusterPromotionTask; a PromotionTask must live in the Stage's project
#     namespace), and include the manifest that defines it in the check so that the
#     Stage's steps can be checked too.
package lib.flipflop.rules.unknown_promotion_task

import data.lib.flipflop.objects
import data.lib.flipflop.result
import data.lib.flipflop.stages

report contains finding if {
	some s in stages.records
	some step in s.steps
	step.task_resolved == false
	ref := step.task_ref
	ref.name != ""
	task := task_key(ref)
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"Stage %s's step %q runs %s %s, which no input defines.",
				"If it does not exist, Kargo rejects every Promotion of the Stage (\"not found\");",
				"if it is defined elsewhere, what its steps push and pin is unknown to flipflop.%s",
			]),
			[s.key, step.alias, ref.kind, task, hint(ref)],
		),
		result.refs([s.ref]),
		sprintf("%s|%s|%s", [s.key, step.alias, task]),
		{"stage": s.key, "step": step.alias, "task": task, "kind": ref.kind, "similar": similar(ref)},
	)
}

task_key(ref) := ref.name if ref.kind == "ClusterPromotionTask"

task_key(ref) := sprintf("%s/%s", [ref.namespace, ref.name]) if ref.kind == "PromotionTask"

# similar lists defined tasks the reference may have meant: the same name in
# another namespace or of the other kind.
similar(ref) := sort(array.concat(
	[sprintf("PromotionTask %s/%s", [o.ref.namespace, o.ref.name]) |
		some o in objects.promotion_tasks
		o.ref.name == ref.name
		not same_task(o.ref, ref)
	],
	[sprintf("ClusterPromotionTask %s", [o.ref.name]) |
		some o in objects.cluster_promotion_tasks
		o.ref.name == ref.name
		ref.kind == "PromotionTask"
	],
))

same_task(r, ref) if {
	ref.kind == "PromotionTask"
	r.namespace == ref.namespace
}

hint(ref) := sprintf(" Defined with that name: %s.", [concat(", ", similar(ref))]) if {
	count(similar(ref)) > 0
} else := ""
