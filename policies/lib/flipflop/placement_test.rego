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

test_applications_that_disagree_say_nothing if {
	docs := [
		at("kargo/stages.yaml", "", dev),
		at("apps.yaml", "", deploying("a", "kargo", "acme", {})),
		at("apps.yaml", "", deploying("b", "kargo", "other", {})),
	]
	placed == {["dev", "", "", []]} with input as docs
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
