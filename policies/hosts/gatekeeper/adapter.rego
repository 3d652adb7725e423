# METADATA
# title: Gatekeeper adapter
# description: |
#   Turns a Gatekeeper review into the model's input: the reviewed object plus the
#   synced inventory of Applications, ApplicationSets, Stages, PromotionTasks,
#   Warehouses and ClusterPromotionTasks (the reviewed object's stale inventory
#   copy excluded), runs every admission rule, and keeps the findings of the
#   rules the constraint selects (its rules and skipRules parameters) that
#   involve the reviewed object (for a PromotionTask or ClusterPromotionTask:
#   the Stages that use it).
#   At admission, a finding is a violation only when the change makes the estate
#   worse: every admission rule runs on the estate as it was (the old object on
#   an UPDATE, the estate without the object on a CREATE) and as it would be, and
#   a finding that was there before, that replaces one the change removed or
#   shrank, or that is a move in progress is let through (see tolerated), so an
#   existing problem never freezes its objects (status writes, each step of a
#   fix, whichever rules a constraint reports).
#   A DELETE is never a violation, nor an UPDATE that leaves what the model reads
#   of the object as it was (a status write): neither runs the rule. Audit (no
#   operation) reports every finding involving the object; for a task, those it
#   contributes to.
#   Settings come from the constraint's parameters (defaultBranch, argocdNamespace, kargoVersion,
#   annotationWaivers: false to ignore flipflop.dev/ignore annotations), the
#   rules it reports from rules and skipRules.
#   Findings waived by a flipflop.dev/ignore annotation are not violations.
package lib.flipflop.gatekeeper

import data.lib.flipflop.model
import data.lib.flipflop.repo

# The inventory paths read: one per kind the model needs, nothing wider.
namespaced := [
	["argoproj.io/v1alpha1", "Application"],
	["argoproj.io/v1alpha1", "ApplicationSet"],
	["kargo.akuity.io/v1alpha1", "Stage"],
	["kargo.akuity.io/v1alpha1", "PromotionTask"],
	["kargo.akuity.io/v1alpha1", "Warehouse"],
]

# The cluster-scoped inventory paths read.
cluster_scoped := [["kargo.akuity.io/v1alpha1", "ClusterPromotionTask"]]

review := input.review.object

review_ref := {"kind": review.kind, "namespace": object.get(review, ["metadata", "namespace"], ""), "name": review.metadata.name}

# operation is the admission operation; "" in audit and in `gator test`, which
# review objects without an admission request.
default operation := ""

operation := o if {
	o := input.review.operation
	is_string(o)
}

# before is the reviewed object as it was, on an UPDATE.
before := o if {
	operation == "UPDATE"
	o := input.review.oldObject
	is_object(o)
	o.kind == review.kind
}

task_kinds := {"PromotionTask", "ClusterPromotionTask"}

default reviewed_task := false

reviewed_task if review.kind in task_kinds

# subjects are the objects whose findings are reviewed: the object (and what it
# was), and for a task the inventory Stages that use it.
subjects := array.concat(reviewed, task_users)

reviewed := [review, before] if {
	is_object(before)
} else := [review]

# task_users are the inventory Stages whose steps run the reviewed task.
task_users := [s |
	reviewed_task
	some ns, name
	data.inventory.namespace[ns]["kargo.akuity.io/v1alpha1"].Stage[name]
	uses_task([ns, "kargo.akuity.io/v1alpha1", "Stage", name], review)
	s := view([ns, "kargo.akuity.io/v1alpha1", "Stage", name])
]

task_user_keys := {sprintf("%s/%s", [s.metadata.namespace, s.metadata.name]) | some s in task_users}

# uses_task says the inventory Stage at at runs task.
uses_task(at, task) if {
	same_scope(at, task)
	some step in array_in(at, ["spec", "promotionTemplate", "spec", "steps"])
	is_object(step.task)
	step.task.name == task.metadata.name
	task_step_kind(step.task) == task.kind
}

task_step_kind(t) := object.get(t, "kind", "PromotionTask")

# step_task_key is the key (as task_key) of the task a Stage in namespace ns
# reaches with a task step's reference.
step_task_key(ref, ns) := sprintf("/%s", [ref.name]) if {
	ref.kind == "ClusterPromotionTask"
} else := sprintf("%s/%s", [ns, ref.name]) if {
	task_step_kind(ref) == "PromotionTask"
}

