package lib.flipflop.apps_test

import data.lib.flipflop.application
import data.lib.flipflop.apps
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model

chart_repo := "https://charts.example.com/stable"

# only is the only Application record of the input.
only := r if {
	count(apps.records) == 1
	r := apps.records[0]
}

# one is the input holding just objs.
one(objs) := f.estate(objs)

# synced is the input holding one Application with the given syncPolicy.
synced(policy) := one([f.application("argocd", "a", {}, object.union(f.tracking(f.repo, "main"), policy))])

# ---------------------------------------------------------------------------
# Auto-sync (argocd.md §1.3)

test_automated_empty_is_on if {
	only.auto_sync == true with input as synced({"syncPolicy": {"automated": {}}})
}

test_automated_without_prune_or_self_heal_is_on if {
	only.auto_sync == true with input as synced({"syncPolicy": {"automated": {"prune": false, "selfHeal": false}}})
	only.auto_sync == true with input as synced({"syncPolicy": {"automated": {"enabled": true}}})
}

test_automated_absent_is_off if {
	only.auto_sync == false with input as synced({})
	only.auto_sync == false with input as synced({"syncPolicy": {}})
	only.auto_sync == false with input as synced({"syncPolicy": null})
	only.auto_sync == false with input as synced({"syncPolicy": {"syncOptions": ["CreateNamespace=true"]}})
}

test_automated_null_is_off if {
	only.auto_sync == false with input as synced({"syncPolicy": {"automated": null}})
}

test_automated_disabled_is_off if {
	only.auto_sync == false with input as synced({"syncPolicy": {"automated": {"enabled": false}}})
	only.auto_sync == false with input as synced({"syncPolicy": {"automated": {"enabled": false, "prune": true, "selfHeal": true}}})
}

# ---------------------------------------------------------------------------
# The model keeps auto-sync on each source's Application.

test_auto_sync_reaches_model_sources if {
	estate := f.estate([
		f.application("argocd", "on", {}, object.union(f.tracking(f.repo, "main"), {"syncPolicy": {"automated": {"prune": false, "selfHeal": false}}})),
		f.application("argocd", "off", {}, object.union(f.tracking(f.repo, "main"), {"syncPolicy": {"automated": {"enabled": false}}})),
		f.application("argocd", "null", {}, object.union(f.tracking(f.repo, "main"), {"syncPolicy": {"automated": null}})),
	])
	sync_rows := [[s.app.name, s.app.auto_sync] | some s in model.sources] with input as estate
	sync_rows == [["on", true], ["off", false], ["null", false]]
}

# ---------------------------------------------------------------------------
# Sources (argocd.md §1.1, §4)

# spec_of is the input holding one Application with spec.
spec_of(spec) := one([f.application("argocd", "a", {}, spec)])

test_single_source if {
	only.sources == [{
		"index": 0, "repo_url": f.repo, "repo_id": "github.com/acme/deploy", "repo_known": true,
		"chart": "", "rev": {"kind": "branch", "name": "main"}, "raw_revision": "main",
		"ref_name": "", "hydrator": false, "path": "/spec/source", "fields": f.tracking(f.repo, "main").source,
	}] with input as spec_of(f.tracking(f.repo, "main"))
}

test_no_source_means_no_sources if {
	only.sources == [] with input as spec_of({})
	only.sources == [] with input as spec_of({"source": {}})
}

test_sources_override_source if {
	spec := {
		"source": {"repoURL": "https://github.com/acme/ignored", "targetRevision": "main"},
		"sources": [
			{"repoURL": chart_repo, "chart": "app", "targetRevision": "1.2.3"},
			{"repoURL": f.repo, "targetRevision": "env/dev", "ref": "values"},
		],
	}
	r := only with input as spec_of(spec)
	[[s.index, s.repo_id, s.chart, s.rev, s.ref_name] | some s in r.sources] == [
		[0, "charts.example.com/stable/app", "app", {"kind": "version", "name": "1.2.3"}, ""],
		[1, "github.com/acme/deploy", "", {"kind": "branch", "name": "env/dev"}, "values"],
	]
}

