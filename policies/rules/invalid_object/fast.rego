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
#   pattern: a regular expression the filtered object, marshalled, matches
#     exactly when each of its nodes is allowed: each entry with its type or
#     null, each path above an entry as an object; list: the same for a JSON
#     array of such objects (the elements of a container, each filtered).
# json.marshal sorts keys as the pattern lists them, so reading an object is
# one filter, one marshal and one match, however many fields it has; a wrong
# type, or a value under a field that should have none, does not match and
# makes a suspect.
flat_check(entries) := {
	"filter": [leaf_filter(p, want) |
		some [p, want] in entries
		not has_below(entries, p)
	],
	"pattern": concat("", ["^", body, "$"]),
	"list": concat("", ["^\\[(?:", body, ",?)*\\]$"]),
} if {
	body := object_pattern(entries)
}

# object_pattern is the pattern of an object holding the entries: each node
# below the root (every entry and every path above one) is an optional
# `"key":value` in key order, its value the node's children in braces, or the
# entry's type, or null. Rego has no recursion, so the nodes are written in
# order (sort puts a path before the paths below it, and keys in the order
# json.marshal writes them) and each node is closed after its last descendant.
object_pattern(entries) := concat("", array.concat(
	["\\{"],
	array.concat(
		[part |
			some i, p in nodes
			next := next_depth(nodes, i)
			some part in array.concat([open_node(p, wants, nodes)], [close_node(array.slice(p, 0, n), wants, nodes) |
				count(p) >= next
				some n in numbers.range(count(p), next)
			])
		],
		["\\}"],
	),
)) if {
	wants := {p: want | some [p, want] in entries}
	nodes := sort({array.slice(p, 0, n) | some [p, _] in entries; some n in numbers.range(1, count(p))})
}

# next_depth is the depth of the node after nodes[i] (1 after the last): the
# nodes from nodes[i] up to that depth close before it.
next_depth(nodes, i) := count(nodes[i + 1]) if i + 1 < count(nodes)

else := 1

open_node(p, wants, nodes) := sprintf(`(?:"%s":(?:\{`, [regex_quote(p[count(p) - 1])]) if {
	parent(p, nodes)
} else := sprintf(`(?:"%s":(?:%s|null`, [regex_quote(p[count(p) - 1]), leaf_pattern[wants[p]]])

close_node(p, wants, nodes) := concat("", [`\}`, null_pattern(p, wants), "),?)?"]) if {
	parent(p, nodes)
} else := "),?)?"

null_pattern(p, wants) := "|null" if wants[p]

else := ""

parent(p, nodes) if {
	some q in nodes
	count(q) == count(p) + 1
	array.slice(q, 0, count(p)) == p
}

# leaf_pattern is how json.marshal writes a value of each type, as the filter
# leaves it (a container with none of its contents).
leaf_pattern := {
	"string": `"(?:[^"\\]|\\.)*"`,
	"boolean": "(?:true|false)",
	"object": `\{\}`,
	"array": `\[\]`,
}

regex_quote(s) := regex.replace(s, `[.*+?()|\[\]{}^$\\-]`, `\$0`)

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
	regex.match(t.flat.pattern, json.marshal(json.filter(obj, t.flat.filter)))
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
elements(obj, [c, "[]"]) := x if {
	x := object.get(obj, c, null)
	is_array(x)
} else := []

elements(obj, [c, "*"]) := [e | x := object.get(obj, c, null); is_object(x); some e in x]

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
	regex.match(check.list, json.marshal([json.filter(e, check.filter) | some e in es]))
}

# elements_are: every element has the type want (null included: an element
# that is null is wrong), or want is "" (the node says nothing of them). The
# standard order sorts values by type first (null, boolean, number, string,
# array, object), so with a value of that type added (sentinel), the smallest
# and the largest element having it proves it of every element (min and max
# take the list as it is: no set is built). The null is
# tested on its own: OPA v1.7.1 and older skip null when taking the
# min of a set (v1.0.1 and v1.7.1 measured; v1.22.4 does not), and Gatekeeper
# 3.20 ships v1.7.1.
elements_are(_, "")

elements_are(es, want) if {
	want != ""
	not null in es
	s := array.concat(es, [sentinel[want]])
	type_name(min(s)) == want
	type_name(max(s)) == want
}

sentinel := {"string": "", "boolean": false, "number": 0, "array": [], "object": {}}