same_scope(_, task) if task.kind == "ClusterPromotionTask"

same_scope(at, task) if {
	task.kind == "PromotionTask"
	inv(at).metadata.namespace == task.metadata.namespace
}

# docs is the model's input: conftest's combined shape. Only the inventory
# objects that can take part in a finding about the reviewed object go in:
# those that mention one of its repositories (every finding is about one
# repository's pointers and writes), and the tasks and Stages that reach them.
# Gatekeeper keeps nothing between reviews, so this keeps a review's cost to
# the related objects plus one cheap pass over the inventory.
docs := array.concat([{"path": "admission review", "contents": review}], related)

# baseline_docs is the estate a change is judged against: the old object on an
# UPDATE; without the object on a CREATE, and, for a task in audit, without the
# task (what the task contributes). Undefined otherwise (audit of a Stage or an
# Application: every finding involving it is reported).
baseline_docs := array.concat([{"path": "admission review (before)", "contents": before}], related) if {
	is_object(before)
} else := related if {
	operation == "CREATE"
} else := related if {
	operation == ""
	reviewed_task
}

# changed says that the review can change a finding, so the rule must run: not
# on a DELETE (see candidates), nor on an UPDATE that leaves every field the
# model reads as it was. Argo CD and Kargo write status with full updates, and
# a status write, a new resourceVersion or managed fields leave the model's
# input, and so every finding, as they were: such a review reads nothing of
# the inventory.
changed if {
	not deleting
	not unchanged_update
}

unchanged_update if {
	is_object(before)
	model_view(review) == model_view(before)
}

# model_view is what the model reads of an object: its apiVersion, kind, name,
# namespace, labels, annotations and spec (evaluator tests hold that no policy
# reads anything else).
model_view(o) := {
	"apiVersion": object.get(o, "apiVersion", null),
	"kind": object.get(o, "kind", null),
	"metadata": {k: object.get(o, ["metadata", k], null) | some k in ["name", "namespace", "labels", "annotations"]},
	"spec": object.get(o, "spec", null),
}

# judged says that findings are compared with the baseline.
judged if baseline_docs

array_at(o, path) := v if {
	v := object.get(o, path, [])
	is_array(v)
} else := []

# The scan of the inventory hands functions an object's place in it, at:
# [namespace, group/version, kind, name] (namespace "" for a cluster-scoped
# kind), never the object. Gatekeeper's store gives an object as a lazy value,
# converted to Rego only where a rule reads it, and OPA memoises a function
# call by its arguments: an object passed to a function is hashed, which
# converts all of it, status included (docs/performance.md, step 4c).

# inv is the inventory object at at.
inv(at) := data.inventory.namespace[at[0]][at[1]][at[2]][at[3]] if {
	at[0] != ""
} else := data.inventory.cluster[at[1]][at[2]][at[3]]

# view is what the model reads of the inventory object at at (model_view's
# fields, those the object has): a related object goes to the model, which
# reads it through functions, and so whole; its status never does.
view(at) := object.union(
	{k: v | some k in ["apiVersion", "kind", "spec"]; v := inv(at)[k]},
	{"metadata": {k: v | some k in ["name", "namespace", "labels", "annotations"]; v := inv(at).metadata[k]}},
) if {
	is_object(inv(at).metadata)
} else := {k: v | some k in ["apiVersion", "kind", "spec"]; v := inv(at)[k]}

# array_in is the array at path in the inventory object at at ([] when there is none).
array_in(at, path) := v if {
	v := object.get(inv(at), path, [])
	is_array(v)
} else := []

# review_tasks are the inventory tasks the reviewed objects run, looked up by
# key: a PromotionTask in the Stage's namespace, a ClusterPromotionTask by name.
review_tasks := [t | some t in {t |
	some s in subjects
	s.kind == "Stage"
	some step in array_at(s, ["spec", "promotionTemplate", "spec", "steps"])
	is_object(step.task)
	t := inventory_task(step.task, object.get(s, ["metadata", "namespace"], ""))
}]

