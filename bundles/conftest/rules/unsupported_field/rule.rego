# METADATA
# title: A field the Kargo version in use does not have
# description: |
#   A Stage uses a field that the Kargo version flipflop assumes (`--kargo-version`,
#   default the newest it models) does not have: `desiredCommitFromStep` or
#   `fromOrigin` in an `argocd-update` step (removed in v1.3.0), a `selector`
#   before v1.9 or a `desiredRevision` before v1.1, or `spec.promotionMechanisms`
#   on a Kargo from v1.0 on. Kargo checks a step's config against the step's
#   schema only when a Promotion runs it, so such a Stage is accepted and then
#   fails every promotion at that step; a Stage CRD without `promotionMechanisms`
#   drops the field, and the Stage promotes nothing.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step and its config
#   - ref: https://github.com/akuity/kargo/releases/tag/v1.3.0
#     description: Kargo v1.3.0, which removed desiredCommitFromStep and fromOrigin
# custom:
#   id: unsupported-field
#   severity: error
#   severity_assumed: warning
#   why: |
#     Every object of the `argocd-update` step's config schema (`argocd-update-config.json`)
#     has `additionalProperties: false`. When a Promotion reaches the step, Kargo validates
#     the config against the schema of its own version and fails the step on a field the
#     schema does not list: a terminal error, so the Promotion fails, the Stage's health
#     becomes Unknown, and none of the step's revision checks is ever registered. The step
#     stays in the Stage because the Stage CRD keeps step configs as written
#     (`x-kubernetes-preserve-unknown-fields`): nothing rejects it until it runs.
#
#     `desiredCommitFromStep` (v0.9 to v1.2) was replaced by `desiredRevision` (v1.1 on);
#     `fromOrigin` went with it in v1.3.0; `selector` came in v1.9. A Stage written with
#     `spec.promotionMechanisms` (Kargo v0.8 and earlier) loses the field on a v1 Kargo,
#     whose Stage CRD no longer has it.
#
#     flipflop reads the fields as the version in force does: it treats the Stage's pins as
#     never checked. Named with `--kargo-version` (or `kargoVersion`, or read from the
#     cluster's controller), the version makes the failure certain: an error. When the run
#     names none, the finding rests on the newest version flipflop models, which it assumed:
#     a warning that says so.
#   remediation: |
#     Write the step for the Kargo version you run: replace
#     `desiredCommitFromStep: <alias>` with `desiredRevision: ${{ outputs.<alias>.commit }}`,
#     drop `fromOrigin` (origins are inferred since v1.3), name Applications instead of
#     selecting them before v1.9, and move `promotionMechanisms` to
#     `promotionTemplate.spec.steps`. If flipflop assumed the wrong version, pass
#     --kargo-version (or kargoVersion in .flipflop.yaml).
package lib.flipflop.rules.unsupported_field

import data.lib.flipflop.config
import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some x in model.unsupported
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"Stage %s's argocd-update step %q sets %s, which Kargo %s does not have (%s).",
				"Kargo rejects the step's config when a Promotion runs it, so every promotion of the Stage fails at this step",
				"and its revision checks are never registered.",
			]),
			[x.stage.key, x.step.alias, field_text(x), config.kargo_text, config.history(x.field)],
		),
		result.refs([x.stage.ref, x.step.origin.ref]),
		sprintf("%s|%s|%s", [x.stage.key, x.step.id, x.path]),
		result.about([], [x.stage.key], [], [], []),
		{"stage": x.stage.key, "step": x.step.alias, "field": x.field.field, "path": x.path, "kargoVersion": config.kargo_text},
	)
}

report contains finding if {
	some s in model.legacy_dropped
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"Stage %s is written with spec.promotionMechanisms, which Kargo removed in v1.0.0: on Kargo %s the Stage CRD",
				"no longer has the field, the API server drops it, and the Stage promotes nothing.",
			]),
			[s.key, config.kargo_text],
		),
		result.refs([s.ref]),
		sprintf("%s|/spec/promotionMechanisms", [s.key]),
		result.about([], [s.key], [], [], []),
		{"stage": s.key, "field": "promotionMechanisms", "path": "/spec/promotionMechanisms", "kargoVersion": config.kargo_text},
	)
}

field_text(x) := sprintf("%s (at %s)", [x.field.field, x.path])
