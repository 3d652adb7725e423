package lib.flipflop.placement_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.placement
import data.lib.flipflop.stages

# unnamespaced is a Stage as a repository keeps it for kargo apply --project.
unnamespaced(stage) := json.remove(stage, ["metadata/namespace"])

# at puts a document in file path (renderedBy: the render that made it, "" for none).
at(path, rendered, obj) := object.union({"path": path, "contents": obj}, by(rendered))

by("") := {}

by(rendered) := {"renderedBy": rendered} if rendered != ""

# deploying is an Application (in argocd) that deploys path of the repository
# into namespace ns; extra is merged into its source.
deploying(name, path, ns, extra) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": name, "namespace": "argocd"},
	"spec": {
		"source": object.union({"repoURL": "https://github.com/acme/platform", "targetRevision": "main", "path": path}, extra),
		"destination": {"namespace": ns},
	},
}

dev := unnamespaced(f.stage("dev", "main", [f.pin("dev")]))

placed := {[r.name, r.project, r.placement.from, r.placement.by] | some r in stages.records}

test_written_namespace_wins if {
	placed == {["dev", "acme", "metadata", []]} with input as [at("kargo/stages.yaml", "", f.stage("dev", "main", [])), at("apps.yaml", "", deploying("k", "kargo", "other", {}))]
}

test_no_namespace_is_unknown if {
	placed == {["dev", "", "", []]} with input as [at("kargo/stages.yaml", "", dev)]
}

test_run_namespace if {
	placed == {["dev", "team", "setting", []]} with input as [at("kargo/stages.yaml", "", dev)]
		with data.lib.flipflop.config.settings as {"namespace": "team"}
}

test_deploying_application if {
	docs := [at("./repo/kargo/stages.yaml", "", dev), at("apps.yaml", "", deploying("kargo", "./kargo/", "acme", {}))]
	placed == {["dev", "acme", "application", ["argocd/kargo"]]} with input as docs
}

test_rendered_directory_is_the_one_deployed if {
	docs := [at("kargo/base/stages.yaml", "kustomize kargo/overlays/prod", dev), at("apps.yaml", "", deploying("kargo", "kargo/overlays/prod", "acme", {}))]
	placed == {["dev", "acme", "application", ["argocd/kargo"]]} with input as docs
}

test_other_directory_says_nothing if {
	docs := [at("kargo/stages.yaml", "", dev), at("apps.yaml", "", deploying("kargo", "other/kargo-not", "acme", {}))]
	placed == {["dev", "", "", []]} with input as docs
}

test_a_name_is_matched_whole if {
	docs := [at("my-kargo/stages.yaml", "", dev), at("apps.yaml", "", deploying("kargo", "kargo", "acme", {}))]
	placed == {["dev", "", "", []]} with input as docs
}

test_subdirectory_only_with_recurse if {
	flat := [at("kargo/stages/dev.yaml", "", dev), at("apps.yaml", "", deploying("kargo", "kargo", "acme", {}))]
	placed == {["dev", "", "", []]} with input as flat
	deep := [at("kargo/stages/dev.yaml", "", dev), at("apps.yaml", "", deploying("kargo", "kargo", "acme", {"directory": {"recurse": true}}))]
	placed == {["dev", "acme", "application", ["argocd/kargo"]]} with input as deep
}

# Two Applications deploy the directory into two namespaces: Argo CD makes a
# copy in each, and which one a finding would be about is unknown.
test_applications_that_disagree_say_nothing if {
	docs := [
		at("kargo/stages.yaml", "", dev),
		at("apps.yaml", "", deploying("a", "kargo", "acme", {})),
		at("apps.yaml", "", deploying("b", "kargo", "other", {})),
	]
	placed == {["dev", "", "conflict", ["argocd/a", "argocd/b"]]} with input as docs
	[r.placement.given | some r in stages.records] == [[
		{"namespace": "acme", "by": "Application argocd/a"},
		{"namespace": "other", "by": "Application argocd/b"},
	]] with input as docs
}

# -n says one namespace, an Application that deploys the directory another:
# neither is taken (a pull request's Application cannot take a directory
# into its own namespace, nor -n hide that one does).
test_setting_and_application_that_disagree_say_nothing if {
	docs := [at("kargo/stages.yaml", "", dev), at("apps.yaml", "", deploying("k", "kargo", "other", {}))]
	placed == {["dev", "", "conflict", ["argocd/k"]]} with input as docs with data.lib.flipflop.config.settings as {"namespace": "team"}
	[r.placement.given | some r in stages.records] == [[
		{"namespace": "other", "by": "Application argocd/k"},
		{"namespace": "team", "by": "-n"},
	]] with input as docs with data.lib.flipflop.config.settings as {"namespace": "team"}
}

test_setting_and_application_that_agree if {
	docs := [at("kargo/stages.yaml", "", dev), at("apps.yaml", "", deploying("k", "kargo", "team", {}))]
	placed == {["dev", "team", "setting", []]} with input as docs with data.lib.flipflop.config.settings as {"namespace": "team"}
}

# A written namespace is not the directory's: -n and Applications say nothing
# about it.
test_written_namespace_wins_over_setting_and_applications if {
	docs := [at("kargo/stages.yaml", "", f.stage("dev", "main", [])), at("apps.yaml", "", deploying("k", "kargo", "other", {}))]
	placed == {["dev", "acme", "metadata", []]} with input as docs with data.lib.flipflop.config.settings as {"namespace": "team"}
}

