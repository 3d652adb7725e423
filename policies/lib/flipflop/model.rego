# METADATA
# title: Model
# description: |
#   The vocabulary every rule reads: pointers (what an Application source tracks),
#   pins (a Stage expecting an Application source at a commit of its choosing) and
#   writers (a Stage pushing to a repository and branch). All grouping is done here,
#   once, over the set of distinct keys, so cost grows linearly with the estate.
package lib.flipflop.model

import data.lib.flipflop.apps
import data.lib.flipflop.config
import data.lib.flipflop.expr
import data.lib.flipflop.legacy
import data.lib.flipflop.objects
import data.lib.flipflop.repo
import data.lib.flipflop.revision
import data.lib.flipflop.stages

# ---------------------------------------------------------------------------
# Pointers

# default_branches maps a repository to the branch HEAD stands for: the
# configured default branch, else the first of main/master the estate names for
# that repository, else "HEAD" itself.
default_branches := {r: b |
	some r in {x.repo | some x in named_refs}
	named := {x.branch | some x in named_refs; x.repo == r}
	b := first_candidate(named)
}

named_refs := array.concat(
	[{"repo": s.repo_id, "branch": s.rev.name} | some a in apps.records; some s in a.sources; s.rev.kind == "branch"],
	[{"repo": w.repo_id, "branch": w.rev.name} | some w in raw_writers; w.rev.kind == "branch"],
)

first_candidate(named) := [c | some c in config.default_branch_candidates; c in named][0]

default_branch_of(_) := config.default_branch if config.default_branch != ""

default_branch_of(r) := object.get(default_branches, r, "HEAD") if config.default_branch == ""

# pointer turns a repository and a classified revision into a comparable key.
pointer(repo_id, repo_known, rev) := {"known": false, "floating": false, "key": "", "repo": repo_id, "kind": rev.kind, "name": rev.name, "assumed": false, "head": false} if {
	not known_pointer(repo_known, rev)
}

pointer(repo_id, repo_known, rev) := p if {
	known_pointer(repo_known, rev)
	rev.kind == "default"
	b := default_branch_of(repo_id)
	p := {
		"known": true, "floating": true, "key": sprintf("%s@%s", [repo_id, b]), "repo": repo_id,
		"kind": "branch", "name": b, "assumed": assumed_default(b), "head": true,
	}
}

pointer(repo_id, repo_known, rev) := p if {
	known_pointer(repo_known, rev)
	rev.kind != "default"
	p := {
		"known": true, "floating": revision.floating(rev), "key": key_of(repo_id, rev), "repo": repo_id,
		"kind": rev.kind, "name": rev.name, "assumed": false, "head": false,
	}
}

assumed_default(b) if {
	config.default_branch == ""
	b != "HEAD"
} else := false

known_pointer(repo_known, rev) if {
	repo_known == true
	rev.kind != "unknown"
}

key_of(r, rev) := sprintf("%s@%s", [r, rev.name]) if rev.kind == "branch"

key_of(r, rev) := sprintf("%s#%s:%s", [r, rev.kind, rev.name]) if rev.kind != "branch"

# describe renders a pointer for people: "github.com/acme/deploy @ main". It
# depends on the pointer's key alone, so that every finding, explanation and
# drawing names one pointer the same way; when HEAD was taken to be the branch
# (`assumed`), the findings' messages say so.
describe(p) := sprintf("%s @ %s", [p.repo, p.name]) if {
	p.kind == "branch"
} else := sprintf("%s @ %s", [p.repo, revision.describe(p)])

# text renders one pointer that several sources or writes read differently
# ("@ HEAD (taken to be main)", "@ main") the same way whatever their order:
# the first of their texts in sort order.
text(pointers) := min({describe(p) | some p in pointers})

# sources lists every tracked Application source with its pointer.
sources := [{"app": a, "source": s, "pointer": pointer(s.repo_id, s.repo_known, s.rev)} |
	some a in apps.records
	some s in a.sources
]

