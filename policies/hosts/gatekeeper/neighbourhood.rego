# The Gatekeeper adapter's second half: the reviewed objects' pointers, which
# narrow the objects a review reads (see related in adapter.rego).
package lib.flipflop.gatekeeper

import data.lib.flipflop.apps
import data.lib.flipflop.model
import data.lib.flipflop.revision

# The pointers of the reviewed objects. Every finding is about pointers (a
# repository's branch, HEAD or version range) and what writes and pins them,
# so the objects that mention a reviewed repository are narrowed to those that
# can touch one of the pointers the reviewed objects track or write, found by
# the model itself run on the reviewed objects (old and new), their tasks, the
# Applications they name and the ApplicationSets that may generate one they
# name. When the model cannot tell one of those pointers, nothing is narrowed
# beyond the repositories.

core_docs := array.concat(
	array.concat(
		[{"path": "admission review", "contents": o} | some o in subjects],
		[{"path": "inventory", "contents": t} | some t in review_tasks],
	),
	array.concat(named_apps, named_appsets),
)

# named_apps are the Applications the reviewed objects name (found by name
# before any of them is read).
named_apps := [{"path": "inventory", "contents": o} |
	some [ns, name] in named_app_keys
	o := view([ns, "argoproj.io/v1alpha1", "Application", name])
	not same(review_ref, "Application", ns, name)
]

# named_appsets are the ApplicationSets that may generate an Application the
# reviewed objects name (named_generated).
named_appsets := [{"path": "inventory", "contents": o} |
	some [ns, name] in named_appset_keys
	o := view([ns, "argoproj.io/v1alpha1", "ApplicationSet", name])
	not same(review_ref, "ApplicationSet", ns, name)
]

core_pointers := ps if {
	# regal ignore:with-outside-test-context
	ps := array.concat([s.pointer | some s in model.sources], [w.pointer | some w in model.writers]) with input as core_docs with data.lib.flipflop.config.settings as settings
}

# narrowed says that every pointer of the reviewed objects is known.
default narrowed := false

narrowed if {
	every p in core_pointers {
		p.known
	}
}

# core_words are the names of those pointers, lower case, as a revision or a
# branch field spells them; with every spelling of the default branch when one
# is among them (HEAD stands for main or master, whichever the estate names).
core_words := words | default_words if {
	some w in words
	w in default_words
} else := words

words := {lower(p.name) | some p in core_pointers}

default_words := {"", "head", "main", "master", lower(object.get(settings, "default_branch", ""))}

# on_core_pointer says an Application tracks a revision spelled as one of the
# pointers' names (the model's own reading of a revision).
on_core_pointer(_) if not narrowed

on_core_pointer(at) if {
	narrowed
	some r in app_revisions(at)
	revision_on_core(r)
}

# revision_on_core says a revision, as an Application source writes it, may
# name one of the pointers (every revision may when they are not narrowed).
# A function of the revision, so that the Applications on one revision
# share its answer.
revision_on_core(_) if not narrowed

revision_on_core(r) if {
	narrowed
	may_name_core(r)
	lower(revision.classify(r).name) in core_words
}

# may_name_core is a cheap test that a revision can name one of the pointers
# (the model's reading of it is its text, trimmed, perhaps after refs/heads/
# or refs/tags/, or HEAD when it is empty), so that only those are read by
# the model's classification.
may_name_core(r) if not is_string(r)

may_name_core(r) if {
	is_string(r)
	trim_space(r) == ""
}

may_name_core(r) if {
	is_string(r)
	some w in core_words
	w != ""
	contains(lower(r), w)
}

# app_revisions are the revisions of an Application's sources, as written
# ("" where a source leaves it out: the default branch).
app_revisions(at) := array.concat(
	array.concat(
		[object.get(src, "targetRevision", "") | src := inv(at).spec.source; is_object(src)],
		[object.get(src, "targetBranch", "") | src := inv(at).spec.sourceHydrator.syncSource; is_object(src)],
	),
	[object.get(src, "targetRevision", "") | some src in array_in(at, ["spec", "sources"]); is_object(src)],
)

# checks_out_default says the inventory Stage or task at at checks out the
# default branch in a git-clone step.
checks_out_default(at) if {
	some step in array.concat(array_in(at, ["spec", "promotionTemplate", "spec", "steps"]), array_in(at, ["spec", "steps"]))
	step.uses == "git-clone"
	some c in array_at(step, ["config", "checkout"])
	default_checkout(c)
}

# touch_words are what a spec's text (JSON, lower case) holds when it names
# one of the pointers or a related Application (quoted), or selects
# Applications by label.
touch_words := ((core_words - {""}) | {sprintf("%q", [n]) | some n in related_app_names}) | {"selector"} if narrowed

# touch_patterns are regular expressions a spec's text matches when it may
# touch one of the pointers: each of touch_words, as a literal (which the
# regular expression engine finds as contains does), and one for a branch or
# an Application name computed by an expression.
touch_patterns := array.concat(
	[regex_literal(w) | some w in touch_words],
	[`"(branch|targetbranch|sourcebranch|name)":"[^"]*\$\{\{`],
)

# regex_literal is s as a regular expression that matches s alone.
regex_literal(s) := strings.replace_n(
	{
		`\`: `\\`, ".": `\.`, "+": `\+`, "*": `\*`, "?": `\?`, "(": `\(`, ")": `\)`, "|": `\|`,
		"[": `\[`, "]": `\]`, "{": `\{`, "}": `\}`, "^": `\^`, "$": `\$`,
	},
	s,
)

# checks_out_main says a Stage that checks out the default branch may touch
# one of the pointers (the default branch is among them).
default checks_out_main := false

checks_out_main if {
	narrowed
	"main" in core_words
}

# default_checkout says a git-clone checkout is of the default branch (the
# model's reading: no branch, commit or tag).
default_checkout(c) if {
	not is_string(c.branch)
	object.get(c, "commit", null) == null
	object.get(c, "tag", null) == null
}

related_app_names := (({lower(e.contents.metadata.name) | some e in related_apps} | {lower(review.metadata.name) | review.kind == "Application"}) | {s |
	some [_, _, s] in named_generated
}) | review_generated.names

# review_generated are the Applications the reviewed ApplicationSet (old and
# new) generates, as the model renders them from the reviewed objects alone:
# the names it knows (lower case), and the literal ends of each name it can
# only give as a pattern (a parameter nobody can know, rendered *). (An
# ApplicationSet is expanded here whatever the size of the estate's others:
# the model may leave it unexpanded in the whole estate.)
default review_generated := {"names": set(), "ends": set()}

review_generated := {
	"names": {n | some n in patterns; not contains(n, "*")},
	"ends": {[parts[0], parts[count(parts) - 1]] | some n in patterns; contains(n, "*"); parts := split(n, "*")},
} if {
	review.kind == "ApplicationSet"

	# regal ignore:with-outside-test-context
	records := apps.records with input as core_docs with data.lib.flipflop.config.settings as settings
	patterns := {lower(a.name_pattern) | some a in records}
}