# cluster_generated deploys path into the namespace a cluster's label gives:
# an ApplicationSet generator flipflop cannot expand, so the namespace is unknown.
cluster_generated(path) := f.application_set("argocd", "per-cluster", {
	"generators": [{"clusters": {}}],
	"template": {
		"metadata": {"name": "{{name}}-kargo"},
		"spec": {
			"source": {"repoURL": "https://github.com/acme/platform", "targetRevision": "main", "path": path},
			"destination": {"server": "{{server}}", "namespace": "{{metadata.labels.project}}"},
		},
	},
})

# An Application whose destination namespace is unknown deploys the directory
# too: a known namespace beside it is not the only one.
test_unknown_destination_beside_a_known_one_says_nothing if {
	docs := [
		at("kargo/stages.yaml", "", dev),
		at("apps.yaml", "", deploying("k", "kargo", "other", {})),
		at("appsets.yaml", "", cluster_generated("kargo")),
	]
	some r in stages.records with input as docs
	[r.project, r.placement.from] == ["", "conflict"] with input as docs
	{g.namespace | some g in r.placement.given} == {"other", "${{ applicationset-parameter }}"} with input as docs
}

# Only unknown destinations: unknown, as when nothing deploys the directory.
test_only_an_unknown_destination_says_nothing if {
	docs := [at("kargo/stages.yaml", "", dev), at("appsets.yaml", "", cluster_generated("kargo"))]
	placed == {["dev", "", "", []]} with input as docs
}

# An Application without a destination namespace deploys no namespaced
# resource that names none (Argo CD: "Namespace for ... is missing").
test_no_destination_namespace_says_nothing if {
	docs := [
		at("kargo/stages.yaml", "", dev),
		at("apps.yaml", "", deploying("a", "kargo", "acme", {})),
		at("apps.yaml", "", json.remove(deploying("b", "kargo", "", {}), ["spec/destination/namespace"])),
	]
	placed == {["dev", "acme", "application", ["argocd/a"]]} with input as docs
}

# The same holds for a PromotionTask: a task step of a Stage placed in acme
# does not find a task whose directory another Application also deploys
# elsewhere.
test_task_directory_given_two_namespaces_is_unknown if {
	steps := [{"uses": "git-push", "as": "push", "config": {"path": "./out", "targetBranch": "env/dev"}}]
	stage := unnamespaced(f.template_stage("dev", [], [], [{"task": {"name": "promote"}, "as": "t"}]))
	task := json.remove(f.promotion_task("acme", "promote", [], steps), ["metadata/namespace"])
	agree := [
		at("kargo/stages.yaml", "", stage), at("tasks/promote.yaml", "", task),
		at("apps.yaml", "", deploying("k", "kargo", "acme", {})), at("apps.yaml", "", deploying("t", "tasks", "acme", {})),
	]
	[s.task_resolved | some s in stages.records[0].steps] == [true] with input as agree
	disagree := array.concat(agree, [at("pr.yaml", "", deploying("pr", "tasks", "other", {}))])
	[s.task_resolved | some s in stages.records[0].steps] == [false] with input as disagree
}

test_applications_that_agree_are_named if {
	docs := [
		at("kargo/stages.yaml", "", dev),
		at("apps.yaml", "", deploying("a", "kargo", "acme", {})),
		at("apps.yaml", "", deploying("b", "kargo", "acme", {})),
	]
	placed == {["dev", "acme", "application", ["argocd/a", "argocd/b"]]} with input as docs
}

test_root_and_unknown_paths_say_nothing if {
	root := [at("stages.yaml", "", dev), at("apps.yaml", "", deploying("kargo", ".", "acme", {}))]
	placed == {["dev", "", "", []]} with input as root
	templated := [at("kargo/stages.yaml", "", dev), at("apps.yaml", "", deploying("kargo", "${{ vars.path }}", "acme", {}))]
	placed == {["dev", "", "", []]} with input as templated
}

# An unknown project leaves ctx.project unsubstituted (an unknown value, never
# ""), and the authorization of the Applications it updates unknown.
test_unknown_project_is_never_empty if {
	stage := unnamespaced(f.template_stage("dev", [f.var("p", "${{ ctx.project }}")], [], [f.update([f.no_pin("dev")])]))
	r := stages.records[0] with input as f.estate([stage, f.app("dev", "main")])
	r.vars.p == "${{ ctx.project }}"
	[t.authorized | some u in model.updates; some t in u.targets] == ["unknown"] with input as f.estate([stage, f.app("dev", "main")])
}

# A Stage and a PromotionTask that both leave their namespace to apply time
# are taken to be applied to one project; a namespaced one is not found from
# an unknown project, and a namespace-less one is no ClusterPromotionTask.
test_unknown_project_finds_unnamespaced_task if {
	steps := [{"uses": "git-push", "as": "push", "config": {"path": "./out", "targetBranch": "env/dev"}}]
	stage := unnamespaced(f.template_stage("dev", [], [], [{"task": {"name": "promote"}, "as": "t"}]))
	task := json.remove(f.promotion_task("acme", "promote", [], steps), ["metadata/namespace"])
	[s.task_resolved | some s in stages.records[0].steps] == [true] with input as f.estate([stage, task])
	[s.task_resolved | some s in stages.records[0].steps] == [false] with input as f.estate([stage, f.promotion_task("acme", "promote", [], steps)])
	cluster := unnamespaced(f.template_stage("dev", [], [], [{"task": {"name": "promote", "kind": "ClusterPromotionTask"}, "as": "t"}]))
	[s.task_resolved | some s in stages.records[0].steps] == [false] with input as f.estate([cluster, task])
}

test_nothing_indexed_when_every_document_has_a_namespace if {
	not placement.unplaced with input as f.estate([f.stage("dev", "main", []), f.app("dev", "main")])
	count(placement.deploys) == 0 with input as f.estate([f.stage("dev", "main", []), f.app("dev", "main")])
}
