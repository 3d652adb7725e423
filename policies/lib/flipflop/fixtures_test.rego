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
	"spec": {"source": source, "syncPolicy": sync},
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
	"spec": {"promotionTemplate": {"spec": {"steps": steps}}},
}

# pin is an argocd-update app entry pinning repo to the pushed commit.
pin(app_name) := {"name": app_name, "sources": [{"repoURL": repo, "desiredRevision": "${{ outputs.push.commit }}"}]}

# no_pin is an argocd-update app entry without a revision check.
no_pin(app_name) := {"name": app_name}

estate(objs) := [entry(o) | some o in objs]

# ids returns the rule ids of a set of findings.
ids(findings) := {f.rule | some f in findings}
