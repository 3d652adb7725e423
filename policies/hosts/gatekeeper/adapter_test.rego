package lib.flipflop.gatekeeper_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.gatekeeper
import data.lib.flipflop.rules.foreign_branch_writer as fbw
import data.lib.flipflop.rules.missing_authorized_stage as mas
import data.lib.flipflop.rules.shared_application as sa
import data.lib.flipflop.rules.shared_branch_contradiction as rule
import data.lib.flipflop.rules.unreachable_desired_revision as udr
import data.lib.flipflop.waivers

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

# template_violations is what a constraint that selects
# shared-branch-contradiction alone reports for the input and data.inventory
# a test gives, before labelling (violations_of).
template_violations := violations_of("shared-branch-contradiction")

# violations_of is what a constraint with rules: [id] reports, as the
# generated entry module computes it (internal/export), before labelling:
# every admission rule on the adapter's docs (template_after), the candidates
# of rule id, and every admission rule on the baseline when the review is
# judged. (It reads the input and data.inventory a test gives with `with`,
# as the template does.)
# regal ignore:external-reference
violations_of(id) := gatekeeper.violations(candidates, template_after, template_baseline) if {
	candidates := gatekeeper.candidates({x | some x in template_after.findings; x.rule == id})
}

# template_after is every admission rule on the estate after the change: a
# rule, so that the constraints of one review share it, as they share nothing
# in Gatekeeper (each evaluates it), to keep the replays fast.
template_after := a if {
	# regal ignore:with-outside-test-context
	a := estate with input as gatekeeper.docs
}

# every_violation is what one constraint per rule would report together.
every_violation := {[id, v] | some id in admission_rules; some v in violations_of(id)}

admission_rules := {
	"foreign-branch-writer", "missing-authorized-stage", "shared-application",
	"shared-branch-contradiction", "unreachable-desired-revision",
}

estate := gatekeeper.estate_facts(waivers.apply(((((fbw.report | mas.report) | sa.report) | rule.report) | udr.report)))

default template_baseline := {"findings": set(), "pins": {}}

template_baseline := b if {
	gatekeeper.judged

	# regal ignore:with-outside-test-context
	b := estate with input as gatekeeper.baseline_docs
}

admission(op, obj, old) := {"review": {"operation": op, "object": obj, "oldObject": old}, "parameters": {}}

test_violation_for_involved_object if {
	vs := template_violations with input as review(dev_stage) with data.inventory as inventory
	count(vs) == 1
	some v in vs
	v.details.severity == "error"
	v.details.rule == "shared-branch-contradiction"
}

# A violation's message is the finding's, led once by its rule id (labelled;
# Gatekeeper puts the constraint's name in front).
test_message_is_the_finding_led_by_its_rule if {
	some v in template_violations with input as review(dev_stage) with data.inventory as inventory
	startswith(v.msg, "Stages acme/dev, acme/qa")
	not contains(v.msg, "[shared-branch-contradiction]")
	some l in gatekeeper.labelled({v})
	startswith(l.msg, "[shared-branch-contradiction] Stages acme/dev, acme/qa")
	count(split(l.msg, "[shared-branch-contradiction]")) == 2
}

# An Application on the contradicted branch that no Stage pins is related (it
# tracks one of the pointers), but not involved.
test_no_violation_for_uninvolved_object if {
	other := f.app("unrelated", "main")
	docs := gatekeeper.docs with input as review(other) with data.inventory as inventory
	findings := rule.report with input as docs
	count(findings) == 1
	count({v | some v in template_violations}) == 0 with input as review(other) with data.inventory as inventory
}

# A Stage created into an estate where it completes a contradiction is denied.
test_create_that_introduces_a_contradiction_is_a_violation if {
	inv := json.remove(inventory, [["namespace", "acme", "kargo.akuity.io/v1alpha1", "Stage", "dev"]])
	count({v | some v in template_violations}) == 1 with input as admission("CREATE", dev_stage, null) with data.inventory as inv
}

