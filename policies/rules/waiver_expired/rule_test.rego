package lib.flipflop.meta.waiver_expired_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.meta.waiver_expired as rule

# Two Stages push to main (shared-write-branch); dev waives it until expires.
estate(expires) := f.estate([
	object.union(f.stage("dev", "main", []), {"metadata": {"annotations": {
		"flipflop.dev/ignore": "shared-write-branch: until the render pipeline lands",
		"flipflop.dev/ignore-expires": expires,
	}}}),
	f.stage("qa", "main", []),
])

test_lapsed_waiver_is_reported if {
	some finding in rule.report with input as estate("2026-01-31")
		with data.lib.flipflop.config.settings as {"today": "2026-06-01"}
	finding.severity == "warning"
	finding.details == {"waiver": "annotation flipflop.dev/ignore on Stage/acme/dev", "expires": "2026-01-31", "rules": ["shared-write-branch"]}
	finding.resources[0].name == "dev"
	contains(finding.message, "expired on 2026-01-31 (today is 2026-06-01)")
}

test_current_waiver_is_not_reported if {
	count(rule.report) == 0 with input as estate("2026-12-31")
		with data.lib.flipflop.config.settings as {"today": "2026-06-01"}
}

# A lapsed waiver of a rule that no longer fires brings nothing back: silent.
test_lapsed_waiver_of_nothing_is_silent if {
	one_stage := [e | some e in estate("2026-01-31"); e.contents.metadata.name == "dev"]
	count(rule.report) == 0 with input as one_stage
		with data.lib.flipflop.config.settings as {"today": "2026-06-01"}
}
