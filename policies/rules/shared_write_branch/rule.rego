# METADATA
# title: Several Stages push to one branch
# description: |
#   Two or more Stages push to the same branch of the same repository. Their
#   pushes race (non-fast-forward retries, rebases), a Warehouse watching that
#   branch sees every promotion as new Freight unless path filters exclude it, and
#   any Stage that pins desiredRevision on an Application tracking that branch will
#   flip-flop. Not an error by itself: many estates write one branch on purpose
#   and omit desiredRevision.
# related_resources:
#   - ref: https://github.com/akuity/kargo/issues/3071
#     description: akuity/kargo#3071, git-push races when many Stages push to one repository
#   - ref: https://github.com/akuity/kargo/issues/3923
#     description: akuity/kargo#3923, non-fast-forward pushes
#   - ref: https://github.com/akuity/kargo/issues/1270
#     description: akuity/kargo#1270, Warehouse path filters
#   - ref: https://github.com/akuity/kargo/issues/4113
#     description: akuity/kargo#4113, excluding the commits Kargo makes
#   - ref: https://github.com/akuity/kargo/blob/main/docs/docs/50-user-guide/30-patterns/index.md
#     description: Kargo patterns (stage-specific branches, writing to one branch, pseudo-GitOps)
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/git-push
#     description: Kargo reference, the git-push step (targetBranch, maxAttempts)
# custom:
#   id: shared-write-branch
#   severity: warning
#   why: |
#     Every Stage that pushes to the branch clones it, commits and pushes. When two
#     promotions overlap, a push is rejected as non-fast-forward; Kargo integrates the
#     remote changes and retries (`maxAttempts`, 10 by default), so the pushed commit can
#     differ from the `git-commit` step's output. A Warehouse that subscribes to the
#     branch without `includePaths` or `excludePaths` sees every promotion's commit as
#     new Freight, the feedback loop Kargo's patterns documentation warns about. And as
#     soon as one of these Stages pins `desiredRevision` on an Application that tracks
#     the branch, its health flip-flops (shared-branch-contradiction,
#     foreign-branch-writer). Kargo's maintainers prefer that no two Stages' promotion
#     processes write to the same branch, and the Kargo quickstart recommends
#     stage-specific branches.
#   remediation: |
#     Prefer a branch per Stage (render into env/<stage> and push there). If all
#     Stages must write one branch, keep each Stage to its own paths, give the
#     Warehouse includePaths/excludePaths so promotions do not create Freight, and do
#     not pin desiredRevision on Applications that track that branch.
package lib.flipflop.rules.shared_write_branch

import data.lib.flipflop.model
import data.lib.flipflop.result
import data.lib.flipflop.stages

report contains finding if {
	some key, writes in model.writers_by_pointer
	writes[0].pointer.floating
	stage_keys := {w.stage.key | some w in writes}
	count(stage_keys) > 1
	pointer := model.text({w.pointer | some w in writes})
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("Stages %s all push to %s.%s", [result.names(stage_keys), pointer, stages.unknown_note([w.stage | some w in writes])]),
		result.refs([w.stage.ref | some w in writes]),
		key,
		result.about({w.pointer | some w in writes}, stage_keys, [], [], {w.id | some w in writes}),
		{"pointer": pointer, "stages": sort(stage_keys)},
	)
}
