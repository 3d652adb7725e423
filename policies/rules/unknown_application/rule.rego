# METADATA
# title: argocd-update names an Application that is not among the inputs
# description: |
#   A Stage's `argocd-update` step names an Application that none of the checked
#   manifests defines or generates. Either it lives elsewhere (another repository,
#   created by hand), or the name is wrong and the promotion will fail with
#   `unable to find Argo CD Application "<app>" in namespace "<ns>"`. Without it,
#   flipflop cannot check the Stage's pins. When an Application of that name exists
#   in another namespace, `application-in-other-namespace` reports it instead.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (desiredRevision, updateTargetRevision)
#   - ref: https://argo-cd.readthedocs.io/en/stable/operator-manual/app-any-namespace/
#     description: Argo CD, Applications in any namespace
# custom:
#   id: unknown-application
#   severity: warning
#   why: |
#     `argocd-update` looks the Application up by name in `apps[].namespace` (by
#     default the Argo CD namespace the Kargo controller is configured with, usually
#     `argocd`). When it is not there, the step fails with
#
#     > `unable to find Argo CD Application "<app>" in namespace "<ns>"`
#
#     That is the likely outcome of a typo, of a missing `namespace` for an Application
#     outside Argo CD's namespace (apps in any namespace), or of an Application that an
#     ApplicationSet no longer generates. If the Application does exist but is defined
#     elsewhere (another repository, or by hand), the promotion works, but flipflop
#     cannot see which pointer it tracks, so the Stage's pins go unchecked.
#   remediation: |
#     Check the name and namespace (apps[].namespace defaults to the Argo CD
#     namespace, usually argocd), and include the manifest that defines the
#     Application (or its ApplicationSet) in the check, or run flipflop against the
#     cluster, so that its pins can be checked too.
package lib.flipflop.rules.unknown_application

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some u in array.concat(model.updates, model.legacy_updates)
	not u.selector
	model.resolvable(u.name, u.namespace)
	count(u.targets) == 0
	count(model.namesakes(u.name, u.namespace)) == 0
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("Stage %s updates Application %s/%s, which no input defines or generates.", [u.stage.key, u.namespace, u.name]),
		result.refs([u.stage.ref]),
		sprintf("%s|%s/%s", [u.stage.key, u.namespace, u.name]),
		{"stage": u.stage.key, "application": sprintf("%s/%s", [u.namespace, u.name])},
	)
}
