package lib.flipflop.selection_test

import data.flipflop
import data.lib.flipflop.fixtures as f

# dev and qa push to main (shared-write-branch, a warning) and pin Applications
# tracking it (shared-branch-contradiction, an error).
estate := f.estate([
	f.stage("dev", "main", [f.pin("dev")]),
	f.stage("qa", "main", [f.pin("qa")]),
	f.app("dev", "main"),
	f.app("qa", "main"),
])

test_every_rule_by_default if {
	ids := f.ids(flipflop.all_findings) with input as estate
	{"shared-write-branch", "shared-branch-contradiction"} & ids == {"shared-write-branch", "shared-branch-contradiction"}
}

test_only_the_rules_named if {
	ids := f.ids(flipflop.all_findings) with input as estate
		with data.lib.flipflop.config.settings as {"rules": ["shared-write-branch"]}
	ids == {"shared-write-branch"}
}

test_skipped_rules if {
	ids := f.ids(flipflop.all_findings) with input as estate
		with data.lib.flipflop.config.settings as {"skip_rules": ["shared-write-branch"]}
	not "shared-write-branch" in ids
	"shared-branch-contradiction" in ids
}

test_skip_wins_over_rules if {
	ids := f.ids(flipflop.all_findings) with input as estate
		with data.lib.flipflop.config.settings as {"rules": ["shared-write-branch"], "skip_rules": ["shared-write-branch"]}
	ids == set()
}

test_severity_override if {
	some w in flipflop.all_findings with input as estate
		with data.lib.flipflop.config.settings as {"severity": {"shared-write-branch": "error", "shared-branch-contradiction": "bogus"}}
	w.rule == "shared-write-branch"
	w.severity == "error"
	w.ruleSeverity == "warning"
	some c in flipflop.all_findings with input as estate
		with data.lib.flipflop.config.settings as {"severity": {"shared-write-branch": "error", "shared-branch-contradiction": "bogus"}}
	c.rule == "shared-branch-contradiction"
	c.severity == "error"
	not c.ruleSeverity
}
