# The first pass of the invalid-object rule: a conservative test, in few
# evaluations, that every field the tables cover has its type. Only the objects
# it cannot clear (suspects) are walked field by field (rule.rego), so a
# well-typed object costs a handful of bulk checks instead of the whole walk.
package lib.flipflop.rules.invalid_object

import data.lib.flipflop.objects

# suspects are the indices, in objects.docs, of the objects the first pass
# cannot clear: the walk reports what is wrong in them (possibly nothing: the
# first pass is stricter than the walk, e.g. on expressions).
suspects contains i if {
	some i, o in objects.docs
	t := fast[o.ref.kind]
	not clean(o.obj, t)
}

# A step config is cleared by the tables of its step (Kargo's step config
# schemas); the walk is stricter about none of it but expressions, which it
# allows anywhere and this pass does not.
suspects contains i if {
	some i, o in objects.docs
	some steps in steps_of(o)
	some step in steps
	is_object(step.config)
	t := fast_config[step.uses]
	not clean(step.config, t)
}

suspect_docs := [objects.docs[i] | some i in suspects]

# fast is each table as the first pass reads it: the entries without a
# wildcard as one filter and the [path, type] pairs it may yield (flat), and
# the wildcard entries as the walk's trie has them.
fast := {kind: first_pass(t) | some kind, t in compiled}

fast_config := {uses: first_pass(t) | some uses, t in compiled_config}

first_pass(t) := {
	"flat": flat_check([[array.concat(parent, [key]), want] | some [parent, children] in t.flat; some key, want in children]),
	"d1": [prepared(n, 1) | some n in t.d1],
	"d2": [prepared(n, 2) | some n in t.d2],
	"d3": [prepared(n, 3) | some n in t.d3],
}

# flat_check is how the entries without a wildcard are read at once:
#   filter: the paths json.filter keeps, one per entry no other entry lies
#     under; an object or array entry ends in a key no object has, so that
#     the filter keeps the container (or whatever stands there) but none of
#     its contents;
#   allowed: the [path, type] pairs the filtered object may hold: each entry
#     with its type or null, and each path above an entry as an object.
# Every node of the filtered object is then one pair; any other pair (a wrong
# type, or a value under a field that should have none) makes a suspect.
flat_check(entries) := {
	"filter": [leaf_filter(p, want) |
		some [p, want] in entries
		not has_below(entries, p)
	],
	"allowed": ({[p, t] | some [p, want] in entries; some t in [want, "null"]} | {[array.slice(p, 0, i), "object"] |
		some [p, _] in entries
		some i in numbers.range(0, count(p) - 1)
	}),
}

has_below(entries, p) if {
	some [q, _] in entries
	count(q) > count(p)
	array.slice(q, 0, count(p)) == p
}

leaf_filter(p, want) := array.concat(p, [nothing]) if want in {"object", "array"}

else := p

# nothing is a key no manifest has.
nothing := "\u0000"

# prepared turns a trie node [c0, w0, ..., elem want, {key: want}, [[rel, want]]]
# into {"chain": [[c0, w0], ...], "elem", "check"}: check reads the fields
# below each element as flat_check reads an object (null: none are read).
prepared(n, depth) := {
	"chain": [[n[2 * j], n[(2 * j) + 1]] | some j in numbers.range(0, depth - 1)],
	"elem": n[2 * depth],
	"check": element_check(array.concat(
		[[[k], w] | some k, w in n[(2 * depth) + 1]],
		n[(2 * depth) + 2],
	)),
}

element_check(entries) := flat_check(entries) if count(entries) > 0

else := null

clean(obj, t) if {
	count({[p, type_name(v)] | walk(json.filter(obj, t.flat.filter), [p, v])} - t.flat.allowed) == 0
	every n in t.d1 {
		elems_clean(elements(obj, n.chain[0]), n)
	}
	every n in t.d2 {
		elems_clean(below(elements(obj, n.chain[0]), n.chain[1]), n)
	}
	every n in t.d3 {
		elems_clean(below(below(elements(obj, n.chain[0]), n.chain[1]), n.chain[2]), n)
	}
}

# elements are the values of the container at c in obj, when it is the
# container the wildcard w iterates ([] when it is not: the walk reads nothing
# below a container of the wrong type, whose own entry reports it).
elements(obj, [c, w]) := [e | x := object.get(obj, c, null); type_name(x) == container[w]; some e in x]

# below steps from each element to the container at c under it.
below(es, [c, w]) := [e | some x in es; is_object(x); y := object.get(x, c, null); type_name(y) == container[w]; some e in y]

# Elements that must be objects are all objects once that is checked, so
# their fields are read without testing each element again.
elems_clean(es, n) if {
	n.elem == "object"
	elements_are(es, "object")
	fields_typed(es, n.check)
}

elems_clean(es, n) if {
	n.elem != "object"
	elements_are(es, n.elem)
	fields_typed([e | some e in es; is_object(e)], n.check)
}

fields_typed(_, null)

fields_typed(es, check) if {
	check != null
	count({[p, type_name(v)] | some e in es; walk(json.filter(e, check.filter), [p, v])} - check.allowed) == 0
}

# elements_are: every element has the type want (null included: an element
# that is null is wrong), or want is "" (the node says nothing of them). The
# standard order sorts values by type first (null, boolean, number, string,
# array, object), so with a value of that type added (sentinel), the smallest
# and the largest element having it proves it of every element. The null is
# tested on its own: OPA v1.7.1 and older skip null when taking the
# min of a set (v1.0.1 and v1.7.1 measured; v1.22.4 does not), and Gatekeeper
# 3.20 ships v1.7.1.
elements_are(_, "")

elements_are(es, want) if {
	want != ""
	not null in es
	s := {e | some e in es} | {sentinel[want]}
	type_name(min(s)) == want
	type_name(max(s)) == want
}

sentinel := {"string": "", "boolean": false, "number": 0, "array": [], "object": {}}
