# METADATA
# title: argocd-update selects no Application
# description: |
#   A Stage's `argocd-update` step selects Applications by label, and no
#   Application among the inputs in the namespace it looks in carries those labels.
#   Unless matching Applications are defined elsewhere, the promotion fails with
#   `no Argo CD Applications found matching selector in namespace "<ns>"`. When
#   Applications that match live in another namespace, the finding names them. A
#   selector with no criterion at all is rejected before anything is listed.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (apps[].selector, apps[].namespace)
#   - ref: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
#     description: Kubernetes, label selectors
# custom:
#   id: unmatched-application-selector
#   severity: warning
#   why: |
#     Since Kargo v1.9, an `apps[]` entry of `argocd-update` may select Applications
#     with `selector` (`matchLabels`, `matchExpressions`) instead of naming one. Kargo
#     lists the Applications in `apps[].namespace` (by default its Argo CD namespace,
#     usually `argocd`) that match, keeps those that authorize the Stage, and updates
#     them. When none matches, the step fails:
#
#     > `no Argo CD Applications found matching selector in namespace "<ns>"`
#
#     A label typo, a label the ApplicationSet template never renders, or a missing
#     `apps[].namespace` for Applications outside Argo CD's namespace all end this way.
#     A selector with neither `matchLabels` nor `matchExpressions` entries does not
#     select every Application: Kargo's step schema rejects it, and so does its code
#     (`selector must have at least one match criterion`).
#     The selector is checked against the Applications flipflop reads: one whose
#     labels it cannot know (an ApplicationSet generator it cannot expand) silences
#     this warning.
#   remediation: |
#     Make the selector match the labels the Applications carry (check the
#     ApplicationSet template's metadata.labels), set apps[].namespace to where they
#     live, or include the manifests that define them in the check.
package lib.flipflop.rules.unmatched_application_selector

import data.lib.flipflop.apps
import data.lib.flipflop.expr
import data.lib.flipflop.model
import data.lib.flipflop.objects
import data.lib.flipflop.result

report contains finding if {
	some u in model.updates
	u.selector
	count(u.targets) == 0
	expr.known(u.namespace)
	not model.empty_selector(u.entry.selector)
	sel := model.selector(u.step.env, u.entry.selector)
	known_selector(sel)
	not uncertain(u.namespace)
	elsewhere := [a | some a in apps.selected_anywhere(sel); a.namespace != u.namespace]
	finding := result.fail(
		rego.metadata.chain(),
		message(u, sel, elsewhere),
		result.refs(array.concat([u.stage.ref], [a.ref | some a in elsewhere])),
		sprintf("%s|selector|%d", [u.stage.key, u.index]),
		result.about([], [u.stage.key], {a.key | some a in elsewhere}, [], []),
		{
			"stage": u.stage.key,
			"namespace": u.namespace,
			"selector": describe(sel),
			"elsewhere": sort({a.key | some a in elsewhere}),
		},
	)
}

# A selector with no criterion: Kargo rejects the step's config (its schema
# requires matchLabels or matchExpressions with an entry; the code, "selector
# must have at least one match criterion"), and every promotion fails.
report contains finding if {
	some u in model.empty_selectors
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"Stage %s's argocd-update has a selector with no matchLabels and no matchExpressions:",
				"Kargo rejects it (\"selector must have at least one match criterion\"; the step's schema requires one),",
				"so every promotion fails instead of updating every Application in namespace %q.",
			]),
			[u.stage.key, u.namespace],
		),
		result.refs([u.stage.ref]),
		sprintf("%s|selector|%d", [u.stage.key, u.index]),
		result.about([], [u.stage.key], [], [], []),
		{"stage": u.stage.key, "namespace": u.namespace, "selector": "", "elsewhere": []},
	)
}

message(u, sel, elsewhere) := sprintf(
	concat(" ", [
		"Stage %s's argocd-update selects Applications in namespace %q by %s, and no input defines one there that matches:",
		"the promotion fails (\"no Argo CD Applications found matching selector\").%s",
	]),
	[u.stage.key, u.namespace, describe(sel), elsewhere_sentence(elsewhere)],
)

known_selector(sel) if {
	every k, v in sel.matchLabels {
		expr.known(k)
		expr.known(v)
	}
	every e in sel.matchExpressions {
		expr.known(object.get(e, "key", null))
		every v in objects.array_at(e, ["values"]) {
			expr.known(v)
		}
	}
}

# uncertain: some Application in ns has labels the model cannot know.
uncertain(ns) if {
	some a in object.get(apps.by_namespace, ns, [])
	not a.metadata_known
}

uncertain(ns) if {
	some a in object.get(apps.by_namespace, ns, [])
	some v in a.labels
	not expr.known(v)
}

describe(sel) := concat(", ", array.concat(
	[sprintf("%s=%s", [k, v]) | some k, v in sel.matchLabels],
	[sprintf("%s %s (%s)", [object.get(e, "key", ""), object.get(e, "operator", ""), concat(", ", [sprintf("%v", [v]) | some v in objects.array_at(e, ["values"])])]) |
		some e in sel.matchExpressions
	],
))

elsewhere_sentence(elsewhere) := "" if {
	count(elsewhere) == 0
} else := sprintf(" Applications that match live in another namespace: %s; set apps[].namespace if they are the ones meant.", [
	result.names({a.key | some a in elsewhere}),
])
