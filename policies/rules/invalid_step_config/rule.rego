# METADATA
# title: A promotion step whose config Kargo rejects
# description: |
#   A promotion step's config does not meet Kargo's schema for that step: a key
#   it does not allow (`messageFromSteps` on `git-commit`, removed in v1.5; a
#   typo), one it requires missing (`git-push` without `path`), a value of the
#   wrong type, or one its enum, pattern, bounds or `oneOf` reject
#   (`kustomize-set-image` images without `tag` or `digest`), at any depth; or a
#   step holds an expression
#   Kargo's expression language cannot parse (`${{ outputs.push.commit` never
#   closed, a quote or a bracket left open). Kargo checks a step's config
#   against the step's JSON schema, and compiles its expressions, only when a
#   Promotion runs the step, so the Stage is accepted and then fails every
#   promotion at that step.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps
#     description: Kargo reference, the promotion steps and their configs
# custom:
#   id: invalid-step-config
#   severity: error
#   severity_assumed: warning
#   why: |
#     The Stage CRD keeps a step's `config` as written
#     (`x-kubernetes-preserve-unknown-fields`), so `kubectl apply` and Argo CD accept a
#     Stage whatever its steps say. Kargo validates the config when a Promotion reaches the
#     step, against the step's schema of the Kargo release that runs it, and fails the step
#     on any value the schema rejects: a key it does not allow (every object of most
#     schemas has `additionalProperties: false`), a required key that is missing, a
#     wrong type, an enum, pattern, bound or `oneOf`/`anyOf` it does not meet. The Promotion fails,
#     the steps after it never run, and the Stage's health becomes Unknown: its
#     `argocd-update` checks are never registered.
#
#     flipflop validates each config against Kargo's own schemas (generated from each Kargo
#     release it models), every keyword at any depth. A value holding an expression is what
#     Kargo evaluates first, so only a missing key or a key the schema does not allow is
#     judged there. Each Kargo minor release from v0.9 on is judged by its own schemas, those
#     of its newest patch release. Steps Kargo does not ship (a platform's custom steps) and
#     releases before v0.9 are not judged.
#
#     Expressions (Kargo v1.1 and later; `${% ... %}` from v1.9) are read in every step's
#     config values, `if:` condition and vars, and in the vars of every Stage and task, as
#     Kargo finds them: each from its opening
#     delimiter to the first closing one after it. Without a parser, flipflop reports only
#     what certainly fails to compile: an expression never closed, an empty one, a string
#     literal that never ends, brackets that do not pair up, an operator at either end with
#     nothing on that side (`1 +`, `== x`). Other syntax errors, and expressions with
#     comments, are not judged.
#
#     A `git-wait-for-pr` or `git-merge-pr` step that takes the pull request's number from an
#     output its `git-open-pr` step does not have in the Kargo release followed (`prNumber`,
#     removed in v1.7.0; `pr.id`, from v1.5.0) gets a null number, which the step's schema
#     rejects (an integer of at least 1).
#
#     Named with `--kargo-version` (or `kargoVersion`, or read from the cluster's
#     controller), the version makes the failure certain: an error. When the run names
#     none, the finding rests on the newest version flipflop models, which it assumed: a
#     warning that says so.
#   remediation: |
#     Write the step as the reference of the Kargo release you run documents it: add the
#     required key, give the value the type and form the schema wants, or rename or drop
#     the one it does not have (git-commit's
#     messageFromSteps, removed in v1.5, is written as a message expression since). Close
#     the expression, the string or the bracket the finding names. Read the pull request's
#     number from the output git-open-pr has in your release: `pr.id` from v1.5 on,
#     `prNumber` before v1.7. If flipflop assumed the wrong version, pass --kargo-version.
#   remediations:
#     schema: |
#       Write the step as the reference of the Kargo release you run documents it: add
#       the required key, or rename or drop the one it does not have (git-commit's
#       messageFromSteps, removed in v1.5, is written as a message expression since).
#       If flipflop assumed the wrong version, pass --kargo-version.
#     expression: |
#       Close the expression, the string or the bracket the finding names: every
#       `${{` needs its `}}` (and `${%` its `%}`), every quote and bracket its pair, every
#       operator an operand on both sides.
#     output: |
#       Read the pull request's number from the output git-open-pr has in your release:
#       `pr.id` from v1.5 on, `prNumber` before v1.7
#       (`${{ outputs['<open-pr step>'].pr.id }}`). If flipflop assumed the wrong version,
#       pass --kargo-version.
#     var: |
#       Close the expression, the string or the bracket the finding names in the var's
#       value: every `${{` needs its `}}` (and `${%` its `%}`), every quote and bracket its
#       pair, every operator an operand on both sides.
package lib.flipflop.rules.invalid_step_config

