# Every step of every documented way out of the seed contradiction, replayed
# one change at a time through the template in deny, one constraint per rule: no
# step is denied, in any order; a change that makes the estate worse still is.
package lib.flipflop.gatekeeper_test

import data.lib.flipflop.fixtures as f

# The seed: Stages dev and qa both write main and pin the commit they pushed on
# Applications dev and qa, which both track main.
seed := [dev_app, qa_app, dev_stage, qa_stage]

# inventory_of is data.inventory holding objs.
inventory_of(objs) := {"namespace": {ns: {gv: {kind: {o.metadata.name: o |
	some o in objs
	o.metadata.namespace == ns
	o.apiVersion == gv
	o.kind == kind
} |
	some kind in {o.kind | some o in objs; o.metadata.namespace == ns; o.apiVersion == gv}
} |
	some gv in {o.apiVersion | some o in objs; o.metadata.namespace == ns}
} |
	some ns in {o.metadata.namespace | some o in objs}
}}

same_object(a, b) if {
	a.kind == b.kind
	a.metadata.namespace == b.metadata.namespace
	a.metadata.name == b.metadata.name
}

# state is the estate objs after the writes of changes, in order: each object
# as last written.
state(objs, changes) := array.concat(
	[o | some o in objs; not written(o, changes)],
	[c | some j, c in changes; not rewritten(changes, j)],
)

written(o, changes) if {
	some c in changes
	same_object(o, c)
}

rewritten(changes, j) if {
	some k, c in changes
	k > j
	same_object(c, changes[j])
}

# review_of is the admission request writing obj into the estate objs.
review_of(objs, obj) := admission("UPDATE", obj, old) if {
	some old in objs
	same_object(old, obj)
} else := admission("CREATE", obj, null)

# denials are what one constraint per rule reports when obj is written into objs.
denials(objs, obj) := d if {
	# regal ignore:with-outside-test-context,external-reference
	d := every_violation with input as review_of(objs, obj) with data.inventory as inventory_of(objs)
}

# denied_steps are the denials of each step of changes, written in turn into
# objs, by step index (empty: every step admitted).
denied_steps(objs, changes) := {i: d |
	some i, c in changes
	d := denials(state(objs, array.slice(changes, 0, i)), c)
	count(d) > 0
}

# denied_in_some_order are the steps denied in any order of changes (each a
# write of a different object) written into objs: [the changes written before,
# as a bit mask, the index of the denied change]. The estate before a step
# depends on which changes came before it, not on their order, so the 2^n
# subsets and the changes not in each cover every step of every order (32
# reviews for four changes, against 96 for their 24 orders replayed one by one).
denied_in_some_order(objs, changes) := {[mask, i] |
	some mask in numbers.range(0, bits.lsh(1, count(changes)) - 1)
	before := [c | some j, c in changes; bits.and(mask, bits.lsh(1, j)) != 0]
	some i, c in changes
	bits.and(mask, bits.lsh(1, i)) == 0
	count(denials(state(objs, before), c)) > 0
}

# The ways out (README, "Ways out"), each a list of changes.
dev_unpinned := f.stage("dev", "main", [f.no_pin("dev")])

qa_unpinned := f.stage("qa", "main", [f.no_pin("qa")])

# updateTargetRevision: Kargo moves the Application to the pinned commit.
moving_pin(app_name) := {"name": app_name, "sources": [object.union(f.pin(app_name).sources[0], {"updateTargetRevision": true})]}

dev_moving := f.stage("dev", "main", [moving_pin("dev")])

qa_moving := f.stage("qa", "main", [moving_pin("qa")])

# Stage-specific branches: each Stage writes env/<stage>, which only its own
# Application tracks.
dev_branch_stage := f.stage("dev", "env/dev", [f.pin("dev")])

qa_branch_stage := f.stage("qa", "env/qa", [f.pin("qa")])

dev_branch_app := f.app("dev", "env/dev")

qa_branch_app := f.app("qa", "env/qa")

# Turning auto-sync off does not end the contradiction (Kargo compares with
# status.sync.revision, which follows the branch anyway); it is admitted as a
# change that leaves the problem as it was.
dev_manual := f.app_with("dev", dev_app.spec.source, {})

test_the_seed_is_denied if {
	# each Stage, created into an estate holding the other, completes the contradiction
	count(denials([dev_app, qa_app, qa_stage], dev_stage)) == 1
	count(denials([dev_app, qa_app, dev_stage], qa_stage)) == 1
}

