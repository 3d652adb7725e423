package lib.flipflop.rules.foreign_branch_writer_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.foreign_branch_writer as rule

test_writer_without_pin_moves_pinned_branch if {
	estate := f.estate([
		f.app("dev", "main"), f.app("qa", "main"),
		f.stage("dev", "main", [f.no_pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	findings := rule.report with input as estate
	count(findings) == 1
	some finding in findings
	finding.details.pinningStages == ["acme/qa"]
	finding.details.writingStages == ["acme/dev"]
	[r.kind | some r in finding.resources] == ["Stage", "Stage", "Application"]
}

test_head_pinned_main_written_is_assumed if {
	estate := f.estate([
		f.app("prod", "HEAD"),
		f.stage("stage", "main", []), f.stage("prod", "main", [f.pin("prod")]),
	])
	some finding in rule.report with input as estate
	contains(finding.message, "HEAD was taken to be main")
}

test_both_pin_is_the_other_rule if {
	estate := f.estate([
		f.app("dev", "main"), f.app("qa", "main"),
		f.stage("dev", "main", [f.pin("dev")]), f.stage("qa", "main", [f.pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
}

test_writer_of_another_branch_is_fine if {
	estate := f.estate([
		f.app("qa", "env/qa"),
		f.stage("dev", "env/dev", []), f.stage("qa", "env/qa", [f.pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
}

test_writer_to_unknown_branch_proves_nothing if {
	estate := f.estate([
		f.app("qa", "main"),
		f.stage("dev", "${{ vars.nowhere }}", []), f.stage("qa", "main", [f.pin("qa")]),
	])
	count(rule.report) == 0 with input as estate
}
