# METADATA
# title: Rule selection
# description: |
#   Which rules a run reports and at which severity, from the settings every host
#   may give: `rules` (the ids of the rules to run; empty or absent: every rule),
#   `skip_rules` (ids of rules not to run, over `rules`) and `severity` (an object
#   of rule id to `error`, `warning` or `info`: the severity that rule's findings
#   are reported at instead of its own). A finding whose severity was changed keeps
#   its rule's own in `ruleSeverity`, so every report can say so.
#
#   Selection applies to the findings about the estate and about the waivers alike.
#   A waiver that names only rules the run leaves out is not reported as unused
#   (lib.flipflop.meta.unused_waiver): those rules were not asked.
#   Ids the bundle does not define select nothing: the Go host refuses them before
#   evaluating, and Gatekeeper's constraint schema lists the ids it accepts.
package lib.flipflop.selection

import data.lib.flipflop.config

# only is the set of rule ids the run is limited to (empty: every rule).
only := {r | some r in ids_of("rules")}

# skipped is the set of rule ids the run leaves out.
skipped := {r | some r in ids_of("skip_rules")}

ids_of(key) := [r | some r in v; is_string(r)] if {
	v := object.get(config.settings, key, [])
	is_array(v)
} else := []

levels := {"error", "warning", "info"}

# severity maps a rule id to the severity the settings give its findings.
severity := {id: level |
	s := object.get(config.settings, "severity", {})
	is_object(s)
	some id, level in s
	level in levels
}

# runs holds for a rule id the run reports.
runs(id) if {
	count(only) == 0
	not id in skipped
}

runs(id) if {
	id in only
	not id in skipped
}

# packages names the Rego packages of the rules the run is limited to, when it
# is: a rule's package is its id with "_" for "-" (the rule folders' names), so
# a host evaluates only those rules instead of filtering the findings of all.
packages := {replace(id, "-", "_") | some id in only}

# apply keeps the findings of the rules the run reports, each at the severity
# the settings give its rule.
apply(findings) := {adjust(f) | some f in findings; runs(f.rule)}

adjust(f) := object.union(f, {"severity": s, "ruleSeverity": f.severity}) if {
	s := severity[f.rule]
	s != f.severity
} else := f
