# METADATA
# title: Another Stage moves the branch a pinned Application tracks
# description: |
#   A Stage pins `desiredRevision` on an Application that tracks a floating
#   pointer (a branch, or HEAD), and another Stage pushes to that same branch
#   without pinning it. Every push by the other Stage moves the branch head, Argo CD
#   reports the new commit in `status.sync.revision`, and the pinning Stage turns
#   Unhealthy ("does not match the desired revision") until it promotes again,
#   while Argo CD shows the Application Synced and Healthy. This is the
#   one-pinning-Stage form of the flip-flop (the mortennordbye/homelab case).
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (desiredRevision, updateTargetRevision)
#   - ref: https://github.com/mortennordbye/homelab/pull/329
#     description: mortennordbye/homelab#329, a Stage pinned on the head of a shared main
#   - ref: https://github.com/mortennordbye/homelab/pull/333
#     description: mortennordbye/homelab#333, the pin removed again (argocd-wait instead)
#   - ref: https://github.com/akuity/kargo/pull/2980
#     description: akuity/kargo#2980, stop inferring the desired revision (Stages writing the head of one branch)
#   - ref: https://github.com/akuity/kargo/blob/main/docs/docs/50-user-guide/30-patterns/index.md
#     description: Kargo patterns (stage-specific branches, writing to one branch, pseudo-GitOps)
#   - ref: https://argo-cd.readthedocs.io/en/stable/user-guide/tracking_strategies/
#     description: Argo CD, tracking strategies (branches, tags and commits as targetRevision)
# custom:
#   id: foreign-branch-writer
#   severity: error
#   admission: true
#   fixable: true
#   timeline: true
#   diagnose: foreign-writer
#   why: |
#     A Stage that sets `desiredRevision` in `argocd-update` is Healthy only while the
#     Application source's `status.sync.revision` equals the pinned commit. When another
#     Stage pushes to the branch that Application tracks, the head moves past the pinned
#     commit; at its next refresh Argo CD reports the new head, and the pinning Stage
#     turns Unhealthy with
#
#     > `Not all sources of Application "<app>" in namespace "<ns>" are synced to the
#     > desired revisions. Issues: Source 0 with RepoURL <url> of Application "<app>" in
#     > namespace "<ns>" does not match the desired revision "<sha>".`
#
#     It stays Unhealthy until it promotes again, and turns Unhealthy again at the other
#     Stage's next push, while Argo CD shows the Application Synced and Healthy. This is
#     what mortennordbye/homelab ran into: Applications on `HEAD` of `main`, a
#     `desiredRevision` pin, and Stages alternating between Healthy and Unhealthy.
#     Auto-sync does not matter: Argo CD refreshes `status.sync.revision` with or
#     without it.
#   remediation: |
#     Make the pinned Application's pointer one that only its own Stage moves, or
#     stop asking Kargo to check a revision on the shared one:
#     1. Stage-specific branches (recommended): render plain manifests and push them
#        to a branch only the pinning Stage writes (e.g. env/<stage>), and point its
#        Application's targetRevision at it.
#     2. Stop setting desiredRevision in the pinning Stage's argocd-update step (add
#        argocd-wait if you want the promotion to wait for a healthy sync); Kargo then
#        no longer checks that the Application runs the promoted commit.
#     3. updateTargetRevision: true: Kargo points the live Application at the pinned
#        commit; an ApplicationSet or parent app that re-applies targetRevision undoes it.
#     4. Turning off auto-sync is not enough on its own: Kargo compares against
#        status.sync.revision, which follows the branch head at every refresh.
package lib.flipflop.rules.foreign_branch_writer

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some key in model.pin_pointers
	pins := model.pins_by_pointer[key]
	pinners := {p.stage.key | some p in pins}
	writes := [w | some w in object.get(model.writers_by_pointer, key, []); not w.stage.key in pinners]
	count(writes) > 0
	writer_keys := {w.stage.key | some w in writes}
	pointer := model.text(array.concat([p.pointer | some p in pins], [w.pointer | some w in writes]))
	finding := result.fail(
		rego.metadata.chain(),
		message(pinners, writer_keys, pins, writes, pointer),
		result.refs(array.concat(array.concat([p.stage.ref | some p in pins], [w.stage.ref | some w in writes]), [p.app.ref | some p in pins])),
		key,
		result.about(
			array.concat([p.pointer | some p in pins], [w.pointer | some w in writes]), pinners | writer_keys, {p.app.key | some p in pins}, {p.id | some p in pins},
			{w.id | some w in object.get(model.writers_by_pointer, key, [])},
		),
		{
			"pointer": pointer,
			"pinningStages": sort(pinners),
			"writingStages": sort(writer_keys),
			"applications": sort({p.app.key | some p in pins}),
			"autoSync": model.auto_sync_by_app(pins),
		},
	)
}

message(pinners, writer_keys, pins, writes, pointer) := sprintf(
	concat(" ", [
		"Stage %s pins desiredRevision on Application %s, which tracks %s, and Stage %s pushes to that branch without pinning it.",
		"Every such push moves the head away from the pinned commit: %s turns Unhealthy (\"does not match the desired revision\")",
		"until it promotes again, while Argo CD shows the Application Synced and Healthy.%s%s",
	]),
	[
		result.names(pinners), result.names({p.app.key | some p in pins}), pointer,
		result.names(writer_keys), result.names(pinners), assumption(pins, writes), model.pin_notes(pins),
	],
)

assumption(pins, writes) := sprintf(" (HEAD was taken to be %s; set the default branch if it is not.)", [pins[0].pointer.name]) if {
	some x in array.concat(pins, writes)
	x.pointer.assumed
} else := ""