# inventory_task is the inventory copy of the task a step's task reference
# names from a Stage in namespace ns (never the reviewed object's stale copy).
inventory_task(ref, ns) := t if {
	ref.kind == "ClusterPromotionTask"
	data.inventory.cluster["kargo.akuity.io/v1alpha1"].ClusterPromotionTask[ref.name]
	not same(review_ref, "ClusterPromotionTask", "", ref.name)
	t := view(["", "kargo.akuity.io/v1alpha1", "ClusterPromotionTask", ref.name])
} else := t if {
	task_step_kind(ref) == "PromotionTask"
	data.inventory.namespace[ns]["kargo.akuity.io/v1alpha1"].PromotionTask[ref.name]
	not same(review_ref, "PromotionTask", ns, ref.name)
	t := view([ns, "kargo.akuity.io/v1alpha1", "PromotionTask", ref.name])
}

# reviewer_strings are the strings of the reviewed objects and their tasks,
# lower case: argocd-update names an Application with one of them.
reviewer_strings := {lower(v) |
	some obj in array.concat(subjects, review_tasks)
	walk(obj, [_, v])
	is_string(v)
}

repos := {id |
	some obj in array.concat(subjects, review_tasks)
	walk(obj, [_, v])
	is_string(v)
	regex.match(`^([a-zA-Z][a-zA-Z0-9+.-]*://|[^@/\s]+@[^:/\s]+:)`, v)
	id := repo.id(v)
	id != ""
}

# needles are the spellings of those repositories as they appear in text:
# host/path (https, ssh://) and host:path (scp form).
needles := repos | {concat(":", [parts[0], concat("/", array.slice(parts, 1, count(parts)))]) |
	some id in repos
	parts := split(id, "/")
	count(parts) > 1
}

mentions_repo(text) if {
	some n in needles
	contains(text, n)
}

# related_task_keys are the inventory tasks that mention a repository, by the
# key a Stage's task step reaches them by ("namespace/name", "/name" for a
# ClusterPromotionTask).
related_task_keys := {sprintf("%s/%s", [at[0], at[3]]) | some at in touching_tasks} | {sprintf("/%s", [at[3]]) |
	some at in touching_cluster_tasks
}

# related lists the inventory objects that can take part in a finding about
# the reviewed object, kind by kind in the order of namespaced and
# cluster_scoped (the reviewed object's stale copy left out): those that
# mention one of its repositories and can touch one of its pointers
# (neighbourhood.rego), the Applications it names and the ApplicationSets that
# may generate one it names, the Stages that name it (or an Application it
# generates) or run a related task. Only a related object is compared with
# the reviewed object's key: an Application by its repository URLs,
# revisions and name, anything else by the JSON text of its spec (never its
# status: a live Stage's freight history names repositories it may no longer
# promote). TestReviewReadsItsNeighbourhoodOnly (internal/export) holds that
# the admission rules find the same about the reviewed object in these
# objects as in the whole inventory.
related := array.concat(
	array.concat(
		related_apps,
		[{"path": "inventory", "contents": view(at)} |
			some [_, kind] in namespaced
			kind != "Application"
			some at in related_keys[kind]
			not same(review_ref, kind, at[0], at[3])
		],
	),
	[{"path": "inventory", "contents": view(at)} |
		some [_, kind] in cluster_scoped
		some at in related_keys[kind]
		not same(review_ref, kind, "", at[3])
	],
)

# related_keys are the places (at) of the related inventory objects other
# than Applications, by kind: a Stage or a task whose spec's text mentions a
# reviewed repository and may touch one of the reviewed pointers (touching),
# an ApplicationSet or a Warehouse by its repositories alone, and the Stages
# and ApplicationSets related to the review otherwise. The scan reads every
# synced object, so each set is built by a comprehension that tests the
# review's conditions first (once) and an object with builtins only: a
# function call per object costs a memo entry keyed by its arguments, and
# tens of allocations, for every Stage of every review.
related_keys := {
	"Stage": ((((touching.Stage | touching_or_checking_out.Stage) | stages_running_related_tasks) | stages_running_reviewed_task) | stages_naming_generated),
	"PromotionTask": touching_tasks,
	"ClusterPromotionTask": touching_cluster_tasks,
	# ApplicationSets that may generate an Application the reviewed objects
	# name, too.
	"ApplicationSet": (mentioning("argoproj.io/v1alpha1", "ApplicationSet") | {at |
		some [ns, name] in named_appset_keys
		at := [ns, "argoproj.io/v1alpha1", "ApplicationSet", name]
	}),
	"Warehouse": mentioning("kargo.akuity.io/v1alpha1", "Warehouse"),
}

