# METADATA
# title: conftest entrypoint
# description: |
#   `conftest test --combine -p <bundle> DIR` (package main hands on this
#   package's deny and warn; `--namespace flipflop` reads them here): input is
#   conftest's combined array `[{path, contents}]`. Settings come from
#   `data.flipflop_settings` (`--data` a file holding `flipflop_settings: {default_branch: ...}`).
#   The Go evaluator queries `findings` of this same package with the same input
#   shape, so both hosts report the same findings.
package flipflop

import data.lib.flipflop.selection
import data.lib.flipflop.view
import data.lib.flipflop.waivers

# findings is every rule's report, evaluated with the settings given as data.
findings := fs if {
	# regal ignore:with-outside-test-context
	fs := all_findings with data.lib.flipflop.config.settings as configured
}

# all_findings: the findings of the rules the settings select (all by
# default), waivers applied (waived ones are kept, marked), plus the findings
# about the waivers themselves, each at the severity the settings give its
# rule (lib.flipflop.selection).
all_findings := selection.apply(waivers.apply(rule_findings) | meta_findings)

# analysis is every finding with the model view, for the Go evaluator's
# explain, graph, fix and diagnose (detailed_analysis: with the detailed view).
# It is one rule so that one reference evaluates the model once for both: OPA
# evaluates each reference of a query expression under a `with` in a scope of
# its own, so a query naming the findings and the view beside each other
# computed the model twice.
analysis := {"findings": all_findings, "model": view.estate}

detailed_analysis := {"findings": all_findings, "model": view.detailed}

# digest_analysis is analysis for a digest of the findings (check -o
# markdown, --summary): the detailed view, which fix plans the ways out with,
# only when some finding is an error (a digest offers ways out for errors
# only); else the plain view, which draws the pictures. A clean estate, the
# common case in CI, then costs what analysis costs.
digest_analysis := {"findings": all_findings, "model": view.detailed, "detailed": true} if {
	some f in all_findings
	f.severity == "error"
} else := {"findings": all_findings, "model": view.estate, "detailed": false}

# rule_findings are the findings of every rule, or, when the settings limit
# the run to some rules, of those only (the others are not evaluated).
# invalid-object's come first: its validation converts every object (to Go
# values, through JSON and back) while the model holds little yet, so those
# copies and the model's values are never live at once (peak memory on the
# 10k estate 1.14x -> 1.04x of what it was before the validation, issue 43).
rule_findings contains f if {
	count(selection.packages) == 0
	some f in data.lib.flipflop.rules.invalid_object.report
}

rule_findings contains f if {
	count(selection.packages) == 0
	some name

	# regal ignore:mixed-iteration
	some f in data.lib.flipflop.rules[name].report
}

rule_findings contains f if {
	some name in selection.packages
	some f in data.lib.flipflop.rules[name].report
}

meta_findings contains f if {
	some name

	# regal ignore:mixed-iteration
	some f in data.lib.flipflop.meta[name].report
}

default configured := {}

configured := s if {
	s := data.flipflop_settings
	is_object(s)
}

deny contains result(f) if {
	some f in findings
	f.severity == "error"
	not f.waived
}

warn contains result(f) if {
	some f in findings
	f.severity != "error"
	not f.waived
}

# Without --combine, conftest evaluates each document on its own: input is that
# document instead of the [{path, contents}] array, no two objects are ever seen
# together, and every contradiction would pass. Say so instead.
warn contains {
	"msg": concat(" ", [
		"[not-combined] flipflop needs every document at once: run conftest with --combine",
		"(conftest test --combine -p <policy> <dir>).",
		"Checked one document at a time, no finding can be made.",
	]),
	"rule": "not-combined",
	"severity": "warning",
} if {
	not is_array(input)
}

# result is a finding as conftest shows it: msg and _loc, the rest as metadata.
result(f) := object.union(
	{
		"msg": sprintf("[%s] %s", [f.rule, f.message]),
		"rule": f.rule,
		"severity": f.severity,
		"title": f.title,
		"remediation": f.remediation,
		"resources": f.resources,
	},
	location(f),
)

# location is where conftest points the result: the first resource whose line
# the input gave (flipflop's Go evaluator does), else the first resource's file
# at line 1 -- conftest passes policies no line numbers (its --combine input is
# [{path, contents}]), and line 1 is its own convention for "this file".
location(f) := {"_loc": {"file": r.file, "line": r.line}} if {
	r := [x | some x in f.resources; x.file != ""; x.line > 0][0]
} else := {"_loc": {"file": r.file, "line": 1}} if {
	r := [x | some x in f.resources; x.file != ""][0]
} else := {}