# ---------------------------------------------------------------------------
# argocd-update targets

# updates lists every argocd-update app entry of every Stage, with the
# Applications it resolves to.
updates := [u |
	some s in stages.records
	some step in s.steps
	step.uses == "argocd-update"
	some i, entry in objects.array_at(step.config, ["apps"])
	is_object(entry)
	u := update(s, step, i, entry)
]

update(s, step, i, entry) := {
	"stage": s,
	"step": step,
	"index": i,
	"entry": entry,
	"entry_path": sprintf("%s/config/apps/%d", [step.origin.path, i]),
	"namespace": ns,
	"name": name,
	"selector": has_selector(entry),
	"targets": targets(s, step.env, entry, name, ns),
	"sources": update_sources(step, entry),
} if {
	ns := stages.value(step, object.get(entry, "namespace", config.argocd_namespace))
	name := stages.value(step, object.get(entry, "name", ""))
}

# targets: the Applications an entry reaches, each with whether the entry
# resolved it exactly and whether the Application authorizes the Stage.
targets(s, env, entry, name, ns) := [] if {
	not has_selector(entry)
	not resolvable(name, ns)
} else := [target(a, s, "name") | some a in apps.by_key[sprintf("%s/%s", [ns, name])]] if {
	not has_selector(entry)
	count(object.get(apps.by_key, sprintf("%s/%s", [ns, name]), [])) > 0
} else := pattern_targets(s, name, apps.matching_patterns(name, [ns])) if {
	not has_selector(entry)
} else := [] if {
	empty_selector(entry.selector)
} else := [target(a, s, "selector") |
	some a in apps.selected(selector(env, entry.selector), ns)
]

# pattern_targets are the Applications an ApplicationSet the model cannot
# enumerate may generate under a name an entry gives: one for each name pattern
# that matches it. Each is unjudged (lib.flipflop.model_failing: its sources
# are not judged against the entry) when another pattern matches as well, or
# when its pattern is no more than wildcards.
pattern_targets(s, name, matches) := [object.union(target(instance(a, name), s, "pattern"), {"unjudged": unjudged(matches, a)}) |
	some a in matches
]

default unjudged(_, _) := false

unjudged(matches, _) if count(matches) != 1

unjudged(_, a) if regex.replace(a.name_pattern, `[*?]`, "") == ""

# namesakes lists the Applications named name (written, generated, or generated
# under a name pattern that matches it) in namespaces other than ns: where an
# argocd-update entry that finds nothing in ns may have meant to look.
namesakes(name, ns) := array.concat(
	[a | some a in object.get(apps_by_name, name, []); a.namespace != ns],
	[instance(a, name) |
		some a in apps.matching_patterns(name, [])
		a.namespace != ns
		replace(a.name_pattern, "*", "") != ""
	],
)

apps_by_name := {n: group |
	some n in {a.name | some a in apps.records; a.name_known}
	group := [a | some a in apps.records; a.name_known; a.name == n]
}

# selector substitutes ctx and vars into a label selector's values, as Kargo does
# (selectors may use ctx and vars).
selector(env, sel) := {
	"matchLabels": {k: expr.subst(v, env) | some k, v in objects.object_at(sel, ["matchLabels"])},
	"matchExpressions": [object.union(e, {"values": [expr.subst(v, env) | some v in objects.array_at(e, ["values"])]}) |
		some e in objects.array_at(sel, ["matchExpressions"])
		is_object(e)
	],
}

# empty_selector: a selector with no criterion, which Kargo rejects (its step
# schema requires one; argocd_common.go: "selector must have at least one
# match criterion"): it selects nothing.
empty_selector(sel) if {
	count(objects.object_at(sel, ["matchLabels"])) == 0
	count(objects.array_at(sel, ["matchExpressions"])) == 0
}

