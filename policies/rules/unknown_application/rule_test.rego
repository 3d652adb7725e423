package lib.flipflop.rules.unknown_application_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.unknown_application as rule

test_missing_application if {
	estate := f.estate([f.stage("dev", "main", [f.no_pin("nowhere")])])
	some finding in rule.report with input as estate
	finding.details.application == "argocd/nowhere"
	finding.severity == "warning"
}

test_present_application if {
	estate := f.estate([f.app("dev", "main"), f.stage("dev", "main", [f.no_pin("dev")])])
	count(rule.report) == 0 with input as estate
}

test_other_namespace_is_another_rule if {
	# application-in-other-namespace reports an Application that exists elsewhere.
	entry := {"name": "dev", "namespace": "team-a"}
	estate := f.estate([f.app("dev", "main"), f.stage("dev", "main", [entry])])
	count(rule.report) == 0 with input as estate
}

test_other_namespace_without_namesake_is_missing if {
	entry := {"name": "qa", "namespace": "team-a"}
	estate := f.estate([f.app("dev", "main"), f.stage("dev", "main", [entry])])
	count(rule.report) == 1 with input as estate
}

test_legacy_update_is_checked if {
	stage := {
		"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
		"metadata": {"name": "dev", "namespace": "acme"},
		"spec": {"promotionMechanisms": {"argoCDAppUpdates": [{"appName": "nowhere", "appNamespace": "argocd"}]}},
	}
	some finding in rule.report with input as f.estate([f.app("dev", "main"), stage])
	finding.details.application == "argocd/nowhere"
}

test_unknown_name_is_not_reported if {
	estate := f.estate([f.stage("dev", "main", [f.no_pin("${{ outputs.x.name }}")])])
	count(rule.report) == 0 with input as estate
}
