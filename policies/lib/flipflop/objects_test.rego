package lib.flipflop.objects_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.objects

dev := f.application("argocd", "dev", {}, f.tracking(f.repo, "main"))

stage := f.full_stage("dev", {})

test_list_document_is_expanded if {
	list := {"apiVersion": "v1", "kind": "List", "items": [dev, stage, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}, "text"]}
	docs := objects.docs with input as [{"path": "list.yaml", "contents": list, "line": 3}]
	[d.ref | some d in docs] == [
		{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "namespace": "argocd", "name": "dev", "file": "list.yaml", "line": 3},
		{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage", "namespace": "acme", "name": "dev", "file": "list.yaml", "line": 3},
	]
	[d.obj | some d in docs] == [dev, stage]
	[a.obj | some a in objects.applications] == [dev] with input as [{"path": "list.yaml", "contents": list}]
	[s.obj | some s in objects.stages] == [stage] with input as [{"path": "list.yaml", "contents": list}]
}

test_typed_list_is_expanded if {
	list := {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationList", "items": [dev]}
	[d.obj | some d in objects.docs] == [dev] with input as f.estate([list])
}

test_list_without_items_array_is_not_expanded if {
	count(objects.docs) == 0 with input as f.estate([{"apiVersion": "v1", "kind": "List", "items": {"a": dev}}])
	count(objects.docs) == 0 with input as f.estate([{"apiVersion": "v1", "kind": "List"}])
}

test_null_contents_are_skipped if {
	docs := objects.docs with input as [{"path": "empty.yaml", "contents": null}, f.entry(dev), {"path": "s.yaml", "contents": "scalar"}]
	[d.obj | some d in docs] == [dev]
	docs[0].ref.file == "test.yaml"
}

test_only_null_contents_give_nothing if {
	objects.docs == [] with input as [{"path": "empty.yaml", "contents": null}]
}

test_unknown_kinds_are_ignored if {
	docs := objects.docs with input as f.estate([
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
		{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}},
		{"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Freight", "metadata": {"name": "x"}},
		stage,
	])
	[d.ref.kind | some d in docs] == ["Stage"]
}

test_kind_of_another_group_is_ignored if {
	foreign := object.union(dev, {"apiVersion": "example.com/v1"})
	estate := f.estate([foreign, object.union(stage, {"apiVersion": "v1"})])
	count(objects.docs) == 0 with input as estate
	objects.applications == [] with input as estate
	objects.stages == [] with input as estate
}

test_kinds_are_sorted_into_their_lists if {
	task := f.promotion_task("acme", "t", [], [])
	cluster_task := f.promotion_task("", "ct", [], [])
	set := f.application_set("argocd", "set", {})
	estate := f.estate([dev, stage, task, cluster_task, set])
	[o.ref.name | some o in objects.applications] == ["dev"] with input as estate
	[o.ref.name | some o in objects.stages] == ["dev"] with input as estate
	[o.ref.name | some o in objects.promotion_tasks] == ["t"] with input as estate
	[o.ref.name | some o in objects.cluster_promotion_tasks] == ["ct"] with input as estate
	[o.ref.name | some o in objects.application_sets] == ["set"] with input as estate
}

test_ref_of_an_object_without_namespace if {
	bare := f.application("", "bare", {}, {})
	[d.ref | some d in objects.docs] == [{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "namespace": "",
		"name": "bare", "file": "", "line": 0,
	}] with input as [{"contents": bare}]
}

test_accessors if {
	o := {"a": {"b": null, "s": "x", "n": 1, "l": [1], "o": {"k": 1}}}
	objects.value_at(o, ["a", "b"], "def") == "def"
	objects.value_at(o, ["a", "s"], "def") == "x"
	objects.array_at(o, ["a", "l"]) == [1]
	objects.array_at(o, ["a", "o"]) == []
	objects.object_at(o, ["a", "o"]) == {"k": 1}
	objects.object_at(o, ["a", "l"]) == {}
	objects.string_at(o, ["a", "s"]) == "x"
	objects.string_at(o, ["a", "n"]) == ""
}
