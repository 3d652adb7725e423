# METADATA
# title: Waiver without a reason or a rule
# description: |
#   A waiver must name the rule it waives and say why: a
#   `flipflop.dev/ignore` annotation reads `"<rule>[,<rule>]: <reason>"`, and a
#   waivers-file entry has `rule`, `resources` and `reason` (and optionally
#   `expires: YYYY-MM-DD`). A waiver that lacks any of them, whose expiry is not
#   a date, or an annotation that names rules with `*` (or another glob), waives
#   nothing, so the findings it was meant for are still reported.
# custom:
#   id: invalid-waiver
#   severity: error
#   why: |
#     A waiver is an accountable decision to live with a finding: which rule, which
#     objects, why, and until when. One that lacks its rule or its reason, or whose
#     expiry (`flipflop.dev/ignore-expires`, `expires`) is not a `YYYY-MM-DD` date,
#     waives nothing, so the finding it was meant for still fails the check. This rule
#     says which waiver is broken, because a malformed waiver usually means someone
#     believes a finding is accepted when it is not. An annotation may not use `*`:
#     it sits on one object, often written by the change being checked, and would
#     otherwise waive whatever that object is ever involved in.
#   remediation: |
#     Write the waiver in full: on the object,
#     flipflop.dev/ignore: "shared-write-branch: one branch per monorepo, by design"
#     (and flipflop.dev/ignore-expires: "2027-06-30" to make it temporary), naming
#     each rule (no "*"); in a
#     waivers file, an entry with rule, resources (Kind/namespace/name globs),
#     reason and optionally expires.
package lib.flipflop.meta.invalid_waiver

import data.lib.flipflop.result
import data.lib.flipflop.waivers

report contains finding if {
	some w in waivers.every_waiver
	not waivers.valid(w)
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("The %s waives nothing: %s.", [w.source, problem(w)]),
		refs(w),
		w.source,
		result.nothing,
		{"waiver": w.source},
	)
}

problem(w) := w.invalid if is_string(w.invalid)

problem(w) := "it names no rule" if {
	not w.invalid
	count(w.rules) == 0
}

problem(w) := "it gives no reason" if {
	not w.invalid
	count(w.rules) > 0
	w.reason == ""
}

problem(w) := sprintf("its expiry %q is not a date (YYYY-MM-DD)", [cut(w.expires)]) if {
	not w.invalid
	count(w.rules) > 0
	w.reason != ""
	not waivers.well_formed_expiry(w.expires)
}

refs(w) := [w.ref | is_string(w.ref.kind)]

# cut quotes at most the first 64 characters of a value the input decides.
cut(s) := s if count(s) <= 64

cut(s) := concat("", [substring(s, 0, 64), "…"]) if count(s) > 64
