# METADATA
# title: Several Stages pin one Application
# description: |
#   Two or more Stages pin `desiredRevision` on the same Argo CD Application. Each
#   promotion registers a health check expecting the Application at that Stage's
#   revision, but the Application can only be at one: at least one of the Stages
#   perpetually observes it as out of sync (Kargo's documentation warns of exactly
#   this for Applications authorized for several Stages).
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (desiredRevision, updateTargetRevision)
#   - ref: https://docs.kargo.io/user-guide/reference-docs/annotations
#     description: Kargo reference, annotations (kargo.akuity.io/authorized-stage)
#   - ref: https://github.com/akuity/kargo/pull/2540
#     description: akuity/kargo#2540, two Stages syncing one Application
#   - ref: https://github.com/akuity/kargo/issues/6027
#     description: akuity/kargo#6027, authorizing several Stages for one Application (Kargo v1.11)
#   - ref: https://github.com/akuity/kargo/issues/5553
#     description: akuity/kargo#5553, conflicting desired revisions on one Application keep a Stage Unhealthy
# custom:
#   id: shared-application
#   severity: error
#   admission: true
#   fixable: true
#   diagnose: shared-app
#   why: |
#     Every promotion of each Stage registers a health check that expects the
#     Application at that Stage's revision. An Application source has one
#     `status.sync.revision`, so whenever the Stages' revisions differ, all of them but
#     one report
#
#     > `Not all sources of Application "<app>" in namespace "<ns>" are synced to the
#     > desired revisions. Issues: Source 0 with RepoURL <url> of Application "<app>" in
#     > namespace "<ns>" does not match the desired revision "<sha>".`
#
#     Kargo's Argo CD integration documentation warns that Stages sharing an Application
#     must not disagree about its desired state, or "at least one of them will
#     perpetually observe the Application as out of sync". When the Stages also sync the
#     Application, one Stage's sync can undo the other's, and Kargo keeps re-syncing
#     until the step times out.
#   remediation: |
#     Give each Stage its own Application (one per environment), or let only one of
#     the Stages pin desiredRevision on the shared Application and have the others
#     run argocd-update without sources[].desiredRevision (or argocd-wait).
package lib.flipflop.rules.shared_application

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some key, pins in model.pins_by_app
	stages := {p.stage.key | some p in pins}
	count(stages) > 1
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			"Stages %s all pin desiredRevision on Application %s; it can be at only one of their revisions, so at least one of them will always see it as not synced to the desired revision.%s",
			[result.names(stages), key, model.pin_notes(pins)],
		),
		result.refs(array.concat([p.stage.ref | some p in pins], [pins[0].app.ref])),
		key,
		result.about([], stages, [key], {p.id | some p in pins}, []),
		{"application": key, "stages": sort(stages)},
	)
}