test_dropping_desired_revision_is_admitted_in_either_order if {
	every changes in [[dev_unpinned, qa_unpinned], [qa_unpinned, dev_unpinned]] {
		denied_steps(seed, changes) == {}
	}
}

test_update_target_revision_is_admitted_in_either_order if {
	every changes in [[dev_moving, qa_moving], [qa_moving, dev_moving]] {
		denied_steps(seed, changes) == {}
	}
}

# Four changes (each Stage, each Application), in all 24 orders: whichever end
# of a pin moves first, the pin is unreachable until the other follows.
test_stage_branches_are_admitted_in_every_order if {
	denied_in_some_order(seed, [dev_branch_stage, dev_branch_app, qa_branch_stage, qa_branch_app]) == set()
}

test_auto_sync_off_is_admitted if {
	denied_steps(seed, [dev_manual]) == {}
}

# The same estates, changed for the worse, are still denied.
test_a_third_stage_joining_is_denied if {
	objs := array.concat(seed, [f.app("prod", "main")])
	d := denials(objs, f.stage("prod", "main", [f.pin("prod")]))
	{id | some [id, _] in d} == {"shared-branch-contradiction"}
}

# Halfway out of the contradiction (dev moved to env/dev, qa still on main), a
# Stage that starts writing main again next to qa's pin is a new foreign writer.
test_writing_a_pinned_branch_again_is_denied if {
	denied_steps(seed, [dev_branch_stage, dev_branch_app]) == {}
	halfway := state(seed, [dev_branch_stage, dev_branch_app])
	d := denials(halfway, f.stage("dev", "main", [f.no_pin("dev")]))
	{id | some [id, _] in d} == {"foreign-branch-writer"}
}

# A pin that did not exist before is not a move: a new pin no promotion can
# meet is denied.
test_a_new_unreachable_pin_is_denied if {
	done := state(seed, [dev_branch_stage, dev_branch_app, qa_branch_stage, qa_branch_app])
	web := object.union(f.app("web", "main"), {"metadata": f.authorizing("acme:dev")})
	d := denials(array.concat(done, [web]), f.stage("dev", "env/dev", [f.pin("dev"), f.pin("web")]))
	{id | some [id, _] in d} == {"unreachable-desired-revision"}
}

# A pin that stops expecting the Stage's own commit is not a move either: a
# branch name as desiredRevision is never met.
test_pinning_a_branch_name_is_denied if {
	done := state(seed, [dev_branch_stage, dev_branch_app, qa_branch_stage, qa_branch_app])
	named := f.stage("dev", "env/dev", [{"name": "dev", "sources": [{"repoURL": f.repo, "desiredRevision": "env/dev"}]}])
	d := denials(done, named)
	{id | some [id, _] in d} == {"unreachable-desired-revision"}
}

# A change that moves out of one problem and into another one, about an object
# the first did not involve, is denied.
test_a_replacement_naming_another_object_is_denied if {
	objs := array.concat(seed, [f.app("web", "main"), f.stage("web", "env/web", [f.pin("web")])])

	# web's pin is unreachable already; dev now pins web too, next to its own
	d := denials(objs, f.stage("dev", "main", [f.no_pin("dev"), f.pin("web")]))
	count(d) > 0
}

# The stage-branch fix as examples/fix-stage-branches writes it: one
# PromotionTask renders into env/<stage> and pins the commit it pushed there,
# and each Stage runs it instead of its own steps. The pin then comes from
# another step (the task's), and is still the same pin of the same Stage on
# the same Application source.
render_task := f.promotion_task("acme", "render", [], [
	f.clone(f.repo, [f.checkout("./out", "env/${{ ctx.stage }}")]),
	{"uses": "git-commit", "as": "commit", "config": {"path": "./out", "message": "m"}},
	{"uses": "git-push", "as": "push", "config": {"path": "./out"}},
	f.update([{"name": "${{ ctx.stage }}", "sources": [{"repoURL": f.repo, "desiredRevision": "${{ task.outputs.push.commit }}"}]}]),
])

test_stage_branches_through_a_task_are_admitted_in_every_order if {
	denied_steps(seed, [render_task]) == {}
	dev_task_stage := f.stage_steps("dev", [{"task": {"name": "render"}}])
	qa_task_stage := f.stage_steps("qa", [{"task": {"name": "render"}}])
	with_task := state(seed, [render_task])
	denied_in_some_order(with_task, [dev_task_stage, dev_branch_app, qa_task_stage, qa_branch_app]) == set()
}
