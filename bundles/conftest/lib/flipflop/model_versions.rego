# What depends on the Kargo version the model follows (config.kargo): the
# fields a version's argocd-update schema does not have, and the legacy
# promotionMechanisms a v1 Kargo no longer reads. (The package's METADATA is
# in model.rego; docs/model.md cites Kargo's lines.)
package lib.flipflop.model

import data.lib.flipflop.config
import data.lib.flipflop.legacy
import data.lib.flipflop.stages

# config_fields lists the argocd-update fields the model reads that not every
# version has, with the first version that has each ("since") and the first
# that no longer does ("until"), [major, minor]; where: "app" (an apps[]
# entry) or "source" (an apps[].sources[] entry). From the step's JSON schema
# (argocd-update-config.json) at each tag: every object of it has
# additionalProperties: false, so Kargo rejects a config with a field the
# version does not have when a promotion runs the step.
config_fields := [
	{"where": "app", "field": "selector", "since": [1, 9], "until": null},
	{"where": "app", "field": "fromOrigin", "since": [0, 9], "until": [1, 3]},
	{"where": "source", "field": "desiredRevision", "since": [1, 1], "until": null},
	{"where": "source", "field": "desiredCommitFromStep", "since": [0, 9], "until": [1, 3]},
	{"where": "source", "field": "fromOrigin", "since": [0, 9], "until": [1, 3]},
]

# version_lacks holds for a field the version followed does not have.
version_lacks(f) if not config.kargo_at_least(f.since)

version_lacks(f) if {
	f.until != null
	config.kargo_at_least(f.until)
}

# lacking maps where a field is written ("app", "source") to the fields of
# config_fields the version followed lacks there, by name: on the newest
# Kargo, the removed ones only.
lacking := {where: {f.field: f | some f in config_fields; f.where == where; version_lacks(f)} | some where in {"app", "source"}}

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
	some s in stages.records
	count(s.legacy) > 0
]