# An update that leaves an existing contradiction as it was (a status write, a
# label) is not a violation, nor one that reduces it.
test_update_that_keeps_a_contradiction_is_allowed if {
	changed := object.union(dev_stage, {"metadata": {"labels": {"team": "a"}}, "status": {"phase": "Steady"}})
	count({v | some v in template_violations}) == 0 with input as admission("UPDATE", changed, dev_stage) with data.inventory as inventory
}

test_update_that_reduces_a_contradiction_is_allowed if {
	third := f.stage("prod", "main", [f.pin("prod")])
	inv := json.patch(inventory, [
		{"op": "add", "path": ["namespace", "acme", "kargo.akuity.io/v1alpha1", "Stage", "prod"], "value": third},
		{"op": "add", "path": ["namespace", "argocd", "argoproj.io/v1alpha1", "Application", "prod"], "value": f.app("prod", "main")},
	])

	# dev stops pinning; qa and prod still contradict each other, without dev
	count({v | some v in template_violations}) == 0 with input as admission("UPDATE", f.stage("dev", "main", [f.no_pin("dev")]), dev_stage) with data.inventory as inv
}

# An update that brings the object into a contradiction, or makes one involve
# more objects, is a violation.
test_update_that_introduces_or_worsens_a_contradiction_is_a_violation if {
	clean := f.stage("dev", "main", [f.no_pin("dev")])
	count({v | some v in template_violations}) == 1 with input as admission("UPDATE", dev_stage, clean) with data.inventory as inventory

	# dev and qa already contradict each other; prod joins them
	inv := json.patch(inventory, [
		{"op": "add", "path": ["namespace", "argocd", "argoproj.io/v1alpha1", "Application", "prod"], "value": f.app("prod", "main")},
		{"op": "add", "path": ["namespace", "acme", "kargo.akuity.io/v1alpha1", "Stage", "prod"], "value": f.stage("prod", "main", [f.no_pin("prod")])},
	])
	vs := template_violations with input as admission("UPDATE", f.stage("prod", "main", [f.pin("prod")]), f.stage("prod", "main", [f.no_pin("prod")])) with data.inventory as inv
	count(vs) == 1
}

# Audit (no operation) reports every finding involving the object.
test_audit_reports_existing_contradictions if {
	count({v | some v in template_violations}) == 1 with input as review(dev_stage) with data.inventory as inventory
}

# Gatekeeper reviews a DELETE with the old object copied into object: deleting
# a Stage or an Application of an existing contradiction is a fix, never denied.
test_delete_is_never_a_violation if {
	count({v | some v in template_violations}) == 0 with input as admission("DELETE", dev_stage, dev_stage) with data.inventory as inventory
	count({v | some v in template_violations}) == 0 with input as admission("DELETE", dev_app, dev_app) with data.inventory as inventory

	# the same objects reviewed in audit are violations
	count({v | some v in template_violations}) == 1 with input as review(dev_app) with data.inventory as inventory
}

# PromotionTasks: a task edit that creates a contradiction in the Stages using
# it is a violation of the task, reported with those Stages.
pinning_task := f.promotion_task("acme", "promote", [], [
	f.clone(f.repo, [f.checkout("./repo", "main")]),
	{"uses": "git-commit", "as": "commit", "config": {"path": "./repo", "message": "m"}},
	{"uses": "git-push", "as": "push", "config": {"path": "./repo"}},
	{"uses": "argocd-update", "config": {"apps": [f.pin("${{ ctx.stage }}")]}},
])

plain_task := f.promotion_task("acme", "promote", [], [
	f.clone(f.repo, [f.checkout("./repo", "main")]),
	{"uses": "git-commit", "as": "commit", "config": {"path": "./repo", "message": "m"}},
	{"uses": "git-push", "as": "push", "config": {"path": "./repo"}},
	{"uses": "argocd-update", "config": {"apps": [f.no_pin("${{ ctx.stage }}")]}},
])

task_inventory := {"namespace": {
	"argocd": {"argoproj.io/v1alpha1": {"Application": {"dev": dev_app, "qa": qa_app}}},
	"acme": {"kargo.akuity.io/v1alpha1": {
		"Stage": {
			"dev": f.stage_steps("dev", [{"task": {"name": "promote"}}]),
			"qa": f.stage_steps("qa", [{"task": {"name": "promote"}}]),
		},
		"PromotionTask": {"promote": plain_task},
	}},
}}

