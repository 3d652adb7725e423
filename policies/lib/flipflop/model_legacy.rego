# The model's pins of Stages written for Kargo v0.8 and earlier
# (`promotionMechanisms`); lib.flipflop.legacy says which revision checks Kargo
# registers for them. (The package's METADATA is in model.rego.)
package lib.flipflop.model

import data.lib.flipflop.legacy

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
		"stage": u.stage,
		"step": u.step,
		"app": t.app,
		"source": c.source,
		"pointer": pointer(c.source.repo_id, c.source.repo_known, c.source.rev),
		"desired": c.desired,
		"desired_class": c.desired_class,
		"exact": t.via == "name",
		"legacy_field": true,
		"mechanisms": true,
	}
]

# legacy_note explains, for messages, that Stages written for Kargo <= 0.8 pin
# without desiredRevision ("" when no pin is such).
legacy_note(pins) := sprintf(
	" (%s: Kargo <= 0.8 promotionMechanisms, where Kargo checks the Application against the Freight's commit of its repository, the commit gitRepoUpdates pushed when the Stage pushes there.)",
	[concat(", ", sort({p.stage.key | some p in pins; p.mechanisms == true}))],
) if {
	some p in pins
	p.mechanisms == true
} else := ""
