# METADATA
# title: argocd-update looks for an Application in the wrong namespace
# description: |
#   A Stage's `argocd-update` step (or legacy `argoCDAppUpdates`) names an
#   Application that no input defines in the namespace it looks in, but an
#   Application of that name exists in another namespace. Kargo looks the
#   Application up only in `apps[].namespace` (by default the Argo CD namespace its
#   controller is configured with, usually `argocd`), so unless another Application
#   of that name exists there too, the promotion fails with `unable to find Argo CD
#   Application "<app>" in namespace "<ns>"`, and flipflop cannot check the Stage's
#   pins on the Application it probably meant.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (apps[].name, apps[].namespace)
#   - ref: https://argo-cd.readthedocs.io/en/stable/operator-manual/app-any-namespace/
#     description: Argo CD, Applications in any namespace
# custom:
#   id: application-in-other-namespace
#   severity: warning
#   why: |
#     `argocd-update` finds an Application by name in one namespace:
#     `apps[].namespace`, or, when that is omitted, the namespace the Kargo
#     controller is configured with (`ARGOCD_NAMESPACE`, usually `argocd`). With
#     Argo CD's "applications in any namespace", Applications often live in a team's
#     namespace, and a Stage that omits `namespace` (or names the wrong one) fails
#     every promotion with
#
#     > `unable to find Argo CD Application "<app>" in namespace "<ns>"`
#
#     The Application it probably meant exists, in another namespace, so this is
#     usually a missing or wrong `apps[].namespace`. (flipflop's own
#     `--argocd-namespace` says where Applications live when a manifest omits the
#     namespace; set it if your Kargo controller uses another default.)
#   remediation: |
#     Set apps[].namespace (or appNamespace in legacy argoCDAppUpdates) to the
#     namespace the Application lives in, or, if the Kargo controller's Argo CD
#     namespace differs from argocd, run flipflop with --argocd-namespace so that it
#     looks where Kargo looks.
package lib.flipflop.rules.application_in_other_namespace

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some u in array.concat(model.updates, model.legacy_updates)
	not u.selector
	model.resolvable(u.name, u.namespace)
	count(u.targets) == 0
	namesakes := model.namesakes(u.name, u.namespace)
	count(namesakes) > 0
	elsewhere := {a.key | some a in namesakes}
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			"Stage %s updates Application %s/%s, which no input defines in namespace %q; %s exists in namespace %s. Kargo looks only in %q: the promotion fails unless apps[].namespace is corrected.",
			[u.stage.key, u.namespace, u.name, u.namespace, result.names(elsewhere), result.names({a.namespace | some a in namesakes}), u.namespace],
		),
		result.refs(array.concat([u.stage.ref], [a.ref | some a in namesakes])),
		sprintf("%s|%s/%s", [u.stage.key, u.namespace, u.name]),
		{"stage": u.stage.key, "application": sprintf("%s/%s", [u.namespace, u.name]), "elsewhere": sort(elsewhere)},
	)
}