has_selector(entry) if {
	is_object(entry.selector)
} else := false

# instance names one Application of an ApplicationSet whose names are a pattern:
# the one an argocd-update entry names.
instance(a, name) := object.union(a, {
	"name": name,
	"key": sprintf("%s/%s", [a.namespace, name]),
	"name_known": true,
	"ref": object.union(a.ref, {"name": name}),
})

resolvable(name, ns) if {
	expr.known(name)
	expr.known(ns)
	name != ""
}

target(a, s, via) := {"app": a, "via": via, "authorized": authorized(a, s)}

authorized(a, s) := "unknown" if {
	not a.metadata_known
} else := "unknown" if {
	not s.project_known
} else := "unknown" if {
	v := object.get(a.annotations, "kargo.akuity.io/authorized-stage", "")
	not expr.known(v)
} else if {
	apps.authorizes(a, s.project, s.name)
} else := false

# ---------------------------------------------------------------------------
# Pins

# desired reads an entry's desired revision: desiredRevision, or the legacy
# desiredCommitFromStep on the versions that have it ("" for neither).
desired(e) := e.desiredRevision if {
	is_string(e.desiredRevision)
	e.desiredRevision != ""
} else := sprintf("${{ outputs.%s.commit }}", [e.desiredCommitFromStep]) if {
	desired_commit_from_step
	is_string(e.desiredCommitFromStep)
	e.desiredCommitFromStep != ""
} else := ""

# desired_class says where a desired revision comes from: "own" (a commit this
# Stage's promotion produced), "freight" (commitFrom/chartFrom), "literal" (a
# plain string), or "expression" (anything else).
desired_class(d) := "literal" if {
	expr.known(d)
} else := "own" if {
	expr.outputs_alias(d)
} else := "freight" if {
	regex.match(`(commitFrom|chartFrom|imageFrom)\(`, d)
} else := "expression"

# pins lists every (Stage, Application source) a Stage pins: argocd-update
# steps, and the revision checks of legacy argoCDAppUpdates. A pin whose
# source the update rewrites to the revision it expects is met by the rewrite
# and left out (held): unless it names a ref, which Argo CD reports as a SHA
# (unreachable), or an ApplicationSet writes the source back (reverted). The
# pins of a Stage whose promotions always fail in an argocd-update step are
# never checked, and are left out too (failing).
pins := array.concat(
	array.concat([p | some p in unheld_pins; not failing[p.stage.key]], legacy_pins),
	[p | some p in inferred_pins; not failing[p.stage.key]],
)

# unheld_pins are the step pins no rewrite meets (held), marked reverted when
# an ApplicationSet writes their source back.
unheld_pins := [object.union(p, {"reverted": reverted(p)}) | some p in step_pins; not held(p)]

# latent_pins are the pins of the Stages whose promotions always fail
# (failing), marked latent: Kargo checks none of them today, but every one is
# checked once the failure is fixed. A fault of the pin alone (unreachable)
# survives that fix, so it is reported now, saying what shows first; the pins
# are in no pin group (a contradiction between pins needs promotions that
# succeed).
latent_pins := [object.union(p, {"latent": true}) |
	some p in array.concat(unheld_pins, inferred_pins)
	failing[p.stage.key]
]

# failure_rules maps the reasons a Stage fails (failing) to the rules that
# report them.
failure_rules := {
	"unauthorized": "missing-authorized-stage",
	"unmatched-source": "unmatched-update-source",
	"empty-selector": "unmatched-application-selector",
	"invalid-step-config": "invalid-step-config",
}

# pins_by_pointer groups the pins on known pointers that can be met by pointer
# key (a pin that can never be met is in unreachable, not here).
pins_by_pointer := {k: group |
	some k in {p.pointer.key | some p in pins; p.pointer.known; not unreachable[p.id]}
	group := [p | some p in pins; p.pointer.key == k; not unreachable[p.id]]
}