import data.lib.flipflop.config
import data.lib.flipflop.result
import data.lib.flipflop.step_configs
import data.lib.flipflop.validation

report contains finding if {
	some w in step_configs.invalid
	some m in said(w, config.kargo_text)
	finding := result.fail(
		rego.metadata.chain(),
		m.message,
		result.refs([w.ref]),
		concat("|", array.concat([w.ref.kind, key(w), w.path], m.key)),
		result.about([], stages_of(w), [], [], []),
		object.union(subject(w), {"path": w.path, "problems": m.problems, "kargoVersion": config.kargo_text, "kind": w.kind}),
	)
}

# said is what the findings about invalid step or var w say, Kargo version
# being the one followed: each one's message, the problems it lists and what
# its key adds (an output's finding is one per output read).
said(w, version) := [{"key": [], "problems": w.problems, "message": sprintf(
	concat(" ", [
		"%s %s step %q (%s) does not meet %s: %s.",
		"Kargo validates a step's config when a Promotion runs it, so every promotion %s fails at this step.",
	]),
	[owner(w), w.uses, w.alias, w.path, schema_name(w.uses), concat("; ", [validation.text(p.field, p, {"missing": "is required", "unknown": "is not a key it allows"}) | some p in w.problems]), who(w)],
)}] if {
	w.kind == "schema"
} else := [{"key": ["expression"], "problems": w.problems, "message": sprintf(
	concat(" ", [
		"%s %s step %q (%s) holds an expression Kargo %s cannot parse: %s.",
		"Kargo compiles a step's expressions when a Promotion runs it, so every promotion %s fails at this step.",
	]),
	[owner(w), w.uses, w.alias, w.path, version, concat("; ", [expression_text(p) | some p in w.problems]), who(w)],
)}] if {
	w.kind == "expression"
} else := [{"key": ["output", p.output], "problems": [p], "message": sprintf(
	concat(" ", [
		"%s %s step %q (%s) takes the pull request's number from %s of git-open-pr step %q, an output Kargo %s does not have (%s; read %s).",
		"The number is then null, which the step's schema rejects, so every promotion %s fails at this step.",
	]),
	[owner(w), w.uses, w.alias, w.path, p.output, p.alias, version, config.history(p), p.instead, who(w)],
)} |
	some p in w.problems
] if {
	w.kind == "output"
} else := [{"key": ["var"], "problems": w.problems, "message": sprintf(
	"%s var %q (%s) holds an expression Kargo %s cannot parse: %s. %s",
	[owner(w), w.alias, w.path, version, concat("; ", [expression_text(p) | some p in w.problems]), var_effect(w)],
)}]

# subject names the step (or the var) a finding is about.
subject(w) := {"var": w.alias} if w.kind == "var"

else := {"step": w.alias, "uses": w.uses}

# var_effect says which promotions a var that cannot be parsed fails.
var_effect(w) := "Kargo evaluates a Promotion's vars whenever a step reads its vars, so every promotion of the Stage fails at its first step." if {
	w.stage != ""
} else := sprintf(
	"Kargo gives a task's vars to each of its steps, so every promotion of every Stage that runs the task and does not set var %q itself fails at the task's first step.",
	[w.alias],
)

expression_text(p) := sprintf("in %s, an expression is opened and never closed", [p.field]) if p.reason == "unclosed"

else := sprintf("in %s, the expression is empty", [p.field]) if p.reason == "empty"

else := sprintf("in %s, a string literal of %q never ends", [p.field, shown(p.expression)]) if p.reason == "unterminated-literal"

else := sprintf("in %s, an operator of %q has no operand on one side", [p.field, shown(p.expression)]) if p.reason == "dangling-operator"

else := sprintf("in %s, the brackets of %q do not pair up", [p.field, shown(p.expression)])

# shown is an expression as a message quotes it: trimmed, and cut at 80
# characters.
shown(e) := t if {
	t := trim_space(e)
	count(t) <= 80
} else := concat("", [substring(trim_space(e), 0, 80), "..."])

owner(w) := sprintf("Stage %s's", [w.stage]) if w.stage != ""

else := sprintf("%s %s's", [w.ref.kind, w.task])

who(w) := "of the Stage" if w.stage != ""

else := "of every Stage that runs the task"

# key is the key of the Stage or the task (one of the two is empty).
key(w) := concat("", [w.stage, w.task])

stages_of(w) := [w.stage | w.stage != ""]

# schema_name names the schema a step is judged by: the version followed's,
# or, when the run names another patch release, its minor release's as the
# table has it.
schema_name(uses) := schema_of(uses, config.kargo_text, step_configs.release)

schema_of(uses, version, release) := sprintf("Kargo %s's %s schema", [version, uses]) if {
	release == version
} else := sprintf("Kargo %s's %s schema (as %s ships it; flipflop reads each minor release's schemas from one patch release)", [version, uses, release])
