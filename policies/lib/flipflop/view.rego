# METADATA
# title: Model view
# description: |
#   The model as plain data for tools that draw, explain or edit it (flipflop
#   graph, explain, fix, diagnose, and Go programs through evaluator.Model): Stages
#   with every promotion step, Applications with their tracked pointers, pins and
#   writes, each with its provenance. A step says where it is written (the object
#   holding it and a JSON pointer into that object: a Stage's own step, or a
#   PromotionTask's step with the Stage step that brought it in) and carries its
#   config with ctx and vars substituted as Kargo would. A pin names its
#   argocd-update step and the `apps[]` and `sources[]` entries that make it; a
#   write names its push step, the git-clone and checkout whose work tree it
#   pushes, and where its branch comes from. An Application names the object its
#   spec is written in (itself, or the ApplicationSet template that renders it,
#   with the generator elements behind it) and the JSON pointer of each source.
#   Tools join findings to this view by the ids findings carry; they never
#   substitute, inflate, resolve or match anything themselves.
package lib.flipflop.view

import data.lib.flipflop.apps
import data.lib.flipflop.expr
import data.lib.flipflop.model
import data.lib.flipflop.stages

# estate is the model for drawing and explaining it: Stages, Applications,
# pins and writes.
estate := {
	"stages": [stage(r) | some r in stages.records],
	"applications": [app(a) | some a in apps.records],
	"pins": [pin(p) | some p in array.concat(model.pins, model.latent_pins)],
	"writes": [write(w) | some w in model.writers],
}

# detailed is estate with what a tool that edits the estate needs besides:
# every promotion step of every Stage (resolved), the steps that commit and
# edit each write's work tree, the values of each source the model cannot
# know, and the Applications that sync each written Application (app of apps).
detailed := {
	"stages": [object.union(stage(r), {"steps": [step(s) | some s in stages.all_steps(i)]}) | some i, r in stages.records],
	"applications": [object.union(app(a), {"sources": [detailed_source(s) | some s in x.sources], "syncedBy": synced_by(a)}) |
		some a in apps.records
		x := app(a)
	],
	"pins": estate.pins,
	"writes": [object.union(write(w), {"commits": [c.id | some c in commits(w)], "edits": [e.id | some e in edits(w)]}) |
		some w in model.writers
	],
}

stage(r) := {
	"key": r.key,
	"ref": r.ref,
	"project": r.project,
	"name": r.name,
	"upstream": r.upstream,
}

step(s) := {
	"id": s.id,
	"alias": text(s.alias),
	"uses": text(s.uses),
	"index": s.index,
	"task": text(s.task),
	"taskResolved": s.task_resolved,
	"origin": s.origin,
	"scope": s.scope,
	"via": s.via,
	"config": resolved(s),
}

# resolved is a step's config with ctx and vars substituted in every string
# (what the model reads), other values as written.
resolved(s) := json.patch(s.config, [{"op": "replace", "path": json_pointer(path), "value": stages.value(s, v)} |
	walk(s.config, [path, v])
	is_string(v)
	contains(v, "${{")
])

# json_pointer renders a walk path as a JSON pointer (RFC 6901).
json_pointer(path) := concat("", [sprintf("/%s", [escape(seg)]) | some seg in path])

escape(seg) := replace(replace(seg, "~", "~0"), "/", "~1") if is_string(seg)

escape(seg) := sprintf("%v", [seg]) if not is_string(seg)

app(a) := {
	"key": a.key,
	"ref": a.ref,
	"namespace": a.namespace,
	"name": a.name,
	"autoSync": a.auto_sync,
	"nameKnown": a.name_known,
	"object": holder(a),
	"specPath": spec_path(a),
	"sourcesField": a.sources_field,
	"revertsSpec": a.reverts_spec,
	"destinationNamespace": a.destination_namespace,
	"sources": [source(a, s) | some s in a.sources],
	"generator": generator(a),
}

# holder is the object an Application's spec is written in: the Application, or
# the ApplicationSet that renders it.
holder(a) := a.generator.appset if a.appset != ""

holder(a) := a.ref if a.appset == ""

# spec_path is the JSON pointer of the Application spec in its holder.
spec_path(a) := sprintf("%s/spec", [a.generator.template_path]) if a.appset != ""

spec_path(a) := "/spec" if a.appset == ""

generator(a) := {
	"appset": a.generator.appset,
	"templatePath": a.generator.template_path,
	"templatePatch": a.generator.template_patch,
	"goTemplate": a.generator.go_template,
	"paramsKnown": a.generator_params_known,
	"params": a.generator.params,
	"elements": a.generator.elements,
} if {
	a.appset != ""
}

generator(a) := null if a.appset == ""

source(a, s) := {
	"index": s.index,
	"path": source_path(a, s),
	"repoURL": text(s.repo_url),
	"targetRevision": s.raw_revision,
	"chart": s.chart,
	"hydrator": s.hydrator,
	"fields": s.fields,
	"pointer": pointer(model.pointer(s.repo_id, s.repo_known, s.rev)),
}