# pin_pointers lists the distinct known, floating pointers that some Stage pins.
pin_pointers := {k | some k, group in pins_by_pointer; group[0].pointer.floating}

# pins_by_app groups pins by Application key.
pins_by_app := {k: group |
	some k in {p.app.key | some p in pins}
	group := [p | some p in pins; p.app.key == k]
}

# ---------------------------------------------------------------------------
# Writers

# raw_writers lists every (Stage, repository, branch) a promotion pushes to,
# before HEAD is resolved to a branch.
raw_writers := array.concat(step_writers, legacy_writers)

# step_writers are the writes of push_writes, a push that no git-open-pr names
# paired with each git-open-pr of its Stage (unpaired past max_unlinked_pairs),
# in the same order.
step_writers := [w |
	some x in push_writes
	some w in paired(x)
]

# push_writes lists the writes of every push step, each with its target: a push
# to a generated branch that no git-open-pr names is one write marked
# "unlinked", which paired turns into its writes.
push_writes := [w |
	some i, s in stages.records
	clones := [c |
		some step in s.steps
		step.uses == "git-clone"
		url := stages.value(step, object.get(step.config, "repoURL", ""))
		some k, co in objects.array_at(step.config, ["checkout"])
		is_object(co)
		c := {
			"path": clean_path(stages.value(step, object.get(co, "path", ""))), "url": url, "rev": checkout_rev(step, co),
			"step": step, "checkout": k,
		}
	]
	some push in s.steps
	push.uses in {"git-push", "github-push"}
	path := clean_path(stages.value(push, object.get(push.config, "path", "")))
	some clone in work_tree(clones, path)
	some target in push_targets(i, push, clone)
	w := {
		"id": concat("|", [push.id, clone.step.id, sprintf("%d", [clone.checkout]), target.via]),
		"stage": s,
		"step": push,
		"repo_url": clone.url,
		"repo_id": repo.id(clone.url),
		"repo_known": expr.is_known(clone.url),
		"rev": target.rev,
		"branch_from": target.from,
		"via": target.via,
		"pull_request": object.get(target, "pr", null),
		"stage_index": i,
		"clone": clone.step,
		"checkout": clone.checkout,
		"work_tree": clone.path,
		"path": path,
	}
]

legacy_writers := [w |
	legacy.read
	some s in legacy.written
	some k, g in objects.array_at(s.legacy, ["gitRepoUpdates"])
	is_object(g)
	url := object.get(g, "repoURL", "")
	path := sprintf("/spec/promotionMechanisms/gitRepoUpdates/%d", [k])
	w := {
		"id": concat("|", [s.key, path]),
		"stage": s,
		"step": {
			"id": concat("|", [s.key, path]), "alias": "promotionMechanisms.gitRepoUpdates", "uses": "gitRepoUpdates",
			"origin": {"ref": s.ref, "path": path},
		},
		"repo_url": url,
		"repo_id": repo.id(url),
		"repo_known": expr.is_known(url),
		"rev": revision.classify(object.get(g, "writeBranch", "")),
		"branch_from": "writeBranch",
		"via": "",
		"clone": null,
		"checkout": -1,
		"work_tree": "",
		"path": "",
	}
]

checkout_rev(step, co) := revision.classify(stages.value(step, co.branch)) if {
	is_string(co.branch)
} else := {"kind": "unknown", "name": "detached"} if {
	object.get(co, "commit", null) != null
} else := {"kind": "unknown", "name": "detached"} if {
	object.get(co, "tag", null) != null
} else := {"kind": "default", "name": "HEAD"}

clean_path(p) := "" if {
	is_string(p)
	trim_right(trim_prefix(p, "./"), "/") == "."
} else := trim_right(trim_prefix(p, "./"), "/") if {
	is_string(p)
} else := ""

