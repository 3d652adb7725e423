package lib.flipflop.revision_test

import data.lib.flipflop.revision

kind_of(rev) := revision.classify(rev).kind

test_default_branch if {
	kind_of("") == "default"
	kind_of("HEAD") == "default"
	kind_of(null) == "default"
}

test_branches if {
	revision.classify("main") == {"kind": "branch", "name": "main"}
	revision.classify("refs/heads/main") == {"kind": "branch", "name": "main"}
	revision.classify("env/prod") == {"kind": "branch", "name": "env/prod"}
	revision.classify("12/stage/dev") == {"kind": "branch", "name": "12/stage/dev"}
}

test_fixed if {
	revision.classify("0123456789abcdef0123456789ABCDEF01234567") == {"kind": "sha", "name": "0123456789abcdef0123456789abcdef01234567"}
	revision.classify("v1.2.3") == {"kind": "tag", "name": "v1.2.3"}
	revision.classify("refs/tags/release") == {"kind": "tag", "name": "release"}
	kind_of("1.0.0-rc1") == "tag"
	kind_of("deadbeef") == "sha"
	revision.fixed(revision.classify("v1.2.3"))
	not revision.floating(revision.classify("v1.2.3"))
}

test_semver_constraints_float if {
	every c in ["1.2.*", "1.2.x", "~1.2", "^1.2.0", ">=1.0.0", ">=1.0.0 <2.0.0", "*", "x", "1.x", "v2.x", "1.2.3 || 2.0.0"] {
		kind_of(c) == "semver"
		revision.floating(revision.classify(c))
	}
}

test_expressions_are_unknown if {
	kind_of("${{ vars.branch }}") == "unknown"
	kind_of("{{.branch}}") == "branch" # an ApplicationSet placeholder is substituted before classify
	kind_of(42) == "unknown"
	not revision.floating(revision.classify("${{ vars.branch }}"))
	not revision.fixed(revision.classify("${{ vars.branch }}"))
}

test_charts if {
	revision.for_chart(revision.classify("15.7.1")) == {"kind": "version", "name": "15.7.1"}
	revision.for_chart(revision.classify("15.*")).kind == "semver"
	revision.for_chart(revision.classify("latest")).kind == "unknown"
}

test_describe if {
	revision.describe(revision.classify("")) == "HEAD (the default branch)"
	revision.describe(revision.classify("main")) == "branch main"
}

test_branches_that_look_like_constraints_at_first if {
	revision.classify("xylophone") == {"kind": "branch", "name": "xylophone"}
	revision.classify("x") == {"kind": "semver", "name": "x"}
	revision.classify("v-next") == {"kind": "branch", "name": "v-next"}
	revision.classify("release-1.2") == {"kind": "branch", "name": "release-1.2"}
}
