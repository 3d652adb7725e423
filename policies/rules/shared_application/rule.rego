# METADATA
# title: Several Stages pin one Application
# description: |
#   Two or more Stages pin `desiredRevision` on the same Argo CD Application. Each
#   promotion registers a health check expecting the Application at that Stage's
#   revision, but the Application can only be at one: at least one of the Stages
#   perpetually observes it as out of sync (Kargo's documentation warns of exactly
#   this for Applications authorized for several Stages).
# custom:
#   id: shared-application
#   severity: error
#   admission: true
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
			"Stages %s all pin desiredRevision on Application %s; it can be at only one of their revisions, so at least one of them will always see it as not synced to the desired revision.",
			[result.names(stages), key],
		),
		result.refs(array.concat([p.stage.ref | some p in pins], [pins[0].app.ref])),
		key,
		{"application": key, "stages": sort(stages)},
	)
}