# work_tree: the clone whose checkout path holds path (the longest such).
work_tree(clones, path) := [c |
	candidates := [x | some x in clones; under(path, x.path)]
	longest := max({count(x.path) | some x in candidates})
	some c in candidates
	count(c.path) == longest
]

under(path, root) if path == root

under(path, root) if startswith(path, concat("", [root, "/"]))

under(_, "")

# push_targets: the branches a push of stages.records[i] lands on,
# each with where the branch comes from: targetBranch; with
# generateTargetBranch, the target branch of the git-open-pr steps whose
# sourceBranch reads that push's branch output (outputs.<alias>.branch,
# task.outputs.<alias>.branch), else of every git-open-pr of the Stage (via
# names that step; none: an ephemeral branch nobody tracks; marked "unlinked"
# here, paired by paired); otherwise the branch checked out in the work tree.
push_targets(i, push, clone) := [{"rev": revision.classify(stages.value(push, push.config.targetBranch)), "from": "targetBranch", "via": ""}] if {
	has_target_branch(push)
} else := [pr_target(pr) | some pr in linked_prs(i, push)] if {
	generates(push)
	count(linked_prs(i, push)) > 0
} else := [{"rev": {"kind": "unknown", "name": "generated"}, "from": "unlinked", "via": ""}] if {
	generates(push)
} else := [{"rev": {"kind": "unknown", "name": "generated"}, "from": "generated", "via": ""}] if {
	generate_unknown(push)
} else := [{"rev": clone.rev, "from": "checkout", "via": ""}]

# paired turns a write of push_writes into the writes it stands for: itself,
# or for an unlinked one, one write through each git-open-pr of its Stage, or
# when its Stage is over max_unlinked_pairs (unlinked_cut, reported by
# oversized-stage), one write whose branch is unknown.
paired(w) := [w] if {
	w.branch_from != "unlinked"
} else := [object.union(object.remove(w, ["rev"]), {
	"id": concat("|", [w.step.id, w.clone.id, sprintf("%d", [w.checkout]), pr.id]),
	"rev": revision.classify(stages.value(pr, pr.config.targetBranch)),
	"branch_from": "pull-request",
	"via": pr.id,
	"pull_request": pr,
}) |
	some pr in open_prs(w.stage)
] if {
	not w.stage_index in unlinked_cut
} else := [object.union(w, {"branch_from": "generated"})]

has_target_branch(push) if {
	is_string(push.config.targetBranch)
	push.config.targetBranch != ""
}

pr_target(pr) := {"rev": revision.classify(stages.value(pr, pr.config.targetBranch)), "from": "pull-request", "via": pr.id, "pr": pr}

# linked_prs: the git-open-pr steps of stages.records[i] whose sourceBranch
# reads push's branch output. They are looked up by the alias they read
# (pr_index), not found by testing every git-open-pr of the Stage against every
# push (a Stage of n pushes and n pull requests made n^2 tests); each one found
# is still tested.
linked_prs(i, push) := [pr |
	alias := short_alias(push.alias)
	some pr in object.get(pr_index, [[i, alias]], [])
	reads_branch_of(pr.config.sourceBranch, alias)
]

open_prs(s) := [pr |
	some pr in s.steps
	pr.uses == "git-open-pr"
	is_string(pr.config.targetBranch)
]

# pr_reads lists, for every Stage (by index in stages.records), each git-open-pr
# step with each alias whose branch output its sourceBranch may read, as
# reads_branch_of reads them: the name in outputs.<name>.branch (without a ".",
# and up to the first ".branch" without a space, for an alias holding a ".")
# and the name in outputs['<name>'].branch. The three searches together find
# every alias reads_branch_of accepts in any string where one reading does not
# hide another inside it (outputs.x.outputs.a.b.branch hides a.b).
pr_reads := [{"key": [i, alias], "pr": pr} |
	some i, s in stages.records
	some pr in open_prs(s)
	is_string(pr.config.sourceBranch)
	some alias in read_aliases(pr.config.sourceBranch)
]