# touching are the places of the inventory Stages and PromotionTasks, by
# kind, whose spec's text (JSON, lower case) holds one of the keys of that
# kind's patterns and matches one of its patterns. (Every object is read
# once, its text built once; a rule, not a function of the kind, so that
# nothing is passed per object.) When the default branch is among the
# pointers (checks_out_main), touching is empty and touching_or_checking_out
# holds these and the Stages and tasks that mention a reviewed repository and
# check out the default branch: one scan either way.
touching := {kind: {at |
	not checks_out_main
	some ns, name
	spec := data.inventory.namespace[ns]["kargo.akuity.io/v1alpha1"][kind][name].spec
	text := lower(json.marshal(spec))
	some n, ps in patterns
	contains(text, n)
	some p in ps
	regex.match(p, text)
	at := [ns, "kargo.akuity.io/v1alpha1", kind, name]
} |
	some [kind, patterns] in [["Stage", stage_patterns], ["PromotionTask", task_patterns]]
}

touching_or_checking_out := {kind: {at |
	checks_out_main
	some ns, name
	spec := data.inventory.namespace[ns]["kargo.akuity.io/v1alpha1"][kind][name].spec
	text := lower(json.marshal(spec))
	some n, ps in patterns
	contains(text, n)
	at := [ns, "kargo.akuity.io/v1alpha1", kind, name]
	count({1 |
		some p in ps
		regex.match(p, text)
	} | {2 |
		n in needles
		checks_out_default(at)
	}) > 0
} |
	some [kind, patterns] in [["Stage", stage_patterns], ["PromotionTask", task_patterns]]
}

# touching_tasks are the places of the related inventory PromotionTasks.
touching_tasks := touching.PromotionTask | touching_or_checking_out.PromotionTask

# task_patterns map each needle (a reviewed repository, as text spells it)
# to what a Stage's or task's text that holds it must match to touch one of
# the pointers: anything (the empty pattern) when they are not narrowed.
task_patterns := {n: touch_patterns | some n in needles} if {
	narrowed
} else := {n: [""] | some n in needles}

# stage_patterns are task_patterns and, reviewing an Application, the name
# of the Application quoted, in any Stage (the empty needle: on any
# repository).
stage_patterns := object.union(task_patterns, {"": [regex_literal(sprintf("%q", [lower(review.metadata.name)]))]}) if {
	review.kind == "Application"
} else := task_patterns

# touching_cluster_tasks are the same for the inventory ClusterPromotionTasks.
touching_cluster_tasks := {at |
	some name, obj in data.inventory.cluster["kargo.akuity.io/v1alpha1"].ClusterPromotionTask
	text := lower(json.marshal(object.get(obj, "spec", null)))
	some n in needles
	contains(text, n)
	at := ["", "kargo.akuity.io/v1alpha1", "ClusterPromotionTask", name]
	touches_task(at, text)
}

touches_task(_, _) if not narrowed

touches_task(_, text) if {
	some p in touch_patterns
	regex.match(p, text)
}

touches_task(at, _) if {
	checks_out_main
	checks_out_default(at)
}

# stages_running_related_tasks: the Stages that run a related task (only a
# spec whose text has a task step is read step by step).
stages_running_related_tasks := {at |
	count(related_task_keys) > 0
	some ns, name
	spec := data.inventory.namespace[ns]["kargo.akuity.io/v1alpha1"].Stage[name].spec
	contains(lower(json.marshal(spec)), "\"task\":")
	at := [ns, "kargo.akuity.io/v1alpha1", "Stage", name]
	some step in array_in(at, ["spec", "promotionTemplate", "spec", "steps"])
	is_object(step.task)
	step_task_key(step.task, ns) in related_task_keys
}

# stages_running_reviewed_task: reviewing a task, the Stages that use it.
stages_running_reviewed_task := {at |
	reviewed_task
	some ns, name
	data.inventory.namespace[ns]["kargo.akuity.io/v1alpha1"].Stage[name]
	at := [ns, "kargo.akuity.io/v1alpha1", "Stage", name]
	uses_task(at, review)
}

# stages_naming_generated: reviewing an ApplicationSet, the Stages that name
# an Application it generates (old or new), as the model renders it from the
# reviewed object alone, on any repository (a Stage's text is first looked
# at for the quoted start all those names share).
stages_naming_generated := {at |
	review.kind == "ApplicationSet"
	some ns, name
	spec := data.inventory.namespace[ns]["kargo.akuity.io/v1alpha1"].Stage[name].spec
	text := lower(json.marshal(spec))
	contains(text, generated_start)
	names_generated(text)
	at := [ns, "kargo.akuity.io/v1alpha1", "Stage", name]
}