test_empty_sources_fall_back_to_source if {
	r := only with input as spec_of({"source": {"repoURL": f.repo, "targetRevision": "main"}, "sources": []})
	[s.repo_url | some s in r.sources] == [f.repo]
}

test_ref_source_without_path_is_tracked if {
	r := only with input as spec_of({"sources": [{"repoURL": f.repo, "targetRevision": "HEAD", "ref": "values"}]})
	[[s.ref_name, s.rev] | some s in r.sources] == [["values", {"kind": "default", "name": "HEAD"}]]
}

hydrator := {"sourceHydrator": {
	"drySource": {"repoURL": "https://github.com/acme/dry", "targetRevision": "HEAD", "path": "envs/dev"},
	"syncSource": {"targetBranch": "environments/dev", "path": "envs/dev"},
}}

test_hydrator_tracks_the_sync_branch_of_the_dry_repo if {
	only.sources == [{
		"index": 0, "repo_url": "https://github.com/acme/dry", "repo_id": "github.com/acme/dry", "repo_known": true,
		"chart": "", "rev": {"kind": "branch", "name": "environments/dev"}, "raw_revision": "environments/dev",
		"ref_name": "", "hydrator": true, "path": "/spec/sourceHydrator/syncSource", "fields": hydrator.sourceHydrator.syncSource,
	}] with input as spec_of(hydrator)
}

test_hydrator_sync_repo_wins if {
	spec := json.patch(hydrator, [{"op": "add", "path": "/sourceHydrator/syncSource/repoURL", "value": "https://github.com/acme/rendered"}])
	r := only with input as spec_of(spec)
	[s.repo_id | some s in r.sources] == ["github.com/acme/rendered"]
}

test_hydrator_takes_precedence_over_source_and_sources if {
	spec := object.union(hydrator, {
		"source": {"repoURL": f.repo, "targetRevision": "main"},
		"sources": [{"repoURL": f.repo, "targetRevision": "main"}],
	})
	r := only with input as spec_of(spec)
	[[s.repo_id, s.rev.name, s.hydrator] | some s in r.sources] == [["github.com/acme/dry", "environments/dev", true]]
}

# charted is the input holding one Application on a Helm chart at rev.
charted(rev) := spec_of({"source": {"repoURL": chart_repo, "chart": "app", "targetRevision": rev}})

test_chart_exact_version_is_fixed if {
	only.sources[0].rev == {"kind": "version", "name": "15.7.1"} with input as charted("15.7.1")
	only.sources[0].rev == {"kind": "version", "name": "v1"} with input as charted("v1")
}

test_chart_constraint_floats if {
	only.sources[0].rev == {"kind": "semver", "name": "1.2.*"} with input as charted("1.2.*")
	only.sources[0].rev == {"kind": "semver", "name": "^1.2.0"} with input as charted("^1.2.0")
	only.sources[0].rev == {"kind": "semver", "name": ">=1.0.0 <2.0.0"} with input as charted(">=1.0.0 <2.0.0")
}

test_chart_non_semver_is_unknown if {
	only.sources[0].rev == {"kind": "unknown", "name": "latest"} with input as charted("latest")
}

test_templated_repo_url_is_unknown if {
	only.sources[0].repo_known == false with input as spec_of(f.tracking("${{ vars.repo }}", "main"))
	only.sources[0].repo_known == true with input as spec_of(f.tracking(f.repo, "main"))
}

# ---------------------------------------------------------------------------
# Records, keys and grouping

test_record_identity if {
	r := only with input as one([f.application("team", "a", f.labelled({"env": "dev"}, "acme:dev"), f.tracking(f.repo, "main"))])
	r.key == "team/a"
	r.namespace == "team"
	r.name == "a"
	r.name_known == true
	r.labels == {"env": "dev"}
	r.annotations == {"kargo.akuity.io/authorized-stage": "acme:dev"}
	r.metadata_known == true
	r.appset == ""
	r.ref.kind == "Application"
}

test_namespace_defaults_to_argocd if {
	only.key == "argocd/a" with input as one([f.application("", "a", {}, {})])
}

