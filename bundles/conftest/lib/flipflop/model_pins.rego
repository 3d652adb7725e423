# The pins no promotion can satisfy, with why: a ref name where Argo CD reports
# a SHA, the Stage's own commit on a fixed revision, or on a branch the Stage
# does not push to. One problem gets one finding: these are
# unreachable-desired-revision's, and the model's pin groups leave them out.
# (The package's METADATA is in model.rego.)
package lib.flipflop.model

import data.lib.flipflop.config
import data.lib.flipflop.expr
import data.lib.flipflop.stages

# unreachable maps the id of every pin that can never be met to why: no
# promotion makes the Application report the commit the pin expects. The
# unreachable-desired-revision rule reports them; the rules about pins that
# contradict each other or a writer (pins_by_pointer) leave them out, so that
# one problem gets one finding, with its true mechanism.
# The pins of failing Stages (latent_pins) are judged too: their faults
# survive the fix of the failure.
unreachable := {p.id: reason | some p in array.concat(pins, latent_pins); reason := never_met(p)}

# A literal ref: Argo CD reports resolved commit SHAs for Git sources.
never_met(p) := sprintf("%q is a ref, and Argo CD reports the commit SHA it resolves to, never the name.", [p.desired]) if {
	p.desired_class == "literal"
	p.source.chart == ""
	not regex.match(`^[0-9a-fA-F]{40}$`, p.desired)
}

# The Stage's own commit on a fixed revision.
never_met(p) := "it is the commit the Stage's own promotion produces, but the Application tracks a fixed revision, which Argo CD keeps reporting." if {
	p.desired_class == "own"
	p.pointer.known
	not p.pointer.floating
}

# The Stage's own commit on a branch the Stage does not write.
never_met(p) := sprintf("it is the commit the Stage's own promotion produces, but the Stage pushes only to %s, not to the branch the Application tracks.", [
	concat(", ", sort({describe(w.pointer) | some w in writes})),
]) if {
	p.desired_class == "own"
	p.pointer.known
	p.pointer.floating
	p.pointer.kind == "branch"
	not p.stage.key in unknown_writes
	writes := object.get(writers_by_stage, p.stage.key, [])
	count(writes) > 0
	every w in writes {
		w.pointer.key != p.pointer.key
	}
}

# The Freight's commit, which Kargo v0.9 and v1.0 infer, on a branch the
# Stage's own promotion pushes to: the head is then the pushed commit.
never_met(p) := sprintf(
	concat(" ", [
		"Kargo %s checks it against the Freight's commit, which a Warehouse found, but the Stage's own promotion pushes a new commit to %s,",
		"which the Application then reports (the loop Kargo v1.1 ended by no longer inferring the revision, akuity/kargo#2980).",
	]),
	[config.kargo_text, describe(p.pointer)],
) if {
	p.inferred == true
	p.pointer.known
	p.pointer.floating
	some w in object.get(writers_by_stage, p.stage.key, [])
	w.pointer.key == p.pointer.key
}

# The Stage's own commit, made before the pull request that carries it into the
# branch the Application tracks is merged: the head of that branch is then the
# merge, which git-wait-for-pr and git-merge-pr report as their commit output.
# Only for GitHub, which merges a pull request with a new commit whatever the
# method (merge, squash, rebase); GitLab, Gitea, Bitbucket and Azure DevOps can
# merge by fast-forward, which keeps the pushed commit, and that setting is not
# in the files.
never_met(p) := sprintf(
	concat(" ", [
		"it is the commit step %q makes, which reaches %s only through a pull request (git-open-pr);",
		"GitHub merges a pull request with a new commit (merge, squash or rebase), so the head is never that commit.",
		"Pin the merge instead: the commit output of the git-wait-for-pr or git-merge-pr step.",
	]),
	[step.alias, describe(p.pointer)],
) if {
	p.stage.key in pull_request_stages
	step := pre_merge_step(p)
}

# pre_merge_step is the step whose commit p pins when that commit reaches the
# branch the Application tracks only through a GitHub pull request (above).
pre_merge_step(p) := step if {
	p.stage.key in pull_request_stages
	p.desired_class == "own"
	p.pointer.known
	p.pointer.floating
	p.pointer.kind == "branch"
	not p.stage.key in unknown_writes
	writes := [w | some w in writers_by_stage[p.stage.key]; w.pointer.key == p.pointer.key]
	count(writes) > 0
	every w in writes {
		w.branch_from == "pull-request"
		github_pull_request(w)
	}
	step := pinned_step(p)
	step.uses in {"git-commit", "git-push", "github-push"}
}

# source_key names what a pin is about, whatever step makes it: its Stage, its
# Application and the source it pins ("acme/dev|argocd/dev|0"), the key of an
# unreachable-desired-revision finding. Gatekeeper's admission judge knows a
# pin by it before and after a change, when the pin moves from a Stage's own
# steps into a PromotionTask.
source_key(p) := sprintf("%s|%s|%d", [p.stage.key, p.app.key, p.source.index])

# pull_request_stages are the Stages some of whose writes go through a pull request.
pull_request_stages contains w.stage.key if {
	some w in writers
	w.branch_from == "pull-request"
}

# pinned_step is the step of p's Stage whose commit output p's desiredRevision
# reads (outputs.<alias>.commit; in a task, its own step of that alias).
pinned_step(p) := step if {
	alias := expr.outputs_alias(p.desired)
	i := [j | some j, r in stages.records; r.key == p.stage.key][0]
	steps := [s |
		some s in stages.all_steps(i)
		s.scope == p.step.scope
		short_alias(s.alias) == alias
	]
	count(steps) == 1
	step := steps[0]
}

# github_pull_request: the pull request of write w is opened on GitHub: the
# git-open-pr step's provider is github, or it names none and the repository
# is on github.com (how Kargo picks a provider by URL). The write carries its
# git-open-pr step (w.pull_request), which finding it among the Stage's steps
# cost a pass over them for every write.
github_pull_request(w) if {
	pr := w.pull_request
	is_object(pr)
	provider := stages.value(pr, object.get(pr.config, "provider", ""))
	github_provider(provider, w.repo_id)
}

github_provider("github", _)

github_provider("", repo_id) if startswith(repo_id, "github.com/")

# auto_sync_by_app maps each Application the pins name (by key) to whether
# auto-sync is on for it. Two objects may hold one key (a copy the
# duplicate-object rule reports) and disagree: it is on when it is on for any.
# One pass over the pins for the keys where it is on, not one per key: a
# group of pins on one pointer can be the whole estate.
auto_sync_by_app(pins) := {k: is_on | some k in keys; is_on := k in on} if {
	on := {p.app.key | some p in pins; p.app.auto_sync == true}
	keys := {p.app.key | some p in pins}
}
