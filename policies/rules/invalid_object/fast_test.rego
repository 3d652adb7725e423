package lib.flipflop.rules.invalid_object_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.rules.invalid_object as rule

# suspect_names are the names of the objects the first pass cannot clear.
suspect_names := {o.ref.name | some o in rule.suspect_docs}

test_first_pass_clears_well_typed_objects if {
	count(rule.suspects) == 0 with input as f.estate([
		f.app("dev", "main"),
		f.app_with("qa", {"repoURL": f.repo, "targetRevision": "main"}, {"automated": {"enabled": true}}),
		f.stage("dev", "main", [f.pin("dev")]),
		f.stage_steps("qa", [
			{"uses": "git-clone", "config": {"repoURL": f.repo, "checkout": [{"branch": "main", "path": "./src"}]}},
			{"uses": "git-push", "as": "push", "config": {"path": "./src", "generateTargetBranch": true}},
			{"task": {"name": "render", "kind": "PromotionTask"}, "vars": [{"name": "x", "value": "y"}]},
		]),
	])
}

# Each object has one field of the wrong type, somewhere the first pass reads
# in bulk; a null beside it must not hide it (null sorts first).
test_first_pass_suspects_each_wrong_type if {
	objs := [
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "flat", "namespace": "argocd"}, "spec": {"source": {"repoURL": 5}}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "label", "namespace": "argocd", "labels": {"a": "b", "c": 1}}, "spec": {}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "empty-object", "namespace": "argocd"}, "spec": {"source": {"repoURL": {}}}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "strings-under", "namespace": "argocd"}, "spec": {"source": {"repoURL": {"a": "b"}}}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "array-for-object", "namespace": "argocd"}, "spec": {"syncPolicy": []}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "element", "namespace": "argocd"}, "spec": {"sources": [{"repoURL": "r"}, 5]}},
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "null-element", "namespace": "argocd"}, "spec": {"sources": [null]}},
		{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage", "metadata": {"name": "masked", "namespace": "p"}, "spec": {"vars": null, "promotionTemplate": {"spec": {"steps": 5}}}},
		f.stage_steps("single", [{"uses": "git-push", "as": 7, "config": {}}]),
		f.stage_steps("multi", [{"task": {"name": ["render"]}}]),
		f.stage_steps("nested", [{"uses": "git-push", "vars": [{"name": "a", "value": {}}]}]),
		f.stage_steps("config", [{"uses": "argocd-update", "config": {"apps": [{"name": "a", "sources": [{"repoURL": "r", "updateTargetRevision": "yes"}]}]}}]),
		f.stage_steps("config-map", [{"uses": "argocd-update", "config": {"apps": [{"selector": {"matchLabels": {"a": true}}}]}}]),
		{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
			"metadata": {"name": "deep", "namespace": "argocd"},
			"spec": {"generators": [{"matrix": {"generators": [{"list": {"elements": ["x"]}}]}}]},
		},
	]
	suspect_names == {o.metadata.name | some o in objs} with input as f.estate(objs)
}

# The first pass is stricter than the walk, never laxer: an expression where a
# boolean belongs makes the object a suspect, and the walk then finds nothing.
test_first_pass_stricter_than_walk if {
	objs := [f.stage_steps("expr", [{"uses": "git-push", "config": {"generateTargetBranch": "${{ vars.gen }}"}}])]
	suspect_names == {"expr"} with input as f.estate(objs)
	count(rule.report) == 0 with input as f.estate(objs)
}

# The flat entries are read as one filtered object whose nodes may be objects
# only where an entry lies below: that holds when no entry of another type has
# an entry below it.
test_only_objects_have_entries_below if {
	bad := {[name, p] |
		some name, t in object.union(rule.compiled, rule.compiled_config)
		some [parent, children] in t.flat
		some key, want in children
		want != "object"
		p := array.concat(parent, [key])
		some [below, _] in t.flat
		count(below) > count(p)
		array.slice(below, 0, count(p)) == p
	}
	count(bad) == 0
}

# The first pass reaches a container of two or three wildcards only from the
# node of its parent container: every such node has one, else the first pass
# would skip it and be laxer than the walk.
test_every_wildcard_node_has_a_parent if {
	orphans := {[name, n] |
		some name, t in object.union(rule.compiled, rule.compiled_config)
		some [d, above] in [["d2", "d1"], ["d3", "d2"]]
		some n in t[d]
		prefix := array.slice(n, 0, count(n) - 5)
		not has_node(t[above], prefix)
	}
	count(orphans) == 0
}

has_node(nodes, prefix) if {
	some m in nodes
	array.slice(m, 0, count(prefix)) == prefix
}

# Each node of the first pass is skipped only when its parent's filtered JSON
# shows none of its containers: the mark of every node is that text.
test_marks_name_each_container if {
	marks := {kind: [[n.mark, [c.mark | some c in n.children]] | some n in t.nodes] |
		some kind, t in object.union(rule.fast, rule.fast_config)
		count(t.nodes) > 0
	}
	marks.Stage == [
		[`"gitRepoUpdates":[]`, []],
		[`"steps":[]`, [`"vars":[]`]],
		[`"vars":[]`, []],
		[`"vars":[]`, []],
	]
	marks["argocd-update"] == [[`"apps":[]`, [`"matchExpressions":[]`, `"matchLabels":{}`, `"sources":[]`]]]
	every _, nodes in marks {
		every n in nodes {
			n[0] != ""
			every m in n[1] {
				m != ""
			}
		}
	}
}

# A container the parent's filtered JSON does not show is not read, and one it
# shows is: a wrong element below a step's vars is found whether or not the
# Stage has vars of its own.
test_first_pass_reads_a_shown_container if {
	objs := [
		f.stage_steps("without", [{"uses": "git-push", "config": {}}, {"uses": "git-push", "vars": [{"name": "a", "value": 1}]}]),
		{
			"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage", "metadata": {"name": "with", "namespace": "p"},
			"spec": {"vars": [{"name": "b", "value": "c"}], "promotionTemplate": {"spec": {"steps": [{"uses": "git-push", "vars": [5]}]}}},
		},
		f.stage_steps("fine", [{"uses": "git-push", "vars": [{"name": "a", "value": "b"}]}]),
	]
	suspect_names == {"without", "with"} with input as f.estate(objs)
}
