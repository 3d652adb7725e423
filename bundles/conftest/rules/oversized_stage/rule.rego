# METADATA
# title: A Stage pairs more pushes with pull requests than flipflop follows
# description: |
#   A Stage pushes to generated branches (`generateTargetBranch: true`) that no
#   `git-open-pr` step names in its `sourceBranch`, and it has so many
#   `git-open-pr` steps that pairing each such push with each of them, as
#   flipflop does when it cannot tell which pull request carries which branch,
#   would make more than 100 writes to follow. flipflop does not pair them: where
#   those pushes land is read as unknown, matches nothing and proves nothing, and
#   the rest of the estate (the Stage's other pushes included) is checked as
#   usual.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/git-open-pr
#     description: Kargo reference, the git-open-pr step and its sourceBranch
# custom:
#   id: oversized-stage
#   severity: warning
#   why: |
#     A push with `generateTargetBranch: true` lands on a new branch; a
#     `git-open-pr` step then opens a pull request from it into a branch others
#     track. When the pull request's `sourceBranch` reads the push's output
#     (`${{ outputs.<alias>.branch }}`), flipflop knows which branch the push
#     finally writes. When no `git-open-pr` names it, any of the Stage's pull
#     requests may carry it, so each such push is paired with each of them: n
#     pushes and n pull requests make n² writes, and a run's time and memory
#     would grow with the product rather than with the input (800 of each, 200 KB,
#     took 160 s and 2.75 GB). Past 100 pairs for one Stage flipflop stops pairing
#     them: where those pushes land is unknown, so a branch they would share with
#     another Stage, or move under a pinned Application, is neither found nor ruled
#     out.
#   remediation: |
#     Name the branch each push generates in the `sourceBranch` of the
#     `git-open-pr` step that carries it (`sourceBranch: ${{ outputs.<alias>.branch }}`,
#     or `task.outputs.<alias>.branch` inside a PromotionTask): each push is then
#     followed through its own pull request. If the Stage really pushes to that many
#     branches, split its promotion between Stages.
package lib.flipflop.rules.oversized_stage

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some u in model.oversized_stages
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"Stage %s pushes to %d generated branches that no git-open-pr step names, and has %d git-open-pr steps:",
				"%d pairs, more than the %d flipflop follows for one Stage.",
				"Where those pushes land is read as unknown: no finding depends on it.",
			]),
			[u.key, u.pushes, u.pullRequests, u.pushes * u.pullRequests, model.max_unlinked_pairs],
		),
		[u.ref],
		sprintf("Stage/%s", [u.key]),
		result.nothing,
		{"stage": u.key, "pushes": u.pushes, "pullRequests": u.pullRequests, "maxPairs": model.max_unlinked_pairs},
	)
}