read_aliases(source) := {m[1] |
	some pattern in [
		`outputs\.([^.]*)\.branch`,
		`outputs\.([^\s]*?)\.branch`,
		`outputs\[\s*['"]([^'"]*)['"]\s*\]\.branch`,
	]
	some m in regex.find_all_string_submatch_n(pattern, source, -1)
}

# pr_index maps [Stage index, alias] to the git-open-pr steps of the Stage that
# may read the alias's branch output, in the order of the Stage's steps.
pr_index := {key: prs |
	some key in {r.key | some r in pr_reads}
	prs := [r.pr | some r in pr_reads; r.key == key]
}

# max_unlinked_pairs bounds, per Stage, the pairs of a push to a generated branch
# that no git-open-pr names with a git-open-pr it may then go through (each pair
# a write the model follows): n such pushes and n pull requests make n^2 writes.
# Real Stages have one or two of each.
max_unlinked_pairs := 100

# unlinked lists the Stages with pushes to generated branches that no
# git-open-pr names: how many such pushes, and how many git-open-pr steps each
# of them is paired with (from the writes marked "unlinked": a Stage without
# such a push costs nothing here).
unlinked := [{"i": i, "ref": s.ref, "key": s.key, "pushes": count(pushes), "pullRequests": count(open_prs(s))} |
	some i in {w.stage_index | some w in push_writes; w.branch_from == "unlinked"}
	s := stages.records[i]
	pushes := {w.step.id | some w in push_writes; w.stage_index == i; w.branch_from == "unlinked"}
]

# unlinked_cut lists the Stages (by index in stages.records) over
# max_unlinked_pairs: the targets of those pushes are unknown, and no finding
# depends on them.
unlinked_cut contains u.i if {
	some u in unlinked
	u.pushes * u.pullRequests > max_unlinked_pairs
}

# oversized_stages lists the Stages of unlinked_cut, for oversized-stage.
oversized_stages := [u | some u in unlinked; u.i in unlinked_cut]

short_alias(alias) := parts[count(parts) - 1] if {
	is_string(alias)
	parts := split(alias, "::")
} else := ""

reads_branch_of(source, alias) if {
	is_string(source)
	regex.match(sprintf(`outputs(\.%s|\[\s*['"]%s['"]\s*\])\.branch`, [regex_quote(alias), regex_quote(alias)]), source)
}

regex_quote(s) := regex.replace(s, `[.*+?()|\[\]{}^$\\-]`, `\$0`)

generates(push) if push.config.generateTargetBranch == true

generates(push) if stages.value(push, push.config.generateTargetBranch) == "true"

generate_unknown(push) if {
	is_string(push.config.generateTargetBranch)
	not expr.known(stages.value(push, push.config.generateTargetBranch))
}

# writers lists every Stage write with its pointer.
writers := [object.union(w, {"pointer": pointer(w.repo_id, w.repo_known, w.rev)}) | some w in raw_writers]

# writers_by_pointer groups writes on known pointers by pointer key.
writers_by_pointer := {k: group |
	some k in {w.pointer.key | some w in writers; w.pointer.known}
	group := [w | some w in writers; w.pointer.key == k]
}

# writers_by_stage groups writes by Stage key.
writers_by_stage := {k: group |
	some k in {w.stage.key | some w in writers}
	group := [w | some w in writers; w.stage.key == k]
}

# unknown_writes lists the Stages some of whose pushes land on a repository or
# branch the model cannot know.
unknown_writes := {w.stage.key | some w in writers; not w.pointer.known} | unknown_steps

# unknown_steps lists the Stages with a task step whose PromotionTask no input
# defines: what those steps push and pin is unknown, not absent.
unknown_steps := {s.key |
	some s in stages.records
	some step in s.steps
	step.task_resolved == false
}