# mentioning are the places of the inventory objects of a kind whose spec
# mentions a reviewed repository.
mentioning(gv, kind) := {at |
	some ns, name
	spec := data.inventory.namespace[ns][gv][kind][name].spec
	text := lower(json.marshal(spec))
	some n in needles
	contains(text, n)
	at := [ns, gv, kind, name]
}

related_apps := [{"path": "inventory", "contents": view([ns, "argoproj.io/v1alpha1", "Application", name])} |
	some [ns, name] in related_app_keys
	not same(review_ref, "Application", ns, name)
]

# related_app_keys are the namespaces and names of the related inventory
# Applications: those the reviewed objects name, and those that name a
# reviewed repository and track a revision that may name one of the
# reviewed pointers (on any of their sources): by spec.source (most of an
# estate have that one source) in source_app_keys, by spec.sources and
# spec.sourceHydrator in multi_source_app_keys. (One with both spec.source
# and spec.sources, which Argo CD reads as the latter, may be read for the
# first: an object more is never a finding less.)
related_app_keys := (named_app_keys | source_app_keys) | multi_source_app_keys

# source_app_keys are the Applications whose spec.source is related: one
# scan of the Applications, whose test depends on the review (decided once,
# before the scan, by the comprehension whose condition holds). Not
# narrowed, every revision may name a pointer: the repository decides.
# Narrowed, a revision that holds none of the pointers' names (lower case)
# can only name one when it is blank (HEAD) or no string (the model reads the
# name "" in it): unless head or "" is among core_words (the default branch is
# a pointer), only the revisions that hold a name are read by the model's
# classification (source_related, a function of the two fields, which the
# Applications on one repository and revision share); otherwise every source
# is.
source_app_keys := ({[ns, name] |
	not narrowed
	some ns, name
	u := data.inventory.namespace[ns]["argoproj.io/v1alpha1"].Application[name].spec.source.repoURL
	is_string(u)
	lu := lower(u)
	some n in needles
	contains(lu, n)
} | {[ns, name] |
	narrowed
	not blank_revision_core
	some ns, name
	src := data.inventory.namespace[ns]["argoproj.io/v1alpha1"].Application[name].spec.source
	rev := object.get(src, "targetRevision", "")
	is_string(rev)
	lr := lower(rev)
	some w in named_core_words
	contains(lr, w)
	source_related(object.get(src, "repoURL", null), rev)
}) | {[ns, name] |
	blank_revision_core
	some ns, name
	src := data.inventory.namespace[ns]["argoproj.io/v1alpha1"].Application[name].spec.source
	is_object(src)
	source_related(object.get(src, "repoURL", null), object.get(src, "targetRevision", ""))
}

# blank_revision_core says the pointers are narrowed and a blank revision or
# one that is no string may name one of them.
default blank_revision_core := false

blank_revision_core if {
	narrowed
	some w in {"", "head"}
	w in core_words
}

# named_core_words are the pointers' names (core_words but the empty one).
named_core_words := core_words - {""}

# multi_source_app_keys are the Applications with spec.sources or
# spec.sourceHydrator that are related through any of their sources.
multi_source_app_keys := {[ns, name] |
	some ns, name
	spec := data.inventory.namespace[ns]["argoproj.io/v1alpha1"].Application[name].spec
	some field in ["sources", "sourceHydrator"]
	spec[field]
	app_mentions_repo([ns, "argoproj.io/v1alpha1", "Application", name])
	on_core_pointer([ns, "argoproj.io/v1alpha1", "Application", name])
}

# source_related says an Application source on repository URL u at
# revision rev is related.
source_related(u, rev) if {
	url_mentions_repo(u)
	revision_on_core(rev)
} else := false

# The scan runs over every synced object in every review, so each test below
# costs an evaluation per object: the Applications' repository URLs are read
# from the inventory directly (a function call per field costs an evaluation
# and a memo entry each), a spec's text (its JSON, lower case) is built where
# the object is read, not by a function of at, and a clause that applies only
# to some reviews tests the review first, once per object instead of after a
# test of the object (docs/performance.md, step 4d).

