package lib.flipflop.gatekeeper_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.gatekeeper
import data.lib.flipflop.rules.shared_branch_contradiction as rule

dev_app := f.app("dev", "main")

qa_app := f.app("qa", "main")

dev_stage := f.stage("dev", "main", [f.pin("dev")])

qa_stage := f.stage("qa", "main", [f.pin("qa")])

inventory := {"namespace": {
	"argocd": {"argoproj.io/v1alpha1": {"Application": {"dev": dev_app, "qa": qa_app}}},
	"acme": {"kargo.akuity.io/v1alpha1": {"Stage": {"dev": dev_stage, "qa": qa_stage}}},
	"other": {"v1": {"ConfigMap": {"x": {"kind": "ConfigMap", "metadata": {"name": "x"}}}}},
}}

review(obj) := {"review": {"object": obj}, "parameters": {}}

test_docs_read_only_the_needed_kinds if {
	docs := gatekeeper.docs with input as review(dev_stage) with data.inventory as inventory
	count(docs) == 4
	every d in docs {
		d.contents.kind in {"Application", "Stage"}
	}
}

test_stale_copy_of_reviewed_object_is_excluded if {
	changed := object.union(dev_stage, {"metadata": {"labels": {"changed": "yes"}}})
	docs := gatekeeper.docs with input as review(changed) with data.inventory as inventory
	stages := [d | some d in docs; d.contents.kind == "Stage"; d.contents.metadata.name == "dev"]
	count(stages) == 1
	stages[0].contents.metadata.labels.changed == "yes"
}

test_violation_for_involved_object if {
	docs := gatekeeper.docs with input as review(dev_stage) with data.inventory as inventory
	findings := rule.report with input as docs
	vs := gatekeeper.violations(findings) with input as review(dev_stage) with data.inventory as inventory
	count(vs) == 1
	some v in vs
	startswith(v.msg, "[shared-branch-contradiction] Stages acme/dev, acme/qa")
	v.details.severity == "error"
}

test_no_violation_for_uninvolved_object if {
	other := f.app("unrelated", "env/x")
	docs := gatekeeper.docs with input as review(other) with data.inventory as inventory
	findings := rule.report with input as docs
	count(findings) == 1
	vs := gatekeeper.violations(findings) with input as review(other) with data.inventory as inventory
	count(vs) == 0
}

test_parameters_become_settings if {
	s := gatekeeper.settings with input as {"review": {"object": dev_stage}, "parameters": {"defaultBranch": "trunk", "argocdNamespace": ""}}
	s == {"default_branch": "trunk"}
	off := gatekeeper.settings with input as {"review": {"object": dev_stage}, "parameters": {"annotationWaivers": false}}
	off == {"annotation_waivers": false}
}

generated := {"resources": [{"kind": "Application", "namespace": "argocd", "name": "a-dev", "generatedBy": "ApplicationSet argocd/a"}]}

test_applicationset_is_involved_through_generated_apps if {
	gatekeeper.involves(generated, {"kind": "ApplicationSet", "namespace": "argocd", "name": "a"})
	not gatekeeper.involves(generated, {"kind": "ApplicationSet", "namespace": "argocd", "name": "b"})
}

other_repo_app := f.app_with("other", {"repoURL": "https://git.example.com/other/repo.git", "targetRevision": "main"}, {})

test_only_objects_of_the_reviewed_repositories_are_read if {
	inv := {"namespace": {
		"argocd": {"argoproj.io/v1alpha1": {"Application": {"dev": dev_app, "qa": qa_app, "other": other_repo_app}}},
		"acme": {"kargo.akuity.io/v1alpha1": {"Stage": {"qa": qa_stage}}},
	}}
	docs := gatekeeper.docs with input as review(dev_stage) with data.inventory as inv
	{d.contents.metadata.name | some d in docs} == {"dev", "qa"}
	count(docs) == 4
}

test_stages_reach_repositories_through_their_tasks if {
	task := f.promotion_task("acme", "promote", [], [f.clone(f.repo, [f.checkout("./r", "main")])])
	via_task := f.stage_steps("viatask", [{"task": {"name": "promote"}}])
	unrelated := f.stage_steps("unrelated", [{"uses": "git-clone", "config": {"repoURL": "https://git.example.com/x/y.git"}}])
	inv := {"namespace": {
		"argocd": {"argoproj.io/v1alpha1": {"Application": {"dev": dev_app}}},
		"acme": {"kargo.akuity.io/v1alpha1": {"Stage": {"viatask": via_task, "unrelated": unrelated}, "PromotionTask": {"promote": task}}},
	}}
	docs := gatekeeper.docs with input as review(dev_app) with data.inventory as inv
	{d.contents.metadata.name | some d in docs} == {"dev", "viatask", "promote"}
}