test_task_edit_that_creates_a_contradiction_is_a_violation if {
	vs := template_violations with input as admission("UPDATE", pinning_task, plain_task) with data.inventory as task_inventory
	count(vs) == 1
	some v in vs
	{"Stage acme/dev", "Stage acme/qa"} & {r | some r in v.details.resources} == {"Stage acme/dev", "Stage acme/qa"}
}

test_task_edit_that_keeps_the_estate_clean_is_allowed if {
	relabelled := object.union(plain_task, {"metadata": {"labels": {"x": "y"}}})
	count({v | some v in template_violations}) == 0 with input as admission("UPDATE", relabelled, plain_task) with data.inventory as task_inventory
}

test_task_in_audit_reports_what_it_contributes if {
	inv := json.patch(task_inventory, [{"op": "replace", "path": ["namespace", "acme", "kargo.akuity.io/v1alpha1", "PromotionTask", "promote"], "value": pinning_task}])
	count({v | some v in template_violations}) == 1 with input as review(pinning_task) with data.inventory as inv
	count({v | some v in template_violations}) == 0 with input as review(plain_task) with data.inventory as task_inventory
}

test_cluster_task_users_are_found if {
	cluster_task := f.promotion_task("", "promote", [], pinning_task.spec.steps)
	inv := {"namespace": {
		"argocd": {"argoproj.io/v1alpha1": {"Application": {"dev": dev_app, "qa": qa_app}}},
		"acme": {"kargo.akuity.io/v1alpha1": {"Stage": {
			"dev": f.stage_steps("dev", [{"task": {"name": "promote", "kind": "ClusterPromotionTask"}}]),
			"qa": f.stage_steps("qa", [{"task": {"name": "promote", "kind": "ClusterPromotionTask"}}]),
			"other": f.stage_steps("other", [{"task": {"name": "promote"}}]),
		}}},
	}}
	keys := gatekeeper.task_user_keys with input as review(cluster_task) with data.inventory as inv
	keys == {"acme/dev", "acme/qa"}
	count({v | some v in template_violations}) == 1 with input as admission("CREATE", cluster_task, null) with data.inventory as inv
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

# An Application is related by any of the fields that hold its repositories:
# spec.source, each of spec.sources, the dry and the sync source of
# spec.sourceHydrator; and by its name when the reviewed Stage names it.
test_applications_are_related_through_every_source_field if {
	other := "https://git.example.com/x/y.git"
	multi := object.union(f.app("multi", "main"), {"spec": {"source": null, "sources": [
		{"repoURL": other, "targetRevision": "main"},
		{"repoURL": f.repo, "targetRevision": "main"},
	]}})
	dry := object.union(f.app("dry", "main"), {"spec": {"source": null, "sourceHydrator": {
		"drySource": {"repoURL": f.repo, "targetRevision": "main"},
		"syncSource": {"repoURL": other, "targetBranch": "main", "path": "p"},
	}}})
	sync := object.union(f.app("sync", "main"), {"spec": {"source": null, "sourceHydrator": {
		"drySource": {"repoURL": other, "targetRevision": "main"},
		"syncSource": {"repoURL": f.repo, "targetBranch": "main", "path": "p"},
	}}})
	elsewhere := object.union(f.app("elsewhere", "main"), {"spec": {"source": null, "sources": [{"repoURL": other, "targetRevision": "main"}]}})
	named := object.union(f.app("named", "main"), {"spec": {"source": {"repoURL": other, "targetRevision": "main"}}})
	stage := f.stage("dev", "main", [f.pin("dev"), f.pin("named")])
	single := f.app("single", "main")
	apps := {"dev": dev_app, "single": single, "multi": multi, "dry": dry, "sync": sync, "elsewhere": elsewhere, "named": named}
	inv := {"namespace": {"argocd": {"argoproj.io/v1alpha1": {"Application": apps}}}}
	docs := gatekeeper.docs with input as review(stage) with data.inventory as inv
	{d.contents.metadata.name | some d in docs; d.contents.kind == "Application"} == {"dev", "single", "multi", "dry", "sync", "named"}
}

# argocd-update reaches an Application an ApplicationSet generates by name, as
# it does a written one: reviewing a Stage relates every ApplicationSet whose
# templates may give a name the Stage names, whatever repository they deploy
# from (a list generator's name, a literal one, a generator's own template, a
# Go template, a templatePatch that may set the name), and no other.
# appset is an ApplicationSet in argocd of these generators and template, its
# Applications on another repository than the Stages'.
appset(name, gens, template) := f.application_set("argocd", name, {
	"generators": gens,
	"template": object.union({"spec": {"source": {"repoURL": "https://git.example.com/x/y.git", "targetRevision": "main", "path": "p"}}}, template),
})

test_stages_are_related_to_the_applicationsets_generating_what_they_name if {
	envs := {"list": {"elements": [{"env": "dev"}, {"env": "prod"}]}}
	appsets := {
		"listed": appset("listed", [envs], {"metadata": {"name": "guestbook-{{env}}"}}),
		"literal": appset("literal", [envs], {"metadata": {"name": "single"}}),
		"own": appset("own", [{"list": {"elements": [{"env": "qa"}], "template": {"metadata": {"name": "{{env}}-own"}}}}], {"metadata": {"name": "x"}}),
		"go": object.union(appset("go", [envs], {"metadata": {"name": "{{ .env }}-go"}}), {"spec": {"goTemplate": true}}),
		"patched": object.union(appset("patched", [envs], {"metadata": {"name": "x"}}), {"spec": {"templatePatch": "metadata:\n  name: '{{.env}}-patched'\n"}}),
		"prefix": appset("prefix", [envs], {"metadata": {"name": "guestbook-x-{{env}}"}}),
		"suffix": appset("suffix", [envs], {"metadata": {"name": "{{env}}-elsewhere"}}),
		"other-literal": appset("other-literal", [envs], {"metadata": {"name": "guestbook"}}),
	}
	stage := f.stage("dev", "main", [f.pin("dev"), f.no_pin("guestbook-dev"), f.no_pin("single"), f.no_pin("qa-own"), f.no_pin("dev-go")])
	inv := {"namespace": {"argocd": {"argoproj.io/v1alpha1": {"Application": {"dev": dev_app}, "ApplicationSet": appsets}}}}
	docs := gatekeeper.docs with input as review(stage) with data.inventory as inv
	{d.contents.metadata.name | some d in docs; d.contents.kind == "ApplicationSet"} == {"listed", "literal", "own", "go", "patched"}
}

# Reviewing an ApplicationSet relates the Stages that name an Application it
# generates, whatever repository they are on: among many names (looked up
# among a Stage's strings), and by a pattern's ends when a generator's
# parameters are unknown (git).
test_applicationsets_are_related_to_the_stages_naming_what_they_generate if {
	many := appset("many", [{"list": {"elements": [{"env": sprintf("e%d", [i])} | some i in numbers.range(0, 9)]}}], {"metadata": {"name": "svc-{{env}}"}})
	git := appset("git", [{"git": {"repoURL": "https://git.example.com/x/y.git", "directories": [{"path": "*"}]}}], {"metadata": {"name": "{{path.basename}}-app"}})
	stages := {name: f.stage(name, "main", [f.no_pin(app)]) |
		some [name, app] in [["s9", "svc-e9"], ["sx", "svc-x"], ["foo", "foo-app"], ["svc", "foo-svc"]]
	}
	inv := {"namespace": {"acme": {"kargo.akuity.io/v1alpha1": {"Stage": stages}}}}
	many_docs := gatekeeper.docs with input as review(many) with data.inventory as inv
	{d.contents.metadata.name | some d in many_docs} == {"many", "s9"}
	git_docs := gatekeeper.docs with input as review(git) with data.inventory as inv
	{d.contents.metadata.name | some d in git_docs} == {"git", "foo"}
}

# The case of a real repository (laprus/devops-config): a Stage updates an
# Application that only a list generator creates, from another repository,
# and that does not authorize it. Reviewing the Stage, or the ApplicationSet,
# finds it, as the whole inventory does.
test_a_generated_application_that_does_not_authorize_its_stage_is_found_from_either_side if {
	appset := f.application_set("argocd", "envs", {
		"generators": [{"list": {"elements": [{"env": "dev"}, {"env": "prod"}]}}],
		"template": {
			"metadata": {"name": "devops-app-{{env}}"},
			"spec": {"source": {"repoURL": "https://git.example.com/x/chart.git", "targetRevision": "HEAD", "path": "{{env}}"}},
		},
	})
	stage := f.stage("dev", "main", [f.pin("devops-app-dev")])
	unrelated := object.union(f.stage_steps("unrelated", [f.update([f.no_pin("devops-app")])]), {"metadata": {"namespace": "other"}})
	inv := {"namespace": {
		"argocd": {"argoproj.io/v1alpha1": {"ApplicationSet": {"envs": appset}}},
		"acme": {"kargo.akuity.io/v1alpha1": {"Stage": {"dev": stage}}},
		"other": {"kargo.akuity.io/v1alpha1": {"Stage": {"unrelated": unrelated}}},
	}}
	[v.details.resources | some v in violations_of("missing-authorized-stage")] == [["Stage acme/dev", "Application argocd/devops-app-dev"]] with input as review(stage) with data.inventory as inv
	[v.details.resources | some v in violations_of("missing-authorized-stage")] == [["Stage acme/dev", "Application argocd/devops-app-dev"]] with input as review(appset) with data.inventory as inv
	docs := gatekeeper.docs with input as review(appset) with data.inventory as inv
	{d.contents.metadata.name | some d in docs} == {"envs", "dev"}
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

# A task is reached by key: a PromotionTask of the same name in another
# namespace (another team's) neither adds its repositories to the review nor
# relates the Stages that run it.
test_tasks_are_reached_by_namespace_and_name if {
	other_url := "https://git.example.com/other/team.git"
	ours := f.promotion_task("acme", "promote", [], [f.clone(f.repo, [f.checkout("./r", "main")])])
	theirs := f.promotion_task("other", "promote", [], [f.clone(other_url, [f.checkout("./r", "main")])])
	reviewed := f.stage_steps("dev", [{"task": {"name": "promote"}}])
	their_stage := object.union(f.stage_steps("x", [{"task": {"name": "promote"}}]), {"metadata": {"namespace": "other"}})
	inv := {"namespace": {
		"argocd": {"argoproj.io/v1alpha1": {"Application": {
			"dev": dev_app,
			"theirs": f.app_with("theirs", {"repoURL": other_url, "targetRevision": "main"}, {}),
		}}},
		"acme": {"kargo.akuity.io/v1alpha1": {"Stage": {"dev": reviewed}, "PromotionTask": {"promote": ours}}},
		"other": {"kargo.akuity.io/v1alpha1": {"Stage": {"x": their_stage}, "PromotionTask": {"promote": theirs}}},
	}}
	[t.metadata.namespace | some t in gatekeeper.review_tasks] == ["acme"] with input as review(reviewed) with data.inventory as inv
	docs := gatekeeper.docs with input as review(reviewed) with data.inventory as inv
	{[d.contents.metadata.namespace, d.contents.metadata.name] | some d in docs} == {["acme", "dev"], ["argocd", "dev"], ["acme", "promote"]}

	# reviewing their Application relates their task and the Stage running it, not ours
	their_docs := gatekeeper.docs with input as review(inv.namespace.argocd["argoproj.io/v1alpha1"].Application.theirs) with data.inventory as inv
	{[d.contents.metadata.namespace, d.contents.metadata.name] | some d in their_docs} == {["argocd", "theirs"], ["other", "x"], ["other", "promote"]}
}

# Only an object's spec is searched: a live Stage's status names repositories
# (freight history) it may not promote.
test_status_does_not_relate_an_object if {
	with_status := object.union(f.stage_steps("old", []), {"status": {"freightHistory": [{"commits": [{"repoURL": f.repo}]}]}})
	inv := {"namespace": {"acme": {"kargo.akuity.io/v1alpha1": {"Stage": {"old": with_status}}}}}
	docs := gatekeeper.docs with input as review(dev_app) with data.inventory as inv
	[d.contents.metadata.name | some d in docs] == ["dev"]
}

# A review whose object the model reads as it was (a status write, a new
# resourceVersion) runs no rule; any change the model reads does, as do
# CREATE and audit.
test_unchanged_update_runs_no_rule if {
	status_write := object.union(dev_stage, {"metadata": {"resourceVersion": "2", "managedFields": [{"manager": "kargo"}]}, "status": {"phase": "Steady"}})
	not gatekeeper.changed with input as admission("UPDATE", status_write, dev_stage) with data.inventory as inventory
	count({v | some v in template_violations}) == 0 with input as admission("UPDATE", status_write, dev_stage) with data.inventory as inventory

	changes := [
		object.union(dev_stage, {"metadata": {"labels": {"team": "a"}}}),
		object.union(dev_stage, {"metadata": {"annotations": {"flipflop.dev/ignore": "shared-branch-contradiction: x"}}}),
		f.stage("dev", "main", [f.no_pin("dev")]),
	]
	every change in changes {
		gatekeeper.changed with input as admission("UPDATE", change, dev_stage) with data.inventory as inventory
	}
}

test_create_and_audit_run_the_rule if {
	gatekeeper.changed with input as admission("CREATE", dev_stage, null) with data.inventory as inventory
	gatekeeper.changed with input as review(dev_stage) with data.inventory as inventory
	not gatekeeper.changed with input as admission("DELETE", dev_stage, dev_stage) with data.inventory as inventory
}

# Of the objects that mention a reviewed repository, only those that can touch
# one of the reviewed pointers are read: Applications on another branch, and
# Stages that neither name, nor compute, nor write one, are left out.
test_only_objects_on_the_reviewed_pointers_are_read if {
	elsewhere := f.app("elsewhere", "env/other")
	elsewhere_stage := f.stage("elsewhere", "env/other", [f.pin("elsewhere")])
	computed := f.stage_steps("computed", [
		f.clone(f.repo, [f.checkout("./r", "env/${{ ctx.stage }}")]),
		{"uses": "git-push", "config": {"path": "./r"}},
	])
	inv := {"namespace": {
		"argocd": {"argoproj.io/v1alpha1": {"Application": {"dev": dev_app, "qa": qa_app, "elsewhere": elsewhere}}},
		"acme": {"kargo.akuity.io/v1alpha1": {"Stage": {"qa": qa_stage, "elsewhere": elsewhere_stage, "computed": computed}}},
	}}
	gatekeeper.narrowed with input as review(dev_stage) with data.inventory as inv
	docs := gatekeeper.docs with input as review(dev_stage) with data.inventory as inv
	{[d.contents.kind, d.contents.metadata.name] | some d in docs} == {
		["Stage", "dev"], ["Stage", "qa"], ["Stage", "computed"],
		["Application", "dev"], ["Application", "qa"],
	}

	# reviewing the other branch's Application reads its own pointer's objects
	# (and the Stage that computes a branch), not main's
	other_docs := gatekeeper.docs with input as review(elsewhere) with data.inventory as inv
	{[d.contents.kind, d.contents.metadata.name] | some d in other_docs} == {
		["Application", "elsewhere"], ["Stage", "elsewhere"], ["Stage", "computed"],
	}
}

# A pointer the model cannot tell (a branch from an unknown variable) narrows
# nothing beyond the repositories.
test_unknown_pointer_narrows_nothing if {
	unknown := f.stage_steps("unknown", [
		f.clone(f.repo, [f.checkout("./r", "${{ vars.nowhere }}")]),
		{"uses": "git-push", "config": {"path": "./r"}},
	])
	elsewhere := f.app("elsewhere", "env/other")
	inv := {"namespace": {"argocd": {"argoproj.io/v1alpha1": {"Application": {"elsewhere": elsewhere}}}}}
	not gatekeeper.narrowed with input as review(unknown) with data.inventory as inv
	docs := gatekeeper.docs with input as review(unknown) with data.inventory as inv
	{d.contents.metadata.name | some d in docs} == {"unknown", "elsewhere"}
}

# HEAD is the default branch: when the reviewed objects track main, an
# Application tracking HEAD (or nothing) is read, and the other way round.
test_default_branch_spellings_are_one_pointer if {
	head_app := f.app("head", "HEAD")
	inv := {"namespace": {"argocd": {"argoproj.io/v1alpha1": {"Application": {"head": head_app, "qa": qa_app}}}}}
	docs := gatekeeper.docs with input as review(dev_app) with data.inventory as inv
	{d.contents.metadata.name | some d in docs} == {"dev", "head", "qa"}
	head_docs := gatekeeper.docs with input as review(head_app) with data.inventory as inv
	{d.contents.metadata.name | some d in head_docs} == {"head", "qa"}
}

# all_rules_violations is what the template reports, as its generated entry
# module computes it: the findings of the rules the constraint selects, each
# message led by its rule id.
all_rules_violations := gatekeeper.labelled(gatekeeper.violations(candidates, template_after, template_baseline)) if {
	candidates := gatekeeper.candidates({x | some x in template_after.findings; gatekeeper.selected(x.rule)})
}

with_params(params) := {"review": {"object": dev_stage}, "parameters": params}

with_rules(rules) := with_params({"rules": rules})

test_constraint_reports_the_rules_it_selects if {
	every params in [
		{}, {"rules": []}, {"rules": ["shared-branch-contradiction"]},
		{"rules": ["shared-branch-contradiction", "shared-application"]},
		{"skipRules": ["shared-application"]}, {"rules": [], "skipRules": []},
	] {
		vs := [v | some v in all_rules_violations] with input as with_params(params) with data.inventory as inventory
		count(vs) == 1
		startswith(vs[0].msg, "[shared-branch-contradiction] Stages acme/dev, acme/qa")
		vs[0].details.rule == "shared-branch-contradiction"
	}
	count(all_rules_violations) == 0 with input as with_rules(["unreachable-desired-revision"]) with data.inventory as inventory
}

# skipRules leaves a rule out, even one rules lists: a deny constraint with
# rules: [x] and a warn one with skipRules: [x] report each finding once.
test_skip_rules_leaves_a_rule_out if {
	every params in [
		{"skipRules": ["shared-branch-contradiction"]},
		{"rules": ["shared-branch-contradiction"], "skipRules": ["shared-branch-contradiction"]},
	] {
		count(all_rules_violations) == 0 with input as with_params(params) with data.inventory as inventory
	}
}

# A constraint without parameters reports every rule.
test_constraint_without_parameters_reports_every_rule if {
	vs := [v | some v in all_rules_violations] with input as {"review": {"object": dev_stage}} with data.inventory as inventory
	count(vs) == 1
}

# The pair (rules: [x], skipRules: [x]) splits what one constraint reports:
# every violation once, each in the constraint that selects its rule. (A
# Stage that dev's Application does not authorize updates it: the
# Application is in a missing-authorized-stage finding too.)
test_deny_and_warn_pair_splits_the_violations if {
	ops_stage := f.stage("ops", "ops", [f.no_pin("dev")])
	inv := json.patch(inventory, [{"op": "add", "path": ["namespace", "acme", "kargo.akuity.io/v1alpha1", "Stage", "ops"], "value": ops_stage}])
	app := {"review": {"object": dev_app}}
	every_rule := all_rules_violations with input as object.union(app, {"parameters": {}}) with data.inventory as inv
	deny := all_rules_violations with input as object.union(app, {"parameters": {"rules": ["shared-branch-contradiction"]}}) with data.inventory as inv
	{v.details.rule | some v in deny} == {"shared-branch-contradiction"}
	warn := all_rules_violations with input as object.union(app, {"parameters": {"skipRules": ["shared-branch-contradiction"]}}) with data.inventory as inv
	{v.details.rule | some v in warn} == {"missing-authorized-stage"}
	count(deny & warn) == 0
	deny | warn == every_rule
}
