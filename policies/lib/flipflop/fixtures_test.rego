# Builders for the Rego tests: small Kubernetes objects wrapped as conftest's
# --combine input entries. Test-only (excluded from every bundle).
package lib.flipflop.fixtures

repo := "https://github.com/acme/deploy.git"

entry(obj) := {"path": "test.yaml", "contents": obj}

# app is an Application tracking repo at rev, authorizing acme:<name>.
app(name, rev) := app_with(name, {"repoURL": repo, "targetRevision": rev, "path": name}, {"automated": {}})

app_with(name, source, sync) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {
		"name": name,
		"namespace": "argocd",
		"annotations": {"kargo.akuity.io/authorized-stage": sprintf("acme:%s", [name])},
	},
	"spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc"}, "source": source, "syncPolicy": sync},
}

# stage writes branch of repo and runs argocd-update with the given app entries.
stage(name, branch, apps) := stage_steps(name, [
	{"uses": "git-clone", "config": {"repoURL": repo, "checkout": [{"branch": branch, "path": "./repo"}]}},
	{"uses": "git-commit", "as": "commit", "config": {"path": "./repo", "message": "m"}},
	{"uses": "git-push", "as": "push", "config": {"path": "./repo"}},
	{"uses": "argocd-update", "config": {"apps": apps}},
])

stage_steps(name, steps) := {
	"apiVersion": "kargo.akuity.io/v1alpha1",
	"kind": "Stage",
	"metadata": {"name": name, "namespace": "acme"},
	"spec": {"requestedFreight": freight, "promotionTemplate": {"spec": {"steps": steps}}},
}

# freight is what the fixtures' Stages request: Freight a Warehouse makes.
freight := [{"origin": {"kind": "Warehouse", "name": "images"}, "sources": {"direct": true}}]

# pin is an argocd-update app entry pinning repo to the pushed commit.
pin(app_name) := {"name": app_name, "sources": [{"repoURL": repo, "desiredRevision": "${{ outputs.push.commit }}"}]}

# no_pin is an argocd-update app entry without a revision check.
no_pin(app_name) := {"name": app_name}

estate(objs) := [entry(o) | some o in objs]

# ids returns the rule ids of a set of findings.
ids(findings) := {f.rule | some f in findings}

# ---------------------------------------------------------------------------
# Builders for the model's own tests.

sha := "0123456789abcdef0123456789abcdef01234567"

# application is an Application with the given metadata and spec; ns "" leaves
# metadata.namespace out.
application(ns, name, meta, spec) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": object.union(namespaced(ns, name), meta),
	"spec": spec,
}

namespaced("", name) := {"name": name}

namespaced(ns, name) := {"name": name, "namespace": ns} if ns != ""

# authorizing is Application metadata authorizing stages ("acme:dev, acme:qa").
authorizing(stages) := {"annotations": {"kargo.akuity.io/authorized-stage": stages}}

# labelled is Application metadata with labels, authorizing stages.
labelled(labels, stages) := object.union(authorizing(stages), {"labels": labels})

# tracking is an Application spec with one source.
tracking(url, rev) := {"source": {"repoURL": url, "targetRevision": rev, "path": "."}}

# full_stage is a Stage in namespace acme with the given spec.
full_stage(name, spec) := {
	"apiVersion": "kargo.akuity.io/v1alpha1",
	"kind": "Stage",
	"metadata": {"name": name, "namespace": "acme"},
	"spec": spec,
}

# template_stage is a Stage with Stage vars, template vars and steps.
template_stage(name, stage_vars, template_vars, steps) := full_stage(name, {
	"vars": stage_vars,
	"promotionTemplate": {"spec": {"vars": template_vars, "steps": steps}},
})

# promotion_task is a PromotionTask (ns set) or a ClusterPromotionTask (ns "").
promotion_task(ns, name, vars, steps) := {
	"apiVersion": "kargo.akuity.io/v1alpha1",
	"kind": "PromotionTask",
	"metadata": {"name": name, "namespace": ns},
	"spec": {"vars": vars, "steps": steps},
} if {
	ns != ""
}

promotion_task("", name, vars, steps) := {
	"apiVersion": "kargo.akuity.io/v1alpha1",
	"kind": "ClusterPromotionTask",
	"metadata": {"name": name},
	"spec": {"vars": vars, "steps": steps},
}

var(name, value) := {"name": name, "value": value}

# clone checks out branch at path ("" branch: the default branch).
clone(url, checkouts) := {"uses": "git-clone", "as": "clone", "config": {"repoURL": url, "checkout": checkouts}}

checkout(path, "") := {"path": path}

checkout(path, branch) := {"path": path, "branch": branch} if branch != ""

# push is a git-push step with extra config.
push(alias, path, extra) := {"uses": "git-push", "as": alias, "config": object.union({"path": path}, extra)}

# update is an argocd-update step.
update(apps) := {"uses": "argocd-update", "config": {"apps": apps}}

# pin_url is an argocd-update sources[] entry pinning url to the pushed commit.
pin_url(url) := {"repoURL": url, "desiredRevision": "${{ outputs.push.commit }}"}

# application_set is an ApplicationSet in namespace ns.
application_set(ns, name, spec) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "ApplicationSet",
	"metadata": {"name": name, "namespace": ns},
	"spec": spec,
}
