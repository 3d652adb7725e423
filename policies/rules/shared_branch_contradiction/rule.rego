# METADATA
# title: Several Stages pin one floating pointer
# description: |
#   Two or more Kargo Stages pin `desiredRevision` (argocd-update) on Argo CD
#   Applications whose pinned sources track the same floating pointer: the head of
#   one branch (or HEAD, or a semver range). Each Stage expects the Application at
#   the commit its own promotion produced, but only one commit can be the head of
#   the branch. Every promotion turns one Stage Healthy and the others Unhealthy
#   with "Source 0 with RepoURL ... does not match the desired revision", while
#   Argo CD shows every Application Synced and Healthy. Kargo compares
#   `desiredRevision` with Argo CD's `status.sync.revision`, which follows the
#   branch head at every refresh, so this happens with or without auto-sync.
# custom:
#   id: shared-branch-contradiction
#   severity: error
#   admission: true
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
	stage_keys := {p.stage.key | some p in group}
	count(stage_keys) > 1
	app_keys := {p.app.key | some p in group}
	pointer := model.describe(group[0].pointer)
	finding := result.fail(
		rego.metadata.chain(),
		message(stage_keys, app_keys, pointer, group),
		result.refs(array.concat([p.stage.ref | some p in group], [p.app.ref | some p in group])),
		key,
		{
			"pointer": pointer,
			"stages": sort(stage_keys),
			"applications": sort(app_keys),
			"autoSync": auto_sync(group),
			"assumedDefaultBranch": assumed(group),
		},
	)
}

message(stage_keys, app_keys, pointer, group) := sprintf(
	concat(" ", [
		"Stages %s all pin desiredRevision on Applications %s, which track %s.",
		"Only one commit can be the head of it: every promotion makes one Stage Healthy and the others Unhealthy",
		"(\"does not match the desired revision\") while Argo CD shows the Applications Synced and Healthy. %s%s",
	]),
	[result.names(stage_keys), result.names(app_keys), pointer, auto_sync_sentence(group), assumption_sentence(group)],
)

auto_sync(group) := {p.app.key: p.app.auto_sync | some p in group}

auto_sync_sentence(group) := concat(" ", [
	"Auto-sync is on for every one of these Applications; turning it off would not end this,",
	"because Kargo compares against status.sync.revision, which follows the branch head either way.",
]) if {
	every p in group {
		p.app.auto_sync == true
	}
} else := concat(" ", [
	"Auto-sync is off for these Applications, which does not prevent this:",
	"Kargo compares against status.sync.revision, which follows the branch head at every refresh.",
]) if {
	every p in group {
		p.app.auto_sync == false
	}
} else := sprintf(
	"Auto-sync is on for %s and off or unknown for the others; either way Kargo compares against status.sync.revision, which follows the branch head.",
	[result.names({p.app.key | some p in group; p.app.auto_sync == true})],
)

assumed(group) if {
	some p in group
	p.pointer.assumed
} else := false

assumption_sentence(group) := sprintf(" (HEAD was taken to be %s; set the default branch if it is not.)", [group[0].pointer.name]) if {
	assumed(group)
} else := ""
