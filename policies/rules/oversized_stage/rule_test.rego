package lib.flipflop.rules.oversized_stage_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.rules.oversized_stage as rule

# fan is a Stage of `pushes` pushes to generated branches that no git-open-pr
# names, `prs` git-open-pr steps into env/<i> (their sourceBranch reads a var),
# and one push that its own git-open-pr (into main) names.
fan(pushes, prs) := f.stage_steps("fan", array.concat(
	array.concat(
		[
			{"uses": "git-clone", "config": {"repoURL": "https://github.com/acme/deploy.git", "checkout": [{"branch": "main", "path": "./repo"}]}},
			{"uses": "git-push", "as": "named", "config": {"path": "./repo", "generateTargetBranch": true}},
			{"uses": "git-open-pr", "config": {"repoURL": "https://github.com/acme/deploy.git", "sourceBranch": "${{ outputs['named'].branch }}", "targetBranch": "main"}},
		],
		[{"uses": "git-push", "as": sprintf("push-%d", [i]), "config": {"path": "./repo", "generateTargetBranch": true}} | some i in numbers.range(1, pushes)],
	),
	[{"uses": "git-open-pr", "config": {"repoURL": "https://github.com/acme/deploy.git", "sourceBranch": "${{ vars.branch }}", "targetBranch": sprintf("env/%d", [i])}} | some i in numbers.range(1, prs)],
))

# pointers lists the pointer keys the Stage's writes reach, with how many.
pointers := {k: count(g) | some k, g in model.writers_by_pointer}

# Up to the bound every unnamed push is paired with every git-open-pr (here
# 3 x 4 = 12 pairs: the named one is a git-open-pr too), and nothing is
# reported.
test_at_the_bound_every_pair_is_followed if {
	estate := f.estate([fan(3, 3)])
	count(rule.report) == 0 with input as estate with model.max_unlinked_pairs as 12
	got := pointers with input as estate with model.max_unlinked_pairs as 12
	got["github.com/acme/deploy@env/1"] == 3
	got["github.com/acme/deploy@main"] == 4 # the named push, and the 3 others through its git-open-pr
	model.unknown_writes == set() with input as estate with model.max_unlinked_pairs as 12
}

# Past it, the unnamed pushes' branches are unknown, the named push is still
# followed through its own git-open-pr, and the Stage is named with the counts.
test_over_the_bound_the_unnamed_pushes_are_unknown if {
	estate := f.estate([fan(3, 3)])
	[finding] := [x | some x in rule.report] with input as estate with model.max_unlinked_pairs as 11
	finding.severity == "warning"
	finding.key == "Stage/acme/fan"
	finding.details == {"stage": "acme/fan", "pushes": 3, "pullRequests": 4, "maxPairs": 11}
	[r.name | some r in finding.resources] == ["fan"]
	got := pointers with input as estate with model.max_unlinked_pairs as 11
	got == {"github.com/acme/deploy@main": 1}
	model.unknown_writes == {"acme/fan"} with input as estate with model.max_unlinked_pairs as 11
}

# The bound is the Stage's: another Stage's pushes are followed as before.
test_the_bound_is_per_stage if {
	small := f.stage_steps("small", [
		{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./repo"}]}},
		{"uses": "git-push", "as": "push", "config": {"path": "./repo", "generateTargetBranch": true}},
		{"uses": "git-open-pr", "config": {"repoURL": f.repo, "sourceBranch": "${{ vars.branch }}", "targetBranch": "env/small"}},
	])
	estate := f.estate([fan(3, 3), small])
	{x.key | some x in rule.report} == {"Stage/acme/fan"} with input as estate with model.max_unlinked_pairs as 11
	got := pointers with input as estate with model.max_unlinked_pairs as 11
	got["github.com/acme/deploy@env/small"] == 1
	model.unknown_writes == {"acme/fan"} with input as estate with model.max_unlinked_pairs as 11
}
