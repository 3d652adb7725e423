# The model's pins of Stages written for Kargo v0.8 and earlier
# (`promotionMechanisms`); lib.flipflop.legacy says which revision checks Kargo
# registers for them. (The package's METADATA is in model.rego.)
package lib.flipflop.model

import data.lib.flipflop.legacy
import data.lib.flipflop.stages

# legacy_updates lists the argoCDAppUpdates entries of legacy Stages like
# updates (they name Applications, never select them).
legacy_updates := [object.union(u, {"selector": false, "targets": targets(u.stage, u.step.env, {}, u.name, u.namespace)}) |
	some u in legacy.updates
]

# legacy_pins: Kargo v0.x checks an Application an argoCDAppUpdates entry names
# against the Freight's commit of its repository (see lib.flipflop.legacy).
legacy_pins := [p |
	some u in legacy_updates
	some t in u.targets
	some c in legacy.checks(u, t.app)
	p := {
		"id": concat("|", [u.step.id, t.app.key, sprintf("%d", [c.source.index])]),
		"stage": u.stage,
		"step": u.step,
		"app": t.app,
		"source": c.source,
		"pointer": pointer(c.source.repo_id, c.source.repo_known, c.source.rev),
		"desired": c.desired,
		"desired_class": c.desired_class,
		"exact": t.via == "name",
		"via": t.via,
		"legacy_field": true,
		"app_entry_path": u.entry_path,
		"entry_path": u.entry_path,
		"repo_url": c.source.repo_url,
		"mechanisms": true,
	}
]

# pin_notes explains, for messages, what a group of pins rests on beyond the
# argocd-update steps as written: Kargo <= 0.8 mechanisms, rewrites of
# targetRevision an ApplicationSet undoes, and Stages whose project is unknown
# because their directory is given several namespaces.
pin_notes(pins) := concat("", [legacy_note(pins), inferred_note(pins), reverted_note(pins), stages.unknown_note([p.stage | some p in pins])])

# reverted_note: updateTargetRevision rewrote a generated Application's
# targetRevision, and its ApplicationSet writes the template back.
reverted_note(pins) := sprintf(
	concat(" ", [
		" (%s: updateTargetRevision sets targetRevision to the pinned commit, but ApplicationSet %s writes its template back over that change",
		"(policy sync, Argo CD's default; assumed, since the controller's --policy flag can override it), so the Application tracks the template's branch again.)",
	]),
	[
		concat(", ", sort({p.app.key | some p in pins; p.reverted == true})),
		concat(", ", sort({sprintf("%s/%s", [p.app.generator.appset.namespace, p.app.generator.appset.name]) | some p in pins; p.reverted == true})),
	],
) if {
	some p in pins
	p.reverted == true
} else := ""

# legacy_note explains, for messages, that Stages written for Kargo <= 0.8 pin
# without desiredRevision ("" when no pin is such).
legacy_note(pins) := sprintf(
	" (%s: Kargo <= 0.8 promotionMechanisms, where Kargo checks the Application against the Freight's commit of its repository, the commit gitRepoUpdates pushed when the Stage pushes there.)",
	[concat(", ", sort({p.stage.key | some p in pins; p.mechanisms == true}))],
) if {
	some p in pins
	p.mechanisms == true
} else := ""
