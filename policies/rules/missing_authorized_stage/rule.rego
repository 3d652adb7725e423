# METADATA
# title: Application does not authorize the Stage
# description: |
#   An Application that a Stage's `argocd-update` step targets does not carry
#   `kargo.akuity.io/authorized-stage` naming `<project>:<stage>` (a
#   comma-separated list is allowed since Kargo v1.11; globs are rejected since
#   v0.9). The promotion fails with `Argo CD Application "<app>" in namespace
#   "<ns>" is not authorized`; with a label selector, unauthorized matches are
#   skipped and the step fails only when none of them authorizes the Stage.
#   Kargo reads that one annotation and no other key: a near miss (a plural
#   `authorized-stages`, another spelling, a label) is named in the finding. A
#   Stage whose file names no namespace has an unknown project and is not
#   judged here unless the estate gives its directory exactly one namespace
#   (`-n`, the Applications that deploy it).
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/annotations
#     description: Kargo reference, annotations (kargo.akuity.io/authorized-stage)
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (desiredRevision, updateTargetRevision)
#   - ref: https://github.com/akuity/kargo/issues/2876
#     description: akuity/kargo#2876, a promotion failing with "is not authorized"
#   - ref: https://github.com/akuity/kargo/pull/6398
#     description: akuity/kargo#6398, several Stages in one annotation (Kargo v1.11)
# custom:
#   id: missing-authorized-stage
#   severity: error
#   admission: true
#   why: |
#     Kargo updates an Application on a Stage's behalf only when the Application
#     delegates that authority with the annotation
#     `kargo.akuity.io/authorized-stage: "<project>:<stage>"`. When it is missing, or
#     names another Stage, the `argocd-update` step fails, and with it the promotion:
#
#     > `Argo CD Application "<app>" in namespace "<ns>" is not authorized`
#
#     (the controller log adds `does not permit mutation by Kargo Stage <stage> in
#     namespace <project>`). Globs such as `<project>:*` were accepted up to Kargo v0.8
#     and are rejected since v0.9 (`deprecated glob expressions are no longer supported`
#     since v1.11). With a label `selector`, Applications that do not authorize the Stage
#     are skipped, and the step fails only when none of them does:
#     `found N Application(s) matching selector in namespace "<ns>", but none are
#     authorized for Stage <project>:<stage>`.
#   remediation: |
#     Add the annotation to the Application (or to the ApplicationSet's
#     template.metadata.annotations), naming the Stage's project (its namespace) and
#     name, e.g. kargo.akuity.io/authorized-stage: "<project>:<stage>". Several Stages:
#     a comma-separated list (Kargo v1.11+). Globs such as "<project>:*" are rejected
#     since v0.9.
package lib.flipflop.rules.missing_authorized_stage

import data.lib.flipflop.apps
import data.lib.flipflop.config
import data.lib.flipflop.model
import data.lib.flipflop.result
import data.lib.flipflop.stages
import data.lib.flipflop.step_configs

report contains finding if {
	some [u, t] in model.unauthorized_names
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			"Stage %s updates Application %s, which does not authorize it: kargo.akuity.io/authorized-stage is %s. %s%s",
			[
				u.stage.key, t.app.key, annotation(t.app),
				outcome(u, sprintf("\"Argo CD Application %q in namespace %q is not authorized\"", [t.app.name, t.app.namespace])),
				stages.assumed(u.stage),
			],
		),
		result.refs([u.stage.ref, t.app.ref]),
		sprintf("%s|%s", [u.stage.key, t.app.key]),
		result.about([], [u.stage.key], [t.app.key], [], []),
		{"stage": u.stage.key, "application": t.app.key, "wants": sprintf("%s:%s", [u.stage.project, u.stage.name])},
	)
}

report contains finding if {
	some u in model.unauthorized_selectors
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("Stage %s selects %d Application(s) in namespace %q by label, but none authorizes it (kargo.akuity.io/authorized-stage must name %s:%s). %s%s%s", [
			u.stage.key, count(u.targets), u.namespace, u.stage.project, u.stage.name,
			outcome(u, sprintf("\"found %d Application(s) matching selector in namespace %q, but none are authorized for Stage %s:%s\"", [count(u.targets), u.namespace, u.stage.project, u.stage.name])),
			selected_near_misses(u.targets), stages.assumed(u.stage),
		]),
		result.refs(array.concat([u.stage.ref], [t.app.ref | some t in u.targets])),
		sprintf("%s|selector|%d", [u.stage.key, u.index]),
		result.about([], [u.stage.key], {t.app.key | some t in u.targets}, [], []),
		{"stage": u.stage.key, "applications": sort({t.app.key | some t in u.targets})},
	)
}

