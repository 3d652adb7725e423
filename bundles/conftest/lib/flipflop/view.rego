# METADATA
# title: Model view
# description: |
#   The model as plain data for tools that draw or explain it (flipflop graph,
#   explain, fix previews): Stages, Applications with their tracked pointers, pins
#   and writes, each naming its objects by key and ref.
package lib.flipflop.view

import data.lib.flipflop.apps
import data.lib.flipflop.model
import data.lib.flipflop.stages

estate := {
	"stages": [{"key": s.key, "ref": s.ref} | some s in stages.records],
	"applications": [app(a) | some a in apps.records],
	"pins": [pin(p) | some p in model.pins],
	"writes": [write(w) | some w in model.writers],
}

app(a) := {
	"key": a.key,
	"ref": a.ref,
	"autoSync": a.auto_sync,
	"nameKnown": a.name_known,
	"sources": [source(s) | some s in object.get(sources_by_app, a.key, []); s.app.ref == a.ref],
}

sources_by_app := {k: group |
	some k in {s.app.key | some s in model.sources}
	group := [s | some s in model.sources; s.app.key == k]
}

source(s) := {
	"index": s.source.index,
	"repoURL": text(s.source.repo_url),
	"targetRevision": s.source.raw_revision,
	"pointer": pointer(s.pointer),
}

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
	"stage": p.stage.key,
	"application": p.app.key,
	"applicationRef": p.app.ref,
	"source": p.source.index,
	"repoURL": text(p.source.repo_url),
	"pointer": pointer(p.pointer),
	"desiredRevision": text(p.desired),
	"desiredClass": p.desired_class,
	"step": text(p.step.alias),
	"legacyField": p.legacy_field,
}

write(w) := {
	"stage": w.stage.key,
	"repoURL": text(w.repo_url),
	"pointer": pointer(w.pointer),
	"step": text(w.step.alias),
}

# text renders a value that should have been a string.
text(v) := v if is_string(v)

text(v) := sprintf("%v", [v]) if not is_string(v)