# app_mentions_repo says the inventory Application at at names a reviewed
# repository in one of its sources: spec.source, each of spec.sources, or the
# dry or sync source of spec.sourceHydrator.
app_mentions_repo([ns, _, _, name]) if {
	spec := data.inventory.namespace[ns]["argoproj.io/v1alpha1"].Application[name].spec
	is_object(spec)
	some path in repo_url_paths
	url_mentions_repo(object.get(spec, path, null))
}

app_mentions_repo([ns, _, _, name]) if {
	sources := data.inventory.namespace[ns]["argoproj.io/v1alpha1"].Application[name].spec.sources
	is_array(sources)
	some src in sources
	url_mentions_repo(src.repoURL)
}

repo_url_paths := [
	["source", "repoURL"],
	["sourceHydrator", "drySource", "repoURL"],
	["sourceHydrator", "syncSource", "repoURL"],
]

url_mentions_repo(u) if {
	is_string(u)
	mentions_repo(lower(u))
}

# named_app_keys are the namespaces and names of the inventory Applications
# the reviewed objects name (one of their strings is the name, in any case),
# found in one pass over the Applications' keys: the reviewed Stage (or its
# tasks, or the Stages running the reviewed task) names them, and
# argocd-update reaches Applications by name.
named_app_keys := {[ns, name] |
	review.kind in {"Stage", "PromotionTask", "ClusterPromotionTask"}
	some ns, name
	data.inventory.namespace[ns]["argoproj.io/v1alpha1"].Application[name]
	reviewer_strings[lower(name)]
}

# named_generated lists the inventory ApplicationSets that may generate an
# Application the reviewed objects name, with that name: [namespace, name,
# Application name]. argocd-update reaches a generated Application by name as
# it does a written one, and the model renders it only from its
# ApplicationSet, which may mention none of the reviewed repositories. An
# ApplicationSet is tested by the names its templates give, without rendering
# them (one pass over the ApplicationSets, a few lookups each): a name written
# without placeholders is the name; one with placeholders ({{...}}) may be any
# name that starts with the text before the first, ends with the text after
# the last, and is at least as long as both (what its parameters are, the
# model knows only by rendering). Conservative: relating an ApplicationSet
# that generates no such name costs time only, missing one loses a finding.
named_generated := {[ns, name, n] |
	some [ns, name, [n]] in appset_name_ends
	n in reviewer_strings
} | {[ns, name, s] |
	some [ns, name, [prefix, suffix]] in appset_name_ends
	prefix in reviewer_name_prefixes
	suffix in reviewer_name_suffixes
	some s in reviewer_names
	startswith(s, prefix)
	endswith(s, suffix)
	count(s) >= count(prefix) + count(suffix)
}

# appset_name_ends are the inventory ApplicationSets with the ends (name_ends)
# of each name their templates give: [namespace, name, ends].
appset_name_ends := {[ns, name, name_ends(t)] |
	review.kind in {"Stage", "PromotionTask", "ClusterPromotionTask"}
	some ns, name
	data.inventory.namespace[ns]["argoproj.io/v1alpha1"].ApplicationSet[name]
	some t in appset_name_texts([ns, "argoproj.io/v1alpha1", "ApplicationSet", name])
}

named_appset_keys := {[ns, name] | some [ns, name, _] in named_generated}

# appset_name_texts are the names the templates of the inventory
# ApplicationSet at at give its Applications, as written (lower case): its
# template's, and each generator's own template's, which Argo CD merges over
# it. A templatePatch that may set the name can give any ("{{}}").
appset_name_texts(at) := name_texts(
	array.concat(
		[object.get(inv(at), ["spec", "template", "metadata", "name"], null)],
		[v.template.metadata.name | some g in array_in(at, ["spec", "generators"]); some v in g],
	),
	object.get(inv(at), ["spec", "templatePatch"], null),
)

name_texts(names, patch) := {lower(n) | some n in names; is_string(n)} | {"{{}}" |
	is_string(patch)
	contains(patch, "metadata")
	contains(patch, "name")
}

# name_ends is [name] for a name without placeholders, else the text before
# its first placeholder and after its last (blanks trimmed at the placeholder:
# a Go template's {{- and -}} remove them, and no name holds one).
name_ends(t) := [t] if {
	not contains(t, "{{")
} else := [trim_right(substring(t, 0, indexof(t, "{{")), " \t\r\n"), trim_left(parts[count(parts) - 1], " \t\r\n")] if {
	parts := split(t, "}}")
}

