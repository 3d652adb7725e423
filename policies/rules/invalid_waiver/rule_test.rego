package lib.flipflop.meta.invalid_waiver_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.meta.invalid_waiver as rule

waived(value) := f.estate([object.union(f.stage("dev", "main", []), {"metadata": {"annotations": {"flipflop.dev/ignore": value}}})])

test_waiver_without_reason if {
	some finding in rule.report with input as waived("shared-write-branch")
	finding.severity == "error"
	finding.details.waiver == "annotation flipflop.dev/ignore on Stage/acme/dev"
	contains(finding.message, "waives nothing: it gives no reason")
}

test_wildcard_annotation if {
	some finding in rule.report with input as waived("*: trust me")
	contains(finding.message, `"*" is refused in an annotation`)
}

test_waiver_in_settings_without_rules if {
	some finding in rule.report with input as f.estate([f.stage("dev", "main", [])])
		with data.lib.flipflop.config.settings as {"waivers": [{"resources": ["Stage/acme/dev"], "reason": "r"}]}
	contains(finding.message, "it names no rule")
}

test_valid_waiver_is_silent if {
	count(rule.report) == 0 with input as waived("shared-write-branch: monorepo by design")
}

# An expiry that is no date that exists (month 13) is reported, and a long one
# is quoted cut to 64 characters.
test_expiry_not_a_date if {
	some finding in rule.report with input as expiring("2027-13-01")
	contains(finding.message, `its expiry "2027-13-01" is not a date (YYYY-MM-DD)`)
	long := concat("", [x | some _ in numbers.range(1, 1000); x := "x"])
	some cut in rule.report with input as expiring(long)
	contains(cut.message, sprintf(`its expiry "%s…" is not a date`, [substring(long, 0, 64)]))
}

expiring(date) := f.estate([object.union(f.stage("dev", "main", []), {"metadata": {"annotations": {
	"flipflop.dev/ignore": "shared-write-branch: x",
	"flipflop.dev/ignore-expires": date,
}}})])

test_file_waiver_without_resources if {
	some finding in rule.report with input as f.estate([f.stage("dev", "main", [])])
		with data.lib.flipflop.config.settings as {"waivers": [{"rule": "shared-write-branch", "resources": [], "reason": "r"}]}
	contains(finding.message, "it names no resources")
}

test_file_waiver_with_four_parts if {
	some finding in rule.report with input as f.estate([f.stage("dev", "main", [])])
		with data.lib.flipflop.config.settings as {"waivers": [{"rule": "shared-write-branch", "resources": ["Stage/acme/dev/x"], "reason": "r"}]}
	contains(finding.message, `resource pattern "Stage/acme/dev/x" has more than three parts`)
}
