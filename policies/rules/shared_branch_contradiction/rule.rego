# METADATA
# title: Pins expect different heads of one floating pointer
# description: |
#   Kargo Stages pin `desiredRevision` (argocd-update) on Argo CD Applications
#   whose pinned sources track the same floating pointer (the head of one
#   branch, or HEAD, or a semver range), and the pins expect different commits:
#   two or more Stages, each expecting the commit its own promotion produced, or
#   one Stage expecting two of its commits. Only one commit can be the head of
#   the branch. A pin that can never be met (unreachable-desired-revision) is not
#   counted: it expects no commit that can be the head. Every promotion turns
#   one Stage Healthy and the others Unhealthy with "Source 0 with RepoURL ...
#   does not match the desired revision", while
#   Argo CD shows every Application Synced and Healthy. Kargo compares
#   `desiredRevision` with Argo CD's `status.sync.revision`, which follows the
#   branch head at every refresh, so this happens with or without auto-sync.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (desiredRevision, updateTargetRevision)
#   - ref: https://github.com/akuity/kargo/blob/main/docs/docs/80-release-notes/98-v1.1.0.md
#     description: Kargo v1.1.0 release notes (desiredRevision is checked only when given)
#   - ref: https://github.com/akuity/kargo/pull/2980
#     description: akuity/kargo#2980, stop inferring the desired revision (Stages writing the head of one branch)
#   - ref: https://github.com/akuity/kargo/issues/2952
#     description: akuity/kargo#2952, several Stages commit to the same branch
#   - ref: https://github.com/akuity/kargo/blob/main/docs/docs/50-user-guide/30-patterns/index.md
#     description: Kargo patterns (stage-specific branches, writing to one branch, pseudo-GitOps)
#   - ref: https://argo-cd.readthedocs.io/en/stable/user-guide/tracking_strategies/
#     description: Argo CD, tracking strategies (branches, tags and commits as targetRevision)
#   - ref: https://argo-cd.readthedocs.io/en/stable/operator-manual/applicationset/Controlling-Resource-Modification/
#     description: Argo CD ApplicationSet, ignoreApplicationDifferences (keeps updateTargetRevision from being undone)
# custom:
#   id: shared-branch-contradiction
#   severity: error
#   admission: true
#   fixable: true
#   timeline: true
#   diagnose: shared-pointer
#   why: |
#     Since Kargo v1.1.0, an `argocd-update` step whose `sources[]` entry sets
#     `desiredRevision` registers a health check, and the Stage re-runs it every time it
#     reconciles: the Stage is Healthy only while the Application source's
#     `status.sync.revision` (the commit Argo CD resolved `targetRevision` to at its last
#     refresh) equals the pinned revision. When several Stages push to the head of one
#     branch and each pins the commit it pushed, their pins compete for one head:
#
#     1. dev promotes, pushes commit A to main and pins A: dev is Healthy.
#     2. qa promotes, pushes B and pins B. main is now B: qa is Healthy, and at its next
#        refresh dev's Application reports B instead of A, so dev turns Unhealthy.
#     3. dev promotes again and pushes C: dev is Healthy, qa Unhealthy, and so on. At
#        most one of the Stages is Healthy at a time: the one promoted last.
#
#     The Unhealthy Stage reports, in `status.health.issues`:
#
#     > `Not all sources of Application "<app>" in namespace "<ns>" are synced to the
#     > desired revisions. Issues: Source 0 with RepoURL <url> of Application "<app>" in
#     > namespace "<ns>" does not match the desired revision "<sha>".`
#
#     Argo CD shows every Application Synced and Healthy throughout: each deploys its own
#     path at the new head. Auto-sync does not matter, because Argo CD refreshes
#     `status.sync.revision` with or without it. Promotions suffer too: when another
#     Stage pushes between a Stage's `git-push` and its sync, the sync result is not the
#     pinned commit, and Kargo re-syncs until the step times out (5 minutes by default).
#   remediation: |
#     Give each Stage a pointer only it moves, or stop asking Kargo to check a
#     revision on the shared one:
#     1. Stage-specific branches (recommended): render plain manifests and push them
#        to a branch only that Stage writes (e.g. env/<stage>: git-clone it with
#        create: true, git-clear, kustomize-build or helm-template into it, git-push),
#        and point that Stage's Application targetRevision at it. desiredRevision
#        then stays reachable and drift detection is kept.
#     2. Stop setting desiredRevision in the argocd-update step: the flip-flop ends,
#        but Kargo no longer checks that the Application runs the promoted commit.
#     3. updateTargetRevision: true: Kargo rewrites the live Application's
#        targetRevision to the pinned commit. An ApplicationSet or parent app that
#        re-applies targetRevision undoes it (unless ignoreApplicationDifferences
#        covers it), and the maintainers advise against this "pseudo-GitOps" in
#        production.
#     4. Turning off auto-sync is not enough on its own: Kargo compares against
#        status.sync.revision, which follows the branch head at every refresh with
#        or without auto-sync.
package lib.flipflop.rules.shared_branch_contradiction

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some key, group in model.pins_by_pointer
	group[0].pointer.floating
	count(heads(group)) > 1
	stage_keys := {p.stage.key | some p in group}
	app_keys := {p.app.key | some p in group}
	pointer := model.text({p.pointer | some p in group})
	finding := result.fail(
		rego.metadata.chain(),
		message(stage_keys, app_keys, pointer, group),
		result.refs(array.concat([p.stage.ref | some p in group], [p.app.ref | some p in group])),
		key,
		result.about({p.pointer | some p in group}, stage_keys, app_keys, {p.id | some p in group}, {w.id | some w in object.get(model.writers_by_pointer, key, [])}),
		{
			"pointer": pointer,
			"stages": sort(stage_keys),
			"applications": sort(app_keys),
			"autoSync": model.auto_sync_by_app(group),
			"assumedDefaultBranch": assumed(group),
		},
	)
}