# reviewer_names are the reviewed objects' strings that can be a name (lower
# case, as Kubernetes names are): only those are matched with a templated
# name, and only when one of them starts and ends as the template does.
reviewer_names := {s | some s in reviewer_strings; regex.match(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`, s)}

reviewer_name_prefixes := {substring(s, 0, k) | some s in reviewer_names; some k in numbers.range(0, count(s))}

reviewer_name_suffixes := {substring(s, k, -1) | some s in reviewer_names; some k in numbers.range(0, count(s))}

# names_generated says a spec's text names an Application of
# review_generated: a few names are looked for in the text, many among its
# quoted strings, and a name the model cannot tell (a pattern: a parameter is
# unknown) by its literal ends.
names_generated(text) if {
	some [start, end] in generated_texts
	contains(text, start)
	contains(text, end)
}

names_generated(text) if {
	count(generated_many) > 0
	some m in regex.find_all_string_submatch_n(`"([^"\\]*)"`, text, -1)
	m[1] in generated_many
}

# generated_start is what every such text holds: the quoted start all the
# names and patterns share (their longest common prefix: that of the first
# and the last in order). Undefined when the ApplicationSet generates none.
generated_start := concat("", [`"`, substring(first, 0, n)]) if {
	starts := sort(review_generated.names | {prefix | some [prefix, _] in review_generated.ends})
	first := starts[0]
	last := starts[count(starts) - 1]
	n := max({k |
		some k in numbers.range(0, min([count(first), count(last)]))
		substring(first, 0, k) == substring(last, 0, k)
	})
}

# generated_texts are [start, end] pairs a spec's text holds when it names an
# Application of review_generated: a name, quoted (with an empty end), when
# there are few names (looked for one by one), and the literal ends of each
# pattern, quoted on their outer side. generated_many are the names when
# there are more.
generated_texts := few_generated | {[concat("", [`"`, prefix]), concat("", [suffix, `"`])] |
	some [prefix, suffix] in review_generated.ends
}

default few_generated := set()

few_generated := {[sprintf("%q", [n]), ""] | some n in review_generated.names} if {
	count(review_generated.names) <= 8
}

default generated_many := set()

generated_many := review_generated.names if {
	count(review_generated.names) > 8
}

same(ref, kind, ns, name) if {
	kind == ref.kind
	ns == ref.namespace
	name == ref.name
}

settings := object.union(
	{k: v |
		some [param, k] in [["defaultBranch", "default_branch"], ["argocdNamespace", "argocd_namespace"], ["kargoVersion", "kargo_version"]]
		v := input.parameters[param]
		is_string(v)
		v != ""
	},
	{"annotation_waivers": false | input.parameters.annotationWaivers == false},
)

# candidates are findings (evaluated by the template's entry module with
# input as docs and the settings) that involve the reviewed object, unwaived.
# A DELETE has none: Gatekeeper reviews it with the old object as the object,
# but once deleted the object takes part in no finding, and removing an object
# never introduces a contradiction about it (when the webhook is registered for
# DELETE, deleting a Stage of an existing contradiction is a fix).
candidates(findings) := {f |
	not deleting
	some f in findings
	not f.waived
	concerns(f)
}

deleting if operation == "DELETE"

concerns(f) if involves(f, review_ref)

concerns(f) if {
	reviewed_task
	some r in f.resources
	r.kind == "Stage"
	sprintf("%s/%s", [r.namespace, r.name]) in task_user_keys
}

# violations turns candidates into Gatekeeper violations, leaving out those
# that do not make the estate worse. after and baseline are what every
# admission rule found on the estate after and before the change
# ({"findings", "pins"}, see estate_facts): a change is judged over all of
# them together, whichever rules the constraint reports, so that a step out
# of a problem is never denied because it turns one rule's finding into
# another's. The message is the finding's alone (labelled adds the rule id).
violations(candidates, after, baseline) := {{"msg": f.message, "details": details(f)} |
	some f in candidates
	not tolerated(f, after, baseline)
}

# selected says that the constraint reports rule id: the rules its rules
# parameter lists (absent or empty: every admission rule), less those its
# skipRules parameter lists, so that one constraint can deny some rules and
# another warn on the rest (rules: [x] in one, skipRules: [x] in the other).
selected(id) if {
	listed(id)
	not id in parameter("skipRules", [])
}