# detailed_source adds to a source (as app renders it) the JSON pointers of
# its fields' values the model cannot know.
detailed_source(s) := object.union(s, {"unknownFields": sort([json_pointer(path) |
	walk(s.fields, [path, v])
	is_string(v)
	not expr.known(v)
])})

# source_path is the JSON pointer of a source in its holder.
source_path(a, s) := concat("", [a.generator.template_path, s.path]) if a.appset != ""

source_path(a, s) := s.path if a.appset == ""

pointer(p) := {
	"key": p.key,
	"known": p.known,
	"floating": p.floating,
	"repo": p.repo,
	"kind": p.kind,
	"name": p.name,
	"assumed": p.assumed,
	"text": model.describe(p),
}

pin(p) := {
	"id": p.id,
	"stage": p.stage.key,
	"application": p.app.key,
	"applicationRef": p.app.ref,
	"source": p.source.index,
	"repoURL": text(p.repo_url),
	"pointer": pointer(p.pointer),
	"desiredRevision": text(p.desired),
	"desiredClass": p.desired_class,
	"step": p.step.id,
	"stepAlias": text(p.step.alias),
	"entry": {"ref": p.step.origin.ref, "path": p.entry_path},
	"appEntry": {"ref": p.step.origin.ref, "path": p.app_entry_path},
	"via": p.via,
	"legacyField": p.legacy_field,
	"mechanisms": object.get(p, "mechanisms", false),
	"autoSync": p.app.auto_sync,
	"latent": object.get(p, "latent", false),
}

write(w) := {
	"id": w.id,
	"stage": w.stage.key,
	"repoURL": text(w.repo_url),
	"pointer": pointer(w.pointer),
	"step": w.step.id,
	"stepAlias": text(w.step.alias),
	"origin": w.step.origin,
	"branchFrom": w.branch_from,
	"pullRequest": w.via,
	"clone": clone_id(w),
	"checkout": w.checkout,
	"workTree": w.work_tree,
	"path": w.path,
}

# ---------------------------------------------------------------------------
# What a promotion does to a pushed work tree, for tools that change it.

# all_steps groups every inflated step by Stage key (the first Stage of a key
# that an estate holds twice).
all_steps := {k: stages.all_steps(i) |
	some k in {r.key | some r in stages.records}
	i := [j | some j, r in stages.records; r.key == k][0]
}

# commits: the git-commit steps that commit a write's work tree: in the push's
# list of steps, between its git-clone and the push, on the pushed path.
commits(w) := [] if {
	w.clone == null
} else := [s |
	some s in object.get(all_steps, w.stage.key, [])
	s.uses == "git-commit"
	s.scope == w.step.scope
	s.index > w.clone.index
	s.index < w.step.index
	model.clean_path(stages.value(s, object.get(s.config, "path", ""))) == w.path
]

# edits: the other steps that change files under a write's work tree before its
# first commit (the steps a render would replace).
edits(w) := [s |
	cs := commits(w)
	count(cs) > 0
	first := min({c.index | some c in cs})
	some s in object.get(all_steps, w.stage.key, [])
	s.scope == w.step.scope
	s.index > w.clone.index
	s.index < first
	not startswith(s.uses, "git-")
	raw := object.get(s.config, "path", "")
	is_string(raw)
	raw != ""
	model.under(model.clean_path(stages.value(s, raw)), w.work_tree)
]

# ---------------------------------------------------------------------------
# App of apps: the written Applications whose source path is the directory an
# Application's file is in (or a parent of it, with directory.recurse), so that
# syncing them re-applies it.

# app_dirs indexes written Applications by the cleaned path of each source.
app_dirs := {d: keys |
	some d in {model.clean_path(s.fields.path) | some a in apps.written; some s in a.sources; is_string(s.fields.path)}
	d != ""
	keys := {[a.key, recursive(s), a.ref.file] | some a in apps.written; some s in a.sources; model.clean_path(s.fields.path) == d}
}

recursive(s) if s.fields.directory.recurse == true

else := false

synced_by(a) := sort({k |
	a.appset == ""
	segs := split(dir_of(a.ref.file), "/")
	n := count(segs)
	some i in numbers.range(0, n - 1)
	some j in numbers.range(i + 1, n)
	d := concat("/", array.slice(segs, i, j))
	some [k, recurse, file] in object.get(app_dirs, d, set())
	file != a.ref.file
	reaches(j == n, recurse)
}) if {
	a.appset == ""
}

synced_by(a) := [] if a.appset != ""

# A directory that ends the file's directory is synced; one further up only
# with directory.recurse.
reaches(true, _)

reaches(false, true)

dir_of(file) := concat("/", array.slice(parts, 0, count(parts) - 1)) if {
	parts := split(file, "/")
	count(parts) > 1
} else := ""

clone_id(w) := w.clone.id if w.clone != null

clone_id(w) := "" if w.clone == null

# text renders a value that should have been a string.
text(v) := v if is_string(v)

text(v) := sprintf("%v", [v]) if not is_string(v)