test_namespace_defaults_to_setting if {
	only.key == "gitops/a" with input as one([f.application("", "a", {}, {})]) with data.lib.flipflop.config.settings as {"argocd_namespace": "gitops"}
	only.key == "team/a" with input as one([f.application("team", "a", {}, {})]) with data.lib.flipflop.config.settings as {"argocd_namespace": "gitops"}
}

test_by_key_and_by_namespace if {
	estate := f.estate([
		f.application("argocd", "a", {}, {}),
		f.application("argocd", "a", {"labels": {"copy": "2"}}, {}),
		f.application("team", "b", {}, {}),
	])
	{k: count(g) | some k, g in apps.by_key} == {"argocd/a": 2, "team/b": 1} with input as estate
	{k: [a.name | some a in g] | some k, g in apps.by_namespace} == {"argocd": ["a", "a"], "team": ["b"]} with input as estate
	apps.patterns == [] with input as estate
}

# ---------------------------------------------------------------------------
# Authorization (kargo.md §4.1)

auth_of(v) := apps.auth_stages({"annotations": {"kargo.akuity.io/authorized-stage": v}})

test_authorized_stage_list if {
	auth_of("acme:dev") == {"acme:dev"}
	auth_of(" acme:dev, acme:qa ,, ") == {"acme:dev", "acme:qa"}
	apps.authorizes({"annotations": {"kargo.akuity.io/authorized-stage": "acme:qa, acme:dev"}}, "acme", "dev")
}

test_authorized_stage_missing_or_other if {
	apps.auth_stages({"annotations": {}}) == set()
	auth_of("") == set()
	not apps.authorizes({"annotations": {}}, "acme", "dev")
	not apps.authorizes({"annotations": {"kargo.akuity.io/authorized-stage": "acme:qa"}}, "acme", "dev")
	not apps.authorizes({"annotations": {"kargo.akuity.io/authorized-stage": "other:dev"}}, "acme", "dev")
	not apps.authorizes({"annotations": {"kargo.akuity.io/authorized-stage": "acme:*"}}, "acme", "dev")
	not apps.authorizes({"annotations": {"kargo.akuity.io/authorized-stage": "*:*"}}, "acme", "dev")
}

# The annotation as each Kargo version reads it: a list from v1.11; one
# "project:stage", compared as written, from v0.9 to v1.10; globs up to v0.8.
annotated(value) := {"annotations": {"kargo.akuity.io/authorized-stage": value}}

on(v) := {"kargo_version": v}

test_authorized_stage_by_version if {
	apps.authorizes(annotated("acme:qa, acme:dev"), "acme", "dev") with data.lib.flipflop.config.settings as on("v1.11.0")
	not apps.authorizes(annotated("acme:qa, acme:dev"), "acme", "dev") with data.lib.flipflop.config.settings as on("v1.10.9")
	not apps.authorizes(annotated("acme:qa,acme:dev"), "acme", "qa") with data.lib.flipflop.config.settings as on("v1.10.9")
	apps.authorizes(annotated("acme:dev"), "acme", "dev") with data.lib.flipflop.config.settings as on("v1.10.9")

	# v1.10 compares what it splits as written: no trimming
	apps.authorizes(annotated(" acme : dev "), "acme", "dev") with data.lib.flipflop.config.settings as on("v1.11.2")
	not apps.authorizes(annotated(" acme:dev"), "acme", "dev") with data.lib.flipflop.config.settings as on("v1.10.9")

	# globs: rejected from v0.9, matched up to v0.8 (gobwas globs, no separator)
	not apps.authorizes(annotated("acme:*"), "acme", "dev") with data.lib.flipflop.config.settings as on("v0.9.0")
	apps.authorizes(annotated("acme:*"), "acme", "dev") with data.lib.flipflop.config.settings as on("v0.8.4")
	apps.authorizes(annotated("*:*"), "acme", "dev") with data.lib.flipflop.config.settings as on("v0.8.4")
	apps.authorizes(annotated("acme:d?v"), "acme", "dev") with data.lib.flipflop.config.settings as on("v0.8.4")
	not apps.authorizes(annotated("acme:q*"), "acme", "dev") with data.lib.flipflop.config.settings as on("v0.8.4")
	not apps.authorizes(annotated("acme"), "acme", "dev") with data.lib.flipflop.config.settings as on("v0.8.4")
}