listed(_) if count(parameter("rules", [])) == 0

listed(id) if id in parameter("rules", [])

# parameter is the constraint's parameter name, else fallback.
parameter(name, fallback) := v if {
	v := input.parameters[name]
} else := fallback

# labelled is violations as the template reports them: its constraints are
# not named after a rule, so each message starts with its rule id, in
# brackets (after the constraint's name, which Gatekeeper puts in front).
labelled(violations) := {object.union(v, {"msg": sprintf("[%s] %s", [v.details.rule, v.msg])}) | some v in violations}

# A finding is not new when (docs/hosts.md, "What deny denies"):
#
# 1. it was there before: same rule, same subject (key), and no resource the
#    finding before did not name;
tolerated(f, _, baseline) if {
	some b in baseline.findings
	b.rule == f.rule
	b.key == f.key
	count(resource_ids(f) - resource_ids(b)) == 0
}

# 2. it replaces a finding the change removed or shrank: a finding before (of
#    any admission rule, at least as severe) that no longer holds as it was,
#    and that named every resource this one names (dropping desiredRevision
#    turns a contradiction into a foreign writer, moving one end of a pin
#    turns it into an unreachable pin);
tolerated(f, after, baseline) if {
	some b in baseline.findings
	severity_rank[b.severity] >= severity_rank[f.severity]
	count(resource_ids(f) - resource_ids(b)) == 0
	not persists(b, after)
}

# 3. it is a move in progress: an unreachable pin of a Stage on an Application
#    source that the Stage pinned before too, not unreachable then, expecting
#    the Stage's own commit then and now, and one of whose ends (the branch the
#    Application tracks, the branches the Stage writes) the change moved.
#    Moving a Stage and its Application to a branch of their own takes two
#    changes, and whichever comes first leaves the pin unreachable until the
#    other follows; audit keeps reporting it until then. (A pin is known by its
#    Stage, Application and source, the key of an unreachable-desired-revision
#    finding, so that moving the Stage's steps into a PromotionTask on the way
#    is still the same pin.)
tolerated(f, after, baseline) if {
	f.rule == "unreachable-desired-revision"
	not f.key in {b.key | some b in baseline.findings; b.rule == f.rule}
	was := baseline.pins[f.key]
	was.desired == {"own"}
	now := after.pins[f.key]
	now.desired == {"own"}
	was != now
}

severity_rank := {"error": 2, "warning": 1}

# persists: the finding b (before) still holds after the change, on at least
# its resources.
persists(b, after) if {
	some a in after.findings
	a.rule == b.rule
	a.key == b.key
	count(resource_ids(b) - resource_ids(a)) == 0
}

# estate_facts are what a template judges a change by, on one estate (the
# template evaluates it with input as docs or baseline_docs): the findings of
# every admission rule (reports, waivers applied) and the model's pins by
# Stage, Application and source (model.source_key), with what each expects
# (desired_class) and its ends: the pointer the source tracks and the
# pointers the Stage writes.
estate_facts(findings) := {"findings": findings, "pins": pin_facts}

pin_facts := {k: {
	"desired": {p.desired_class | some p in group},
	"pointer": {p.pointer.key | some p in group},
	"writes": {w.pointer.key | some w in object.get(model.writers_by_stage, group[0].stage.key, [])},
} |
	some k, group in pins_by_key
}

# (grouped through keyed_pins, so that OPA indexes the comprehension by key:
# linear in the pins)
pins_by_key := {k: group |
	some k in {x.key | some x in keyed_pins}
	group := [x.pin | some x in keyed_pins; x.key == k]
}

keyed_pins := [{"key": model.source_key(p), "pin": p} | some p in model.pins]

resource_ids(f) := {[r.kind, r.namespace, r.name, object.get(r, "generatedBy", "")] | some r in f.resources}

involves(f, ref) if {
	some r in f.resources
	r.kind == ref.kind
	r.namespace == ref.namespace
	r.name == ref.name
}

involves(f, ref) if {
	ref.kind == "ApplicationSet"
	some r in f.resources
	r.generatedBy == sprintf("ApplicationSet %s/%s", [ref.namespace, ref.name])
}

details(f) := {
	"rule": f.rule,
	"severity": f.severity,
	"remediation": f.remediation,
	"resources": [sprintf("%s %s/%s", [r.kind, r.namespace, r.name]) | some r in f.resources],
}
