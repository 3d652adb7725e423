package lib.flipflop.meta.unused_waiver_test

import data.flipflop
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.meta.unused_waiver as rule

annotated(name, value) := object.union(f.stage(name, "main", []), {"metadata": {"annotations": {"flipflop.dev/ignore": value}}})

# dev alone pushes to main: its waiver of shared-write-branch waives nothing.
test_stale_annotation if {
	some finding in rule.report with input as f.estate([annotated("dev", "shared-write-branch: qa pushes too")])
	finding.severity == "warning"
	finding.details == {"waiver": "annotation flipflop.dev/ignore on Stage/acme/dev", "rules": ["shared-write-branch"]}
	contains(finding.message, "names shared-write-branch, but no finding of that rule names Stage/acme/dev")
	finding.resources[0].name == "dev"
}

# dev and qa both push to main: the waiver matches the finding.
test_used_annotation_is_silent if {
	count(rule.report) == 0 with input as f.estate([annotated("dev", "shared-write-branch: by design"), f.stage("qa", "main", [])])
}

# One of two rules named is stale: only that one is listed.
test_partly_stale_annotation if {
	some finding in rule.report with input as f.estate([
		annotated("dev", "shared-write-branch, unknown-promotion-task: by design"),
		f.stage("qa", "main", []),
	])
	finding.details.rules == ["unknown-promotion-task"]
}

# A waiver of a rule the run leaves out was not asked about.
test_skipped_rule_is_not_reported if {
	count(rule.report) == 0 with input as f.estate([annotated("dev", "shared-write-branch: qa pushes too")])
		with data.lib.flipflop.config.settings as {"skip_rules": ["shared-write-branch"]}
	count(rule.report) == 0 with input as f.estate([annotated("dev", "shared-write-branch: qa pushes too")])
		with data.lib.flipflop.config.settings as {"rules": ["shared-branch-contradiction"]}
}

# File waivers: a glob that matches no resource of the finding, and "*",
# which (like "Stage" and "Stage/acme") covers what it leaves out.
file_waiver(resources) := {"waivers": [{"rule": "shared-write-branch", "resources": resources, "reason": "r", "origin": {"kind": "Waiver", "name": "shared-write-branch"}}]}

two_pushers := f.estate([f.stage("dev", "main", []), f.stage("qa", "main", [])])

test_file_waiver_with_wrong_glob if {
	some finding in rule.report with input as two_pushers with data.lib.flipflop.config.settings as file_waiver(["Stage/acme-prod/*"])
	contains(finding.message, `no finding of that rule names a resource matching "Stage/acme-prod/*"`)
	finding.details.waiver == "waiver 1 (shared-write-branch)"
}

test_short_globs_cover_the_rest if {
	every resources in [["*"], ["Stage"], ["Stage/acme"], ["*/acme/*"], ["**"]] {
		count(rule.report) == 0 with input as two_pushers with data.lib.flipflop.config.settings as file_waiver(resources)
		by := {w.waived.by | some w in flipflop.all_findings; w.rule == "shared-write-branch"} with input as two_pushers
			with data.lib.flipflop.config.settings as file_waiver(resources)
		by == {"waiver 1 (shared-write-branch)"}
	}
}

test_wildcard_rule_unused if {
	settings := {"waivers": [{"rule": "*", "resources": ["Application/*/*"], "reason": "r"}]}
	some finding in rule.report with input as two_pushers with data.lib.flipflop.config.settings as settings
	finding.details.rules == ["*"]
}

test_invalid_waiver_is_left_to_invalid_waiver if {
	settings := {"waivers": [{"rule": "shared-write-branch", "resources": ["Stage/acme/dev"]}]}
	count(rule.report) == 0 with input as f.estate([f.stage("dev", "main", [])]) with data.lib.flipflop.config.settings as settings
}
