# METADATA
# title: Findings
# description: |
#   The one way findings are built. A rule passes `rego.metadata.chain()` and what it
#   found; id, severity, title and remediation come from the rule's METADATA, so they
#   are never copied into rule bodies.
#
#   Severity follows certainty. A rule whose findings say what a Kargo version does
#   (a field or a step config that version rejects) names in `custom.severity_assumed`
#   the severity of its findings when they rest only on the version flipflop assumed
#   (the run named none, and no cluster said): `custom.severity` is then the severity
#   when the version is named (--kargo-version, kargoVersion, the cluster's
#   controller), and the message says the version was assumed. See docs/model.md,
#   "Severity follows certainty".
#
#   A rule whose fix depends on the cause names in `custom.remediations` the
#   remediation of each kind of finding (its `details.kind`); a finding of another
#   kind, or none, gets `custom.remediation`, which the rule's page shows.
#
#   A finding about a Stage read as another Kargo version than the one in force
#   (a Stage written with promotionMechanisms, read as Kargo v0.8 reads it when the
#   run names no version: lib.flipflop.legacy.dated) says so.
package lib.flipflop.result

import data.lib.flipflop.config
import data.lib.flipflop.legacy
import data.lib.flipflop.model

# fail builds a finding: rule metadata from chain, plus message, resources (refs,
# in the order they should be listed), a stable key naming what the finding is
# about, what it is about in the model's terms (subject, built with about), and
# details for people.
fail(chain, message, resources, key, subject, details) := object.union(
	{
		"rule": meta.custom.id,
		"severity": severity(meta),
		"title": meta.title,
		"remediation": object.get(object.get(meta.custom, "remediations", {}), object.get(details, "kind", ""), meta.custom.remediation),
		"message": worded(meta, message, subject),
		"resources": resources,
		"key": key,
		"details": details,
	},
	subject,
) if {
	meta := [entry.annotations | some entry in chain; entry.annotations.custom.id][0]
}

# rests_on_assumption holds for a rule whose findings are surer once the
# Kargo version is named (custom.severity_assumed) when the run names none.
rests_on_assumption(meta) if {
	not config.kargo_explicit
	is_string(meta.custom.severity_assumed)
}

# severity is a finding's severity: custom.severity_assumed when it rests on
# the assumed version, else the rule's own.
severity(meta) := meta.custom.severity_assumed if rests_on_assumption(meta)

else := meta.custom.severity

# said is a finding's message, saying, when the finding rests on the assumed
# version and does not say so yet, that it does and why it is no more than
# custom.severity_assumed.
said(meta, message) := concat("", [message, sprintf(
	" flipflop assumed the newest Kargo it models, so this is a %s; if you run an older one, say so with --kargo-version (then it is an %s if it holds there).",
	[meta.custom.severity_assumed, meta.custom.severity],
)]) if {
	rests_on_assumption(meta)
	not contains(message, "flipflop assumed the newest Kargo")
} else := message

# worded is a finding's message as said, with dated_note when the run read a
# Stage as another Kargo than the one in force (checked once, not per finding).
worded(meta, message, subject) := said(meta, message) if {
	not legacy.any_dated
	is_object(subject)
} else := concat("", [said(meta, message), dated_note(subject)])

# dated_note says which of the finding's Stages were read as Kargo v0.8 reads
# them, not as the version the run follows ("" for none).
dated_note(subject) := sprintf(
	concat(" ", [
		" %s %s %s written with spec.promotionMechanisms, so flipflop read %s as Kargo v0.8 does, not as Kargo %s, which it assumed for the run",
		"(from v1.0 on the API server drops the field and the Stage promotes nothing); name the Kargo version you run with --kargo-version.",
	]),
	[stage_word(dated), names(dated), verb(dated), pronoun(dated), config.kargo_text],
) if {
	dated := [k | some k in subject.stages; k in legacy.dated]
	count(dated) > 0
} else := ""

stage_word(keys) := "Stage" if count(keys) == 1

else := "Stages"

verb(keys) := "is" if count(keys) == 1

else := "are"

pronoun(keys) := "it" if count(keys) == 1

else := "them"

# about is the envelope every finding carries for tools to join on, naming
# things by their ids in the model view (lib.flipflop.view): the pointer (key,
# and its text for people) when pointers holds the model pointers of the
# finding's sources and writes (all one known pointer; [] for none), and the
# keys of the Stages and Applications and the ids of the pins and writes the
# finding is about (sets or arrays; sorted here).
about(pointers, stages, applications, pins, writes) := {
	"pointer": pointer_key(pointers),
	"pointerText": pointer_text(pointers),
	"stages": sort(stages),
	"applications": sort(applications),
	"pins": sort(pins),
	"writes": sort(writes),
}

pointer_key(pointers) := k if {
	keys := {p.key | some p in pointers; p.known}
	count(keys) == 1
	some k in keys
} else := ""

pointer_text(pointers) := model.text(pointers) if pointer_key(pointers) != ""

else := ""

# nothing is the envelope of a finding about no model fact (a malformed object, a waiver).
nothing := about([], [], [], [], [])

# refs sorts and de-duplicates refs, Stages first, then Applications, then the rest.
refs(rs) := [keyed[k] | some k in sort(object.keys(keyed))] if {
	keyed := {concat("\u0000", [ref_sort_key(x), json.marshal(x)]): x | some x in rs}
}

kind_order := {"Stage": "1", "Application": "2", "ApplicationSet": "3"}

ref_sort_key(r) := concat("\u0000", [
	object.get(kind_order, r.kind, "9"), r.kind, r.namespace, r.name,
	object.get(r, "file", ""), sprintf("%09d", [object.get(r, "line", 0)]),
])

# names renders object keys for messages: "acme/dev, acme/qa".
names(keys) := concat(", ", sort(keys))
