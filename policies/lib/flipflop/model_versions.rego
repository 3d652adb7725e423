# What depends on the Kargo version the model follows (config.kargo): the
# fields a version's argocd-update schema does not have, and the legacy
# promotionMechanisms a v1 Kargo no longer reads. (The package's METADATA is
# in model.rego; docs/model.md cites Kargo's lines.)
package lib.flipflop.model

import data.lib.flipflop.config
import data.lib.flipflop.legacy

# lacking maps where a field is written ("app", "source") to the fields of
# config.argocd_update_fields the version followed lacks there, by name: on the newest
# Kargo, the removed ones only.
lacking := {where: {f.field: f | some f in config.argocd_update_fields; f.where == where; config.lacks(f)} | some where in {"app", "source"}}

lacking_names := {where: object.keys(fs) | some where, fs in lacking}

# unsupported lists every field of an argocd-update step that the Kargo version
# followed does not have: where it is written, and what it is. Each entry is
# read once, by object.filter on the names lacking.
unsupported := array.concat(
	[{"stage": u.stage, "step": u.step, "path": sprintf("%s/%s", [u.entry_path, name]), "field": lacking.app[name]} |
		some u in updates
		some name, v in object.filter(u.entry, lacking_names.app)
		v != null
	],
	[{"stage": u.stage, "step": u.step, "path": sprintf("%s/sources/%d/%s", [u.entry_path, x.index, name]), "field": lacking.source[name]} |
		some u in updates
		some x in u.sources
		some name, v in object.filter(x.entry, lacking_names.source)
		v != null
	],
)

failures contains {"stage": x.stage.key, "reason": "unsupported-field"} if {
	some x in unsupported
}

# desired_commit_from_step: the legacy desiredCommitFromStep is a pin only on
# the versions that have it (v0.9 to v1.2).
desired_commit_from_step if not lacking.source.desiredCommitFromStep

# legacy_dropped lists the Stages written with spec.promotionMechanisms when
# the run names a Kargo version from v1.0 on: the Stage CRD no longer has the
# field, so the API server drops it and the Stage promotes nothing. Without a
# version named, such a Stage is read as Kargo v0.8 reads it (the newest
# release that runs it), and its findings say so.
legacy_dropped := [s |
	not legacy.read
	some s in legacy.written
]

# inferred_pins: Kargo v0.9 and v1.0 check every Git source of an Application
# an argocd-update step reaches against the Freight's commit of the source's
# repository, unless the first sources[] entry matching it gives a revision
# (desiredCommitFromStep) (internal/directives/argocd_revisions.go,
# getDesiredRevisions and getDesiredRevisionForSource at v1.0.0). The commit
# is the one a Warehouse found, never one the promotion pushes (the loop v1.1
# ended, akuity/kargo#2980). A source no Warehouse of the Freight subscribes
# to, or two (Kargo's "multiple requested Freight could potentially provide a
# commit"), is checked against nothing the files can tell: no pin. An entry
# with updateTargetRevision rewrites the source to that commit: no pin either.
inferred_pins := [p |
	config.kargo_infers_revisions
	some u in updates
	some t in u.targets
	pinnable(u, t)
	some src in t.app.kargo_sources
	src.repo_known
	entries := [x | some x in u.sources; x.url == src.repo_url; x.chart == src.chart]
	not gives_revision(entries)
	subscribed := [w | some w in legacy.inferred_warehouses(u, entries); legacy.provides(w, src)]
	count(subscribed) == 1
	entry_path := inferred_entry_path(u, entries)
	p := {
		"id": concat("|", [u.step.id, u.entry_path, t.app.key, sprintf("%d", [src.index]), "inferred"]),
		"stage": u.stage,
		"step": u.step,
		"app": t.app,
		"source": src,
		"pointer": pointer(src.repo_id, src.repo_known, src.rev),
		"desired": inferred_desired(src, subscribed[0]),
		"desired_class": "freight",
		"exact": t.via == "name",
		"via": t.via,
		"legacy_field": false,
		"inferred": true,
		"app_entry_path": u.entry_path,
		"entry_path": entry_path,
		"repo_url": src.repo_url,
	}
]

inferred_desired(src, w) := sprintf("the Freight's commit of %s (Warehouse %s)", [src.repo_url, w.key]) if {
	src.chart == ""
} else := sprintf("the Freight's version of chart %s of %s (Warehouse %s)", [src.chart, src.repo_url, w.key])

gives_revision(entries) if {
	count(entries) > 0
	desired(entries[0].entry) != ""
}

gives_revision(entries) if {
	count(entries) > 0
	entries[0].update_target
}

inferred_entry_path(u, entries) := sprintf("%s/sources/%d", [u.entry_path, entries[0].index]) if {
	count(entries) > 0
} else := u.entry_path

# inferred_note explains, for messages, that a pin is Kargo v0.9 and v1.0's
# inference ("" when no pin is).
inferred_note(pins) := sprintf(
	" (%s: Kargo %s checks a source no desiredCommitFromStep pins against the Freight's commit of its repository, the commit a Warehouse found; Kargo v1.1 stopped inferring it.)",
	[concat(", ", sort({p.stage.key | some p in pins; p.inferred == true})), config.kargo_text],
) if {
	some p in pins
	p.inferred == true
} else := ""
