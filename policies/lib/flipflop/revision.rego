# METADATA
# title: Revision classes
# description: |
#   How Argo CD resolves a `targetRevision` (argocd.md §1.2, §4): empty and `HEAD`
#   are the default branch, `refs/heads/x` is branch `x`, a 40-hex SHA and tags are
#   fixed, semver constraints float across tags (Git) or chart versions (Helm).
#   Pure functions; a value holding an expression that could not be substituted is
#   `unknown` and never matches anything.
package lib.flipflop.revision

import data.lib.flipflop.expr

# classify returns {"kind": k, "name": n} for a Git targetRevision, where k is one
# of "default" (HEAD / empty), "branch", "tag", "sha", "semver" or "unknown"; see
# for_chart for Helm repository charts.
classify(rev) := {"kind": "unknown", "name": rev} if {
	is_string(rev)
	not expr.known(rev)
} else := {"kind": "unknown", "name": ""} if {
	not is_string(rev)
	rev != null
} else := c if {
	r := trim_space(object_string(rev))
	c := classify_known(r)
}

object_string(null) := ""

object_string(s) := s if is_string(s)

classify_known(r) := {"kind": "default", "name": "HEAD"} if {
	r in {"", "HEAD"}
} else := {"kind": "branch", "name": substring(r, 11, -1)} if {
	startswith(r, "refs/heads/")
} else := {"kind": "tag", "name": substring(r, 10, -1)} if {
	startswith(r, "refs/tags/")
} else := {"kind": "sha", "name": lower(r)} if {
	regex.match(`^[0-9a-fA-F]{40}$`, r)
} else := {"kind": "branch", "name": r} if {
	# the common case first: a plain branch name (no version or constraint shape)
	not regex.match(`^[\s*xX~^<>=!v0-9]`, r)
	not regex.match(`^[0-9a-fA-F]{7,39}$`, r)
} else := {"kind": "semver", "name": r} if {
	is_constraint(r)
} else := {"kind": "tag", "name": r} if {
	is_version(r)
} else := {"kind": "sha", "name": lower(r)} if {
	regex.match(`^[0-9a-fA-F]{7,39}$`, r)
} else := {"kind": "branch", "name": r}

# An exact version (v1.2.3, 1.2, v1, 1.0.0-rc1): a tag for Git, a fixed chart version for Helm.
is_version(r) if regex.match(`^v?[0-9]+(\.[0-9]+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`, r)

# A semver constraint: ranges, wildcards, operators.
is_constraint(r) if regex.match(`^\s*((\*|[xX])(\s|\.|$)|[~^<>=!]|v?[0-9]+(\.[0-9]+)?\.[*xX]|v?[0-9]+\.[*xX])`, r)

is_constraint(r) if contains(r, "||")

is_constraint(r) if regex.match(`^v?[0-9]+(\.[0-9]+){0,2}\s+-\s+v?[0-9]`, r)

# floating reports whether a classified revision follows a moving pointer
# (true or false, never undefined).
floating(c) := c.kind in {"default", "branch", "semver"}

# fixed reports whether a classified revision names one commit or one version.
fixed(c) := c.kind in {"sha", "tag", "version"}

# for_chart adjusts a Git classification for a Helm repository chart source:
# an exact version is fixed, a constraint floats, anything else is unknown.
for_chart(c) := c if c.kind in {"semver", "unknown"}

for_chart(c) := {"kind": "version", "name": c.name} if c.kind == "tag"

for_chart(c) := {"kind": "unknown", "name": c.name} if not c.kind in {"semver", "unknown", "tag"}

# describe renders a classified revision for messages.
describe(c) := "HEAD (the default branch)" if c.kind == "default"

describe(c) := sprintf("branch %s", [c.name]) if c.kind == "branch"

describe(c) := sprintf("tag %s", [c.name]) if c.kind == "tag"

describe(c) := sprintf("commit %s", [c.name]) if c.kind == "sha"

describe(c) := sprintf("semver range %s", [c.name]) if c.kind == "semver"

describe(c) := sprintf("version %s", [c.name]) if c.kind == "version"

describe(c) := sprintf("unknown revision %q", [c.name]) if c.kind == "unknown"