# outcome says how the promotion fails: with Kargo's authorization error
# (quoted), unless a step at or before this argocd-update step fails first on
# its config (Kargo validates a step's config before the step checks
# authorization, and a failed step ends the Promotion): then with that, and
# with this error only once it is fixed.
outcome(u, quoted) := sprintf("The promotion fails with %s.", [quoted]) if {
	count(failing_first(u)) == 0
} else := sprintf(
	concat(" ", [
		"On Kargo %s%s the promotion does not get that far: it fails first at %s, on its config (%s)%s.",
		"Once %s fixed, it fails here with %s.",
	]),
	[config.kargo_text, assumed_text, first.text, first.rule, later_text(rest), fixed_text(rest), quoted],
) if {
	failing := failing_first(u)
	first := failing[0]
	rest := array.slice(failing, 1, count(failing))
}

# later_text names the steps that fail after the first, each on its config:
# every one must be fixed before the authorization is checked.
later_text([]) := ""

later_text(rest) := sprintf("; after it, %s %s on %s config too (%s)", [
	concat(", ", [x.text | some x in rest]),
	plural(rest, "fails", "fail"),
	plural(rest, "its", "their"),
	concat(", ", sort({x.rule | some x in rest})),
]) if {
	count(rest) > 0
}

fixed_text([]) := "that is"

fixed_text(rest) := "those are" if count(rest) > 0

plural(xs, one, _) := one if count(xs) == 1

plural(xs, _, many) := many if count(xs) > 1

default assumed_text := " (assumed: name yours with --kargo-version)"

assumed_text := "" if config.kargo_explicit

# failing_first lists the steps of u's Stage, in promotion order, at or before
# u's step, whose config Kargo rejects (invalid-step-config, unsupported-field).
failing_first(u) := [x |
	i := [j | some j, r in stages.records; r.key == u.stage.key][0]
	here := position(u.step)
	some s in stages.all_steps(i)
	position(s) <= here
	rule := step_failure(s)
	x := {"text": sprintf("step %q (%s)", [s.alias, s.uses]), "rule": rule, "at": position(s)}
]

step_failure(s) := "unsupported-field" if {
	some x in model.unsupported
	x.step.id == s.id
} else := "invalid-step-config" if {
	some w in step_configs.invalid
	w.kind != "var"
	w.ref == s.origin.ref
	w.path == s.origin.path
}

# position orders a step in its Promotion: its index among the Stage's own
# steps, then its index in the task a task step inflates (-1 for the Stage's own).
position(s) := [to_number(regex.find_n(`[0-9]+$`, s.via, 1)[0]), s.index] if s.via != ""

else := [s.index, -1]

annotation(app) := sprintf(
	"missing: the Application has %s, which Kargo does not read (it reads kargo.akuity.io/authorized-stage, an annotation, and no other key)",
	[concat(" and ", near_misses(app))],
) if {
	not app.annotations["kargo.akuity.io/authorized-stage"]
	count(near_misses(app)) > 0
} else := "missing" if {
	not app.annotations["kargo.akuity.io/authorized-stage"]
} else := sprintf("%q, which Kargo rejects as a whole: %s", [app.annotations["kargo.akuity.io/authorized-stage"], apps.auth_error(app)]) if {
	apps.auth_error(app) != ""
} else := sprintf("%q", [concat(", ", sort(apps.auth_stages(app)))])

# selected_near_misses names, for a selector's message, the near misses of
# the Applications it selects ("" when none has one).
selected_near_misses(targets) := sprintf(" Kargo reads that annotation and no other key: %s.", [concat("; ", found)]) if {
	found := [sprintf("%s has %s", [t.app.key, concat(" and ", misses)]) |
		some t in targets
		misses := near_misses(t.app)
		count(misses) > 0
	]
	count(found) > 0
} else := ""

# near_misses lists, for people, the keys of an Application that look meant
# for Kargo's authorization but are not the annotation Kargo reads: another
# kargo.akuity.io/ annotation, an annotation naming authorization in another
# spelling or case (authorized-stages, authorised-stage), and a label of any
# such key (Kargo reads annotations only).
near_misses(app) := sort(array.concat(
	[sprintf("annotation %q: %q", [k, v]) |
		some k, v in app.annotations
		k != "kargo.akuity.io/authorized-stage"
		looks_meant(k)
	],
	[sprintf("label %q: %q", [k, v]) |
		some k, v in app.labels
		looks_meant(k)
	],
))

looks_meant(k) if startswith(lower(k), "kargo.akuity.io/")

looks_meant(k) if regex.match(`(?i)authori[sz]ed[-_]?stage`, k)
