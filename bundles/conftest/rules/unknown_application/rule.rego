# METADATA
# title: argocd-update names an Application that is not among the inputs
# description: |
#   A Stage's `argocd-update` step names an Application that none of the checked
#   manifests defines or generates. Either it lives elsewhere (another repository,
#   created by hand), or the name is wrong and the promotion will fail with
#   `unable to find Argo CD Application "<app>" in namespace "<ns>"`. Without it,
#   flipflop cannot check the Stage's pins.
# custom:
#   id: unknown-application
#   severity: warning
#   remediation: |
#     Check the name and namespace (apps[].namespace defaults to the Argo CD
#     namespace, usually argocd), and include the manifest that defines the
#     Application (or its ApplicationSet) in the check, or run flipflop against the
#     cluster, so that its pins can be checked too.
package lib.flipflop.rules.unknown_application

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some u in model.updates
	not u.selector
	model.resolvable(u.name, u.namespace)
	count(u.targets) == 0
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("Stage %s updates Application %s/%s, which no input defines or generates.", [u.stage.key, u.namespace, u.name]),
		result.refs([u.stage.ref]),
		sprintf("%s|%s/%s", [u.stage.key, u.namespace, u.name]),
		{"stage": u.stage.key, "application": sprintf("%s/%s", [u.namespace, u.name])},
	)
}
