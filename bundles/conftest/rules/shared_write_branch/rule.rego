# METADATA
# title: Several Stages push to one branch
# description: |
#   Two or more Stages push to the same branch of the same repository. Their
#   pushes race (non-fast-forward retries, rebases), a Warehouse watching that
#   branch sees every promotion as new Freight unless path filters exclude it, and
#   any Stage that pins desiredRevision on an Application tracking that branch will
#   flip-flop. Not an error by itself: many estates write one branch on purpose
#   and omit desiredRevision.
# custom:
#   id: shared-write-branch
#   severity: warning
#   remediation: |
#     Prefer a branch per Stage (render into env/<stage> and push there). If all
#     Stages must write one branch, keep each Stage to its own paths, give the
#     Warehouse includePaths/excludePaths so promotions do not create Freight, and do
#     not pin desiredRevision on Applications that track that branch.
package lib.flipflop.rules.shared_write_branch

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some key, writes in model.writers_by_pointer
	writes[0].pointer.floating
	stages := {w.stage.key | some w in writes}
	count(stages) > 1
	pointer := model.describe(writes[0].pointer)
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("Stages %s all push to %s.", [result.names(stages), pointer]),
		result.refs([w.stage.ref | some w in writes]),
		key,
		{"pointer": pointer, "stages": sort(stages)},
	)
}
