package lib.flipflop.rules.shared_application_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.shared_application as rule

both(name) := object.union(f.app(name, "env/x"), {"metadata": {"annotations": {"kargo.akuity.io/authorized-stage": "acme:dev,acme:qa"}}})

test_two_stages_pin_one_application if {
	estate := f.estate([both("shared"), f.stage("dev", "env/x", [f.pin("shared")]), f.stage("qa", "env/x", [f.pin("shared")])])
	findings := rule.report with input as estate
	count(findings) == 1
	some finding in findings
	finding.key == "argocd/shared"
	finding.details.stages == ["acme/dev", "acme/qa"]
}

test_one_pinning_stage_is_fine if {
	estate := f.estate([both("shared"), f.stage("dev", "env/x", [f.pin("shared")]), f.stage("qa", "env/x", [f.no_pin("shared")])])
	count(rule.report) == 0 with input as estate
}

test_one_stage_pinning_twice_is_not_this_rule if {
	estate := f.estate([both("shared"), f.stage("dev", "env/x", [f.pin("shared"), f.pin("shared")])])
	count(rule.report) == 0 with input as estate
}