# heads are the commits the pins of group expect, as [Stage, desiredRevision]:
# one Stage's promotion produces one commit per expression, and two Stages'
# promotions two commits even of one expression. Only one can be the head.
heads(group) := {[p.stage.key, p.desired] | some p in group}

message(stage_keys, app_keys, pointer, group) := one_stage(stage_keys, app_keys, pointer, group) if count(stage_keys) == 1

message(stage_keys, app_keys, pointer, group) := several_stages(stage_keys, app_keys, pointer, group) if count(stage_keys) > 1

one_stage(stage_keys, app_keys, pointer, group) := sprintf(
	concat(" ", [
		"Stage %s pins desiredRevision %s on Applications %s, which track %s.",
		"Only one %s: after every promotion at least one of these pins is not met,",
		"and the Stage is Unhealthy (\"does not match the desired revision\") while Argo CD shows the Applications Synced and Healthy. %s%s%s",
	]),
	[
		result.names(stage_keys), concat(" and ", sort({sprintf("%q", [p.desired]) | some p in group})), result.names(app_keys), pointer,
		only_one(group), auto_sync_sentence(group), assumption_sentence(group), model.pin_notes(group),
	],
)

several_stages(stage_keys, app_keys, pointer, group) := sprintf(
	concat(" ", [
		"Stages %s all pin desiredRevision on Applications %s, which track %s.",
		"Only one %s: every promotion makes one Stage Healthy and the others Unhealthy",
		"(\"does not match the desired revision\") while Argo CD shows the Applications Synced and Healthy. %s%s%s",
	]),
	[result.names(stage_keys), result.names(app_keys), pointer, only_one(group), auto_sync_sentence(group), assumption_sentence(group), model.pin_notes(group)],
)

auto_sync_sentence(group) := concat(" ", [
	"Auto-sync is on for every one of these Applications; turning it off would not end this,",
	sprintf("because Kargo compares against status.sync.revision, which follows %s either way.", [followed(group)]),
]) if {
	every p in group {
		p.app.auto_sync == true
	}
} else := concat(" ", [
	"Auto-sync is off for these Applications, which does not prevent this:",
	sprintf("Kargo compares against status.sync.revision, which follows %s at every refresh.", [followed(group)]),
]) if {
	every p in group {
		p.app.auto_sync == false
	}
} else := sprintf(
	"Auto-sync is on for %s and off or unknown for the others; either way Kargo compares against status.sync.revision, which follows %s.",
	[result.names({p.app.key | some p in group; p.app.auto_sync == true}), followed(group)],
)

# only_one and followed say what a floating pointer resolves to: a branch's
# head commit, or a chart's newest version in a range.
only_one(group) := "version can be the newest match of it" if {
	group[0].pointer.kind == "semver"
} else := "commit can be the head of it"

followed(group) := "the newest version in the range" if {
	group[0].pointer.kind == "semver"
} else := "the branch head"

assumed(group) if {
	some p in group
	p.pointer.assumed
} else := false

assumption_sentence(group) := sprintf(" (HEAD was taken to be %s; set the default branch if it is not.)", [group[0].pointer.name]) if {
	assumed(group)
} else := ""
