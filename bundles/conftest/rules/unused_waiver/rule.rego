# METADATA
# title: Waiver that waives nothing
# description: |
#   A waiver (a `flipflop.dev/ignore` annotation, or an entry of a waivers file)
#   that no finding of the rules it names matches: the finding it was written for
#   has been fixed, or the waiver names the wrong rule or resources (a typo in a
#   glob, a Stage that was renamed). Each rule the waiver names that matches no
#   finding is listed. A waiver naming only rules the run leaves out (`--skip-rule`,
#   `skipRules`) is not reported, and neither is an annotation on an Application an
#   ApplicationSet generates (each generated Application carries the template's
#   annotation, whether or not a finding names it).
# custom:
#   id: unused-waiver
#   severity: warning
#   why: |
#     A waiver that matches nothing is either stale or mistaken. Stale, it lies in wait:
#     the day the same rule fires again on those resources, for another reason, the old
#     waiver hides it without anyone deciding to. Mistaken, it is worse: the team
#     believes a finding is accepted while it is not (or, with a too-narrow glob, that a
#     whole project is covered when only one Stage is). Either way it should be fixed or
#     removed. A waiver is matched by the findings of the inputs read: a waivers file
#     shared by several teams, checked one team's directory at a time, lists the other
#     teams' waivers as unused.
#   remediation: |
#     Remove the waiver (or the rule it names that no longer fires) when the finding is
#     fixed; otherwise correct its rule id or its resources globs
#     (Kind/namespace/name; "*" is every resource, "Stage/acme" every Stage of project
#     acme) so that it names the finding. When checking part of an estate against a
#     shared waivers file, lower this rule (--severity unused-waiver=info) or skip it.
package lib.flipflop.meta.unused_waiver

import data.lib.flipflop.result
import data.lib.flipflop.selection
import data.lib.flipflop.waivers

report contains finding if {
	some w in waivers.every_waiver
	waivers.valid(w)
	not w.contested
	not w.generated
	unmatched := sort([r | some r in w.rules; asked(r); not used(w.source, r)])
	count(unmatched) > 0
	finding := result.fail(
		rego.metadata.chain(),
		message(w, unmatched),
		[w.ref | is_string(w.ref.kind)],
		w.source,
		result.nothing,
		{"waiver": w.source, "rules": unmatched},
	)
}

# asked holds for a rule the run reports ("*": any).
asked("*")

asked(r) if {
	r != "*"
	selection.runs(r)
}

# used holds when a finding of rule r ("*": any rule) matches the waiver of
# source s.
used(s, "*") if {
	some pair in matched
	pair[0] == s
}

used(s, r) if [s, r] in matched

# matched are the [waiver source, rule] pairs of the findings of every rule
# and the waivers that match them (whether or not they waive them).
matched contains [m.source, f.rule] if {
	some f in findings
	some m in waivers.matching(f)
}

message(w, unmatched) := sprintf(
	"The %s names %s, but no finding of %s %s: it waives nothing. Remove it if the finding was fixed, or correct its rule or resources.",
	[w.source, concat(", ", unmatched), plural(unmatched), names(w)],
)

plural(rules) := "that rule" if count(rules) == 1

plural(rules) := "those rules" if count(rules) > 1

# names says what a waiver's findings would have to name: its object, or a
# resource its globs match.
names(w) := sprintf("names %s", [w.resources[0]]) if {
	not w.patterns
} else := sprintf("names a resource matching %s", [concat(", ", [sprintf("%q", [r]) | some r in w.resources])])

findings contains f if {
	some name

	# regal ignore:mixed-iteration
	some f in data.lib.flipflop.rules[name].report
}