test_authorized_stage_errors_by_version if {
	apps.auth_error(annotated("acme:*")) == `invalid authorized Stage "acme:*": deprecated glob expressions are no longer supported`
	apps.auth_error(annotated("acme:*")) == `deprecated glob expression in annotation "kargo.akuity.io/authorized-stage" ("acme:*")` with data.lib.flipflop.config.settings as on("v1.10.0")
	apps.auth_error(annotated("acme")) == `unable to parse value of annotation "kargo.akuity.io/authorized-stage" ("acme")` with data.lib.flipflop.config.settings as on("v1.10.0")
	apps.auth_error(annotated("acme:")) == "" with data.lib.flipflop.config.settings as on("v1.10.0")
	apps.auth_error(annotated("acme:")) == `invalid authorized Stage "acme:": expected format "<project>:<stage>"`
	apps.auth_error(annotated("acme:*")) == "" with data.lib.flipflop.config.settings as on("v0.8.0")
}

# ---------------------------------------------------------------------------
# Label selectors

labels := {"env": "dev", "team": "web", "tier": ""}

test_match_labels if {
	apps.selector_matches({"matchLabels": {"env": "dev"}}, labels)
	apps.selector_matches({"matchLabels": {"env": "dev", "team": "web"}}, labels)
	apps.selector_matches({}, labels)
	not apps.selector_matches({"matchLabels": {"env": "qa"}}, labels)
	not apps.selector_matches({"matchLabels": {"env": "dev", "team": "api"}}, labels)
	not apps.selector_matches({"matchLabels": {"region": "eu"}}, labels)
}

expression(key, op, values) := {"matchExpressions": [{"key": key, "operator": op, "values": values}]}

test_match_expression_in if {
	apps.selector_matches(expression("env", "In", ["dev", "qa"]), labels)
	not apps.selector_matches(expression("env", "In", ["qa", "prod"]), labels)
	not apps.selector_matches(expression("region", "In", ["eu"]), labels)
}

test_match_expression_not_in if {
	apps.selector_matches(expression("env", "NotIn", ["qa", "prod"]), labels)
	not apps.selector_matches(expression("env", "NotIn", ["dev"]), labels)
	not apps.selector_matches(expression("env", "NotIn", ["qa", "dev"]), labels)
}

# Kubernetes label selectors (which Kargo's apps[].selector is): NotIn also
# matches objects that lack the label. The model's `not labels[e.key] in ...`
# is undefined when the label is missing.
test_match_expression_not_in_matches_missing_label if {
	apps.selector_matches(expression("region", "NotIn", ["eu"]), labels)
}

test_match_expression_exists if {
	apps.selector_matches({"matchExpressions": [{"key": "team", "operator": "Exists"}]}, labels)
	apps.selector_matches({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, labels)
	not apps.selector_matches({"matchExpressions": [{"key": "region", "operator": "Exists"}]}, labels)
}

test_match_expression_does_not_exist if {
	apps.selector_matches({"matchExpressions": [{"key": "region", "operator": "DoesNotExist"}]}, labels)
	not apps.selector_matches({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}, labels)
	not apps.selector_matches({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, labels)
}

test_match_labels_and_expressions_all_hold if {
	sel := {"matchLabels": {"team": "web"}, "matchExpressions": [
		{"key": "env", "operator": "In", "values": ["dev"]},
		{"key": "region", "operator": "DoesNotExist"},
	]}
	apps.selector_matches(sel, labels)
	not apps.selector_matches(object.union(sel, {"matchLabels": {"team": "api"}}), labels)
	not apps.selector_matches({"matchExpressions": [sel.matchExpressions[0], {"key": "env", "operator": "Bogus"}]}, labels)
}

test_application_namespace_of if {
	application.namespace_of({"metadata": {"namespace": "x"}}) == "x"
	application.namespace_of({"metadata": {}}) == "argocd"
}
