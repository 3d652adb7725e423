# METADATA
# title: A promotion step whose config Kargo rejects
# description: |
#   A promotion step's config has a key Kargo's schema for that step does not
#   allow (`messageFromSteps` on `git-commit`, removed in v1.5; a typo), or lacks
#   one it requires (`git-push` without `path`). Kargo checks a step's config
#   against the step's JSON schema only when a Promotion runs the step, so the
#   Stage is accepted and then fails every promotion at that step.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps
#     description: Kargo reference, the promotion steps and their configs
# custom:
#   id: invalid-step-config
#   severity: warning
#   why: |
#     The Stage CRD keeps a step's `config` as written
#     (`x-kubernetes-preserve-unknown-fields`), so `kubectl apply` and Argo CD accept a
#     Stage whatever its steps say. Kargo validates the config when a Promotion reaches the
#     step, against the step's schema of the Kargo release that runs it, and fails the step
#     on a key the schema does not allow (every object of most schemas has
#     `additionalProperties: false`) or a required key that is missing. The Promotion fails,
#     the steps after it never run, and the Stage's health becomes Unknown: its
#     `argocd-update` checks are never registered.
#
#     flipflop checks the keys against Kargo's own schemas (generated from the Kargo module
#     it models, at the top level of each config and one level down); the types of the
#     fields it reads are `invalid-object`'s. Steps Kargo does not ship (a platform's custom
#     steps) and Kargo versions other than the one the schemas come from are not judged.
#   remediation: |
#     Write the step as the reference of the Kargo release you run documents it: add the
#     required key, or rename or drop the one it does not have (git-commit's
#     messageFromSteps, removed in v1.5, is written as a message expression since). If
#     flipflop assumed the wrong version, pass --kargo-version.
package lib.flipflop.rules.invalid_step_config

import data.lib.flipflop.config
import data.lib.flipflop.result
import data.lib.flipflop.step_configs

report contains finding if {
	some w in step_configs.invalid
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"%s %s step %q (%s) does not meet Kargo %s's %s schema: %s.",
				"Kargo validates a step's config when a Promotion runs it, so every promotion %s fails at this step.",
			]),
			[owner(w), w.uses, w.alias, w.path, config.kargo_text, w.uses, concat("; ", [text(p) | some p in w.problems]), who(w)],
		),
		result.refs([w.ref]),
		sprintf("%s|%s|%s", [w.ref.kind, key(w), w.path]),
		result.about([], stages_of(w), [], [], []),
		{"step": w.alias, "uses": w.uses, "path": w.path, "problems": w.problems, "kargoVersion": config.kargo_text},
	)
}

owner(w) := sprintf("Stage %s's", [w.stage]) if w.stage != ""

else := sprintf("%s %s's", [w.ref.kind, w.task])

who(w) := "of the Stage" if w.stage != ""

else := "of every Stage that runs the task"

key(w) := w.stage if w.stage != ""

else := w.task

stages_of(w) := [w.stage] if w.stage != ""

else := []

text(p) := sprintf("%s is required", [p.field]) if p.problem == "missing"

else := sprintf("%s is not a key it allows", [p.field])
