package lib.flipflop.rules.confusable_branch_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.confusable_branch as rule

messages(objs) := {fi.message |
	# regal ignore:with-outside-test-context
	some fi in rule.report with input as f.estate(objs)
}

test_zero_width_space if {
	ms := messages([f.app("dev", "main\u200b"), f.stage("qa", "main", [])])
	ms == {`Branch "main<zero-width space>" of github.com/acme/deploy looks like "main" but is another branch to Git: it holds an invisible character. Did you mean "main"?`}
}

test_cyrillic_letter if {
	ms := messages([f.app("dev", "m\u0430in"), f.app("qa", "main")])
	ms == {`Branch "m<look-alike of a>in" of github.com/acme/deploy looks like "main" but is another branch to Git: it holds a look-alike character. Did you mean "main"?`}
}

test_bidi_and_look_alike if {
	ms := messages([f.stage("dev", "ma\u0456n\u202e", []), f.app("qa", "main")])
	some m in ms
	contains(m, "it holds invisible and look-alike characters")
}

test_different_branches_are_fine if {
	count(rule.report) == 0 with input as f.estate([f.app("dev", "env/dev"), f.app("qa", "env/qa"), f.stage("dev", "main", [])])
}

test_alone_it_is_just_a_name if {
	count(rule.report) == 0 with input as f.estate([f.app("dev", "main\u200b")])
}

test_skeleton if {
	rule.skeleton("m\u0430i\u200bn") == "main"
	rule.skeleton("release-１.２") == "release-1.2"
	not rule.odd("env/prod")
}
