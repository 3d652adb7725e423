# METADATA
# title: Waiver expired
# description: |
#   A waiver with an expiry date in the past no longer waives anything: the
#   findings it covered are reported again, and this warning says which waiver
#   lapsed so the team can fix the cause or renew the waiver on purpose.
# custom:
#   id: waiver-expired
#   severity: warning
#   why: |
#     An expiry turns an exception into a deadline. Once the date has passed, the waiver
#     waives nothing: the findings it covered are reported again and count toward the
#     exit code. This warning names the lapsed waiver (its annotation, or its entry in
#     the waivers file), so that a check that passed yesterday and fails today explains
#     itself.
#   remediation: |
#     Fix what the waived finding reports, or, if the exception still holds, renew
#     the waiver with a new expiry date and an up-to-date reason.
package lib.flipflop.meta.waiver_expired

import data.lib.flipflop.result
import data.lib.flipflop.waivers

report contains finding if {
	some w in waivers.every_waiver
	waivers.valid(w)
	waivers.expired(w)
	covered := {f.rule | some f in findings; some m in waivers.matching(f); m.source == w.source}
	count(covered) > 0
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("The %s expired on %s (today is %s); the %s finding(s) it waived are reported again. Its reason was: %s", [
			w.source, w.expires, waivers.today, concat(", ", sort(covered)), w.reason,
		]),
		[w.ref | is_string(w.ref.kind)],
		w.source,
		result.nothing,
		{"waiver": w.source, "expires": w.expires, "rules": sort(covered)},
	)
}

findings contains f if {
	some name

	# regal ignore:mixed-iteration
	some f in data.lib.flipflop.rules[name].report
}
