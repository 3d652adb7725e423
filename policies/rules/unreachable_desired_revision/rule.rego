# METADATA
# title: desiredRevision can never be what Argo CD reports
# description: |
#   The revision a Stage pins can never equal the Application source's
#   `status.sync.revision`, so the Stage is Unhealthy after every promotion (and,
#   with a sync, Kargo re-syncs until the step times out). Four forms: the pin is
#   the commit the Stage's own promotion pushes, but the Application tracks a
#   different branch than the Stage writes; the pin is the Stage's own commit but
#   the Application tracks a fixed revision (a commit SHA or a tag), which Argo CD
#   keeps reporting; the pin is the commit the Stage pushed to a GitHub pull
#   request's branch, while the head of the target branch is the merge (pin
#   `git-wait-for-pr`'s `commit` output instead); or `desiredRevision` is a
#   literal ref such as `main`, `HEAD` or a tag, which never equals the commit SHA
#   Argo CD reports (akuity/kargo#4020). Such a pin is reported here only, never
#   counted in another rule's contradiction.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (desiredRevision, updateTargetRevision)
#   - ref: https://github.com/akuity/kargo/issues/4020
#     description: akuity/kargo#4020, desiredRevision set to a ref (HEAD, a tag) never matches
#   - ref: https://github.com/akuity/kargo/issues/2968
#     description: akuity/kargo#2968, an infinite sync loop when promoting
#   - ref: https://docs.kargo.io/user-guide/reference-docs/expressions
#     description: Kargo reference, expressions (commitFrom, outputs)
#   - ref: https://argo-cd.readthedocs.io/en/stable/user-guide/tracking_strategies/
#     description: Argo CD, tracking strategies (branches, tags and commits as targetRevision)
# custom:
#   id: unreachable-desired-revision
#   severity: error
#   admission: true
#   fixable: true
#   diagnose: unreachable
#   why: |
#     Kargo compares a pinned revision with the Application source's
#     `status.sync.revision`: for a Git source, the commit SHA that Argo CD resolved
#     `targetRevision` to at its last refresh; for a Helm repository chart, the chart
#     version. A pin that can never equal that value leaves the Stage Unhealthy after
#     every promotion with
#
#     > `Not all sources of Application "<app>" in namespace "<ns>" are synced to the
#     > desired revisions. Issues: Source 0 with RepoURL <url> of Application "<app>" in
#     > namespace "<ns>" does not match the desired revision "<sha>".`
#
#     and a promotion that syncs keeps re-syncing until the step times out (5 minutes by
#     default), because the sync result never matches the desired revision
#     (akuity/kargo#2968, #4020). The pin can never match when:
#
#     - it is a literal ref (`main`, `HEAD`, `v2.0.1`): Argo CD reports the SHA the ref
#       resolves to, never the name;
#     - it is the commit the Stage pushes, but the Application tracks another branch,
#       whose head that commit never becomes;
#     - it is the commit the Stage pushes, but the Application tracks a fixed revision (a
#       commit or a tag), which Argo CD keeps reporting whatever the Stage pushes.
#   remediation: |
#     Pin what the Application will actually report:
#     - for a branch the Stage pushes to itself, point the Application's targetRevision
#       at that branch and pin the push's commit (${{ outputs.<push-step>.commit }});
#     - for a branch a pull request merges the Stage's commit into, pin the merge: the
#       commit output of the git-wait-for-pr or git-merge-pr step, never the push's;
#     - for a commit chosen from Freight, use ${{ commitFrom(<repo>).ID }} together
#       with updateTargetRevision: true, so the Application is moved to it;
#     - never pin a branch, HEAD or tag name: desiredRevision must be a commit SHA
#       (for Helm repository charts, the chart version).
#
#     Or drop desiredRevision if no revision check is wanted.
#   remediations:
#     pull-request: |
#       Pin the commit the branch's head will be: the merge. Read it from the step that
#       waits for the pull request, desiredRevision: ${{ outputs.<wait-for-pr-step>.commit }}
#       (git-wait-for-pr, or git-merge-pr), and keep the Application's targetRevision on
#       the pull request's target branch. The push's commit
#       (${{ outputs.<push-step>.commit }}) is the pull request's head, which GitHub never
#       makes the target's head.
#
#       Or drop desiredRevision if no revision check is wanted.
package lib.flipflop.rules.unreachable_desired_revision

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some p in array.concat(model.pins, model.latent_pins)
	reason := model.unreachable[p.id]
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("Stage %s pins desiredRevision %q on Application %s (source %d, %s): %s%s%s", [
			p.stage.key, p.desired, p.app.key, p.source.index, model.describe(p.pointer), reason, model.pin_notes([p]), latent_note(p),
		]),
		result.refs([p.stage.ref, p.app.ref]),
		model.source_key(p),
		result.about([p.pointer], [p.stage.key], [p.app.key], [p.id], []),
		object.union_n([
			{"stage": p.stage.key, "application": p.app.key, "desiredRevision": p.desired, "pointer": model.describe(p.pointer)},
			shows_after(p),
			kind(p),
		]),
	)
}

# first_failures are the rules that report why a latent pin's Stage fails
# every promotion today.
first_failures(p) := sort({model.failure_rules[r] | some r in model.failing[p.stage.key]})

# latent_note says, for the pin of a Stage whose promotions fail today, that
# this fault shows once that failure is fixed.
latent_note(p) := sprintf(" This shows once the Stage's promotions stop failing (%s): Kargo checks no revision of a Stage whose promotion fails, and will check this one then.", [
	concat(", ", first_failures(p)),
]) if {
	p.latent
} else := ""

# kind names the cause whose fix differs from the rule's general one
# (custom.remediations): a pin of the commit made before a pull request merges.
kind(p) := {"kind": "pull-request"} if model.pre_merge_step(p)

else := {}

shows_after(p) := {"showsAfter": first_failures(p)} if p.latent

else := {}
