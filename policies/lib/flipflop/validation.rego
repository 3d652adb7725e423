# METADATA
# title: Validation
# description: |
#   Objects and step configs validated against the schemas their projects
#   publish (lib.flipflop.schemas, generated from the releases as released):
#   each object the model reads against its kind's CRD (what the API server
#   enforces), each promotion step's config against Kargo's schema for that
#   step in the release followed (what Kargo enforces when a Promotion runs
#   the step). Every keyword of those schemas counts, at any depth. The
#   validator is OPA's own (json.match_schema, in every host), given all the
#   objects of a kind, or all the configs of a step, at once: one compilation
#   of each schema a query. OPA before v1.17 ignores `pattern`, so patterns are
#   tested here, on the strings each host reports (see internal/schemagen).
package lib.flipflop.validation

# problems validates docs against a generated schema s ({"schema" (its JSON
# text), "patterns", "refs"}), whose $refs name the definitions defs holds,
# and returns [index in docs, problem] pairs, in the order of docs and,
# within one, of the objects the problems are about (a missing or unknown
# key's object, before anything else said of that object), then of their
# paths. The validator's errors come in no set order; a host that ignores
# patterns reports every string a pattern constrains, and only those that do
# not match are problems.
problems(docs, s, defs) := [[i, p] |
	some [i, _, _, p] in sort({[i, order(p), p.path, p] |
		some c in numbers.range_step(0, count(docs) - 1, chunk)
		[_, errs] := json.match_schema({"o": array.slice(docs, c, c + chunk)}, bulk(s, defs))
		some e in errs
		parts := split(e.field, ".")
		i := c + to_number(parts[1])
		p := problem(docs[i], located(docs[i], array.slice(parts, 2, count(parts))), e, s.patterns)
	})
]

# chunk is how many documents one call validates: the validator converts a
# call's documents twice (to Go values, to JSON and back), and 250 at a
# time keep those copies small beside the model's own, for a compilation of
# the schema per 250 (peak memory on the 10k estate 1.04x -> 1.005x of main
# 5f4005e side by side, CPU 0.78x either way).
chunk := 250

# bulk is the schema of {"o": docs} whose docs each meet s: a chunk of them
# validated at once, with one compilation of the schema. The schemas and
# their definitions are JSON text (internal/schemagen), and so is bulk.
bulk(s, defs) := concat("", [
	`{"type":"object","required":["o"],"properties":{"o":{"type":"array","items":`, s.schema,
	`}},"definitions":{`, concat(",", [concat("", [`"`, r, `":`, defs[r]]) | some r in s.refs]), `}}`,
])

# order places a problem at the object it is about, an unknown and then a
# missing key's before anything else said of that object.
order(p) := [array.slice(p.path, 0, count(p.path) - 1), rank] if {
	some rank, kind in ["unknown", "missing"]
	p.problem == kind
} else := [p.path, 2]

# problem reads the validator's error e about doc, at path at in doc.
problem(doc, at, e, pats) := {"path": array.concat(at, [k]), "problem": "missing", "want": "present", "got": "missing"} if {
	e.type == "required"
	k := trim_suffix(e.desc, " is required")
} else := {"path": array.concat(at, [k]), "problem": "unknown", "want": "", "got": ""} if {
	e.type == "additional_property_not_allowed"
	k := trim_suffix(trim_prefix(e.desc, "Additional property "), " is not allowed")
} else := {"path": at, "problem": "type", "want": want, "got": type_name(object.get(doc, at, null))} if {
	e.type == "invalid_type"
	want := concat(" or ", [t |
		some t in split(trim(regex.replace(e.desc, `^Invalid type. Expected: (.*), given: .*$`, "$1"), "[]"), ",")
		t != "null"
	])
} else := {"path": at, "problem": "pattern", "want": site.pattern, "got": ""} if {
	e.type in {"pattern", "number_not"}
	v := object.get(doc, at, null)
	is_string(v)
	some site in patterns_at(pats, at)
	not regex.match(site.pattern, v)
} else := {"path": at, "problem": e.type, "want": lower_first(relative(e.desc, at)), "got": ""} if {
	not e.type in {"pattern", "number_not"}
}

# relative is the validator's description with the field it names (an enum's,
# a const's) as findings name it, below the document (the validator names
# it below the bulk form's {"o": [...]}; the document itself, o.<i>, stays).
relative(desc, at) := regex.replace(desc, `^o\.[0-9]+\.[^ ]* `, concat("", [dotted(at), " "]))

# patterns_at is a schema's pattern sites whose path fits the concrete path at.
patterns_at(pats, at) := [site |
	some site in pats
	count(site.path) == count(at)
	every j, seg in site.path {
		seg in {at[j], wildcard(at[j])}
	}
]

# wildcard is how a site names any index ("[]") or any key of a map ("*").
wildcard(k) := "[]" if is_number(k)

else := "*"

# located turns the validator's dotted keys into the path they name in doc:
# a key that is a number is an index where doc has an array; keys that hold
# dots themselves (annotations) are found by walking doc.
located(doc, keys) := p if {
	p := [key(k) | some k in keys]
	object.get(doc, p, absent) != absent
} else := p if {
	dotted := concat(".", keys)
	p := [q |
		walk(doc, [q, _])
		concat(".", [format(x) | some x in q]) == dotted
	][0]
} else := keys

key(k) := to_number(k) if regex.match(`^(0|[1-9][0-9]*)$`, k)

else := k

format(x) := sprintf("%d", [x]) if is_number(x)

else := x

absent := "\u0000absent"

lower_first(s) := concat("", [lower(substring(s, 0, 1)), substring(s, 1, -1)])

# dotted is a path as findings name a field: keys joined by dots, indices in
# brackets (spec.sources[0].repoURL).
dotted(path) := concat("", [segment(j, x) | some j, x in path])

segment(j, x) := sprintf("[%d]", [x]) if is_number(x)

else := x if j == 0

else := concat("", [".", x])

# text says what problem p says of field, missing and unknown keys in the
# caller's words ({"missing": ..., "unknown": ...}).
text(field, p, words) := sprintf("%s %s", [field, words[p.problem]]) if {
	p.problem in {"missing", "unknown"}
} else := sprintf("%s is %s, want %s", [field, article(p.got), p.want]) if {
	p.problem == "type"
} else := sprintf("%s does not match %s", [field, p.want]) if {
	p.problem == "pattern"
} else := sprintf("%s: %s", [object.get({"": "the object"}, field, field), p.want])

# article is a JSON type's name with its article (an object, a string).
article(t) := sprintf("an %s", [t]) if substring(t, 0, 1) in {"a", "e", "i", "o", "u"}

else := sprintf("a %s", [t])

# pointer is a path as a JSON pointer (RFC 6901).
pointer(path) := concat("", [concat("", ["/", replace(replace(format(x), "~", "~0"), "/", "~1")]) | some x in path])
