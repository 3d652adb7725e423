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
# wildcard as one filter and the pattern its result must match (flat), and
# the wildcard entries as a tree of containers (nodes), each container with
# the containers below its elements.
fast := {kind: first_pass(t) | some kind, t in compiled}

fast_config := {uses: first_pass(t) | some uses, t in compiled_config}

first_pass(t) := {
	"flat": flat_check(entries),
	"nodes": [node1(n, t, entries) | some n in t.d1],
} if {
	entries := [[array.concat(parent, [key]), want] | some [parent, children] in t.flat; some key, want in children]
}

# A node is a trie node [c0, w0, ..., element want, {key: want}, [[rel, want]]]
# (fields.rego) of depth d, as the first pass reads it:
#   at: the last link [c, w] of its chain: where its container lies below each
#     element of its parent (below the object itself at depth 1);
#   elem: the type its elements must have ("": any);
#   check: how the fields below each element are read, as flat_check reads an
#     object (null: none are read);
#   mark: the text the parent's filtered JSON holds when some parent holds the
#     container, as json.marshal writes the container the filter kept without
#     its contents ("", which every text contains, when that is not known: the
#     container is then always read);
#   children: the nodes one wildcard deeper whose chain starts with its own.
node1(n, t, parent_entries) := node(n, 1, parent_entries, [node2(m, t, node_entries(n, 1)) |
	some m in t.d2
	array.slice(m, 0, 2) == array.slice(n, 0, 2)
])

node2(n, t, parent_entries) := node(n, 2, parent_entries, [node(m, 3, node_entries(n, 2), []) |
	some m in t.d3
	array.slice(m, 0, 4) == array.slice(n, 0, 4)
])

node(n, d, parent_entries, children) := {
	"at": [c, w],
	"elem": n[2 * d],
	"check": element_check(node_entries(n, d)),
	"mark": mark(c, w, parent_entries),
	"children": children,
} if {
	c := n[2 * (d - 1)]
	w := n[(2 * d) - 1]
}

# node_entries are the entries below each element of node n of depth d, as
# paths relative to the element.
node_entries(n, d) := array.concat(
	[[[k], w] | some k, w in n[(2 * d) + 1]],
	n[(2 * d) + 2],
)

# mark is the text of the container at c in its parent's filtered JSON when
# the parent's entries list it as a leaf of the container's type (the filter
# then keeps it empty: "key":[] or "key":{}); "" otherwise.
mark(c, w, parent_entries) := concat("", [json.marshal(c[count(c) - 1]), ":", empty[w]]) if {
	[c, container[w]] in parent_entries
	not has_below(parent_entries, c)
} else := ""

empty := {"[]": "[]", "*": "{}"}

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

element_check(entries) := flat_check(entries) if count(entries) > 0

else := null

# clean: the object's flat fields match their pattern, and every container
# node below it is clean. Rego has no recursion: the three depths of nodes
# are read by a function each (the third has no children).
clean(obj, t) if {
	text := json.marshal(json.filter(obj, t.flat.filter))
	regex.match(t.flat.pattern, text)
	every n in t.nodes {
		node_clean(obj, text, n)
	}
}

# node_clean: the container of node n in obj holds elements of the node's
# type with well-typed fields, and so on below (node2_clean, node3_clean: the
# containers of a node below the parents, the elements of the node above).
# When the parents' filtered JSON (text) shows that none of them holds the
# container (no mark), nothing is read: the filter kept every container the
# tables list, as its type without its contents.
node_clean(obj, text, n) if {
	none_held(text, n)
} else if {
	es := own_elements(obj, n.at)
	elements_are(es, n.elem)
	objs := objects_of(es, n.elem)
	text2 := fields_text(objs, n)
	every c in n.children {
		node2_clean(objs, text2, c)
	}
}

node2_clean(parents, text, n) if {
	none_held(text, n)
} else if {
	objs := elements(parents, n)
	text3 := fields_text(objs, n)
	every c in n.children {
		node3_clean(objs, text3, c)
	}
}

node3_clean(parents, text, n) if {
	none_held(text, n)
} else if {
	fields_text(elements(parents, n), n)
}

none_held(text, n) if not contains(text, n.mark)

# elements lists the elements of node n's containers below the parents that
# are objects, once every element is checked to have the node's type.
elements(parents, n) := objects_of(es, n.elem) if {
	es := below(parents, n.at)
	elements_are(es, n.elem)
}

# own_elements are the elements of the container at c in obj, when it is the
# container the wildcard w iterates ([] when it is not: the walk reads nothing
# below a container of the wrong type, whose own entry reports it).
own_elements(obj, [c, "[]"]) := x if {
	x := object.get(obj, c, null)
	is_array(x)
} else := []

own_elements(obj, [c, "*"]) := [e | x := object.get(obj, c, null); is_object(x); some e in x]

# below steps from each parent to the container at c under it, and lists its
# elements (none for a container of the wrong type: the walk reads nothing
# below it, and the container's own entry reports it).
below(es, [c, w]) := [e | some x in es; is_object(x); y := object.get(x, c, null); type_name(y) == container[w]; some e in y]

# Elements that must be objects are all objects once that is checked, so
# their fields are read without testing each element again.
objects_of(es, "object") := es

objects_of(es, want) := [e | some e in es; is_object(e)] if want != "object"

# fields_text is the filtered JSON of the objects' fields when they match the
# node's pattern ("" when the node reads no field; undefined when they do not
# match).
fields_text(objs, n) := "" if {
	n.check == null
} else := text if {
	text := json.marshal([json.filter(e, n.check.filter) | some e in objs])
	regex.match(n.check.list, text)
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
