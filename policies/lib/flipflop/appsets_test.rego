package lib.flipflop.appsets_test

import data.lib.flipflop.apps
import data.lib.flipflop.appsets
import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model

envs := [{"env": "dev", "values": {"branch": "env/dev"}}, {"env": "qa", "values": {"branch": "env/qa"}}]

elements_of(elements) := {"list": {"elements": elements}}

go_template := {
	"metadata": {
		"name": "guestbook-{{.env}}",
		"namespace": "elsewhere",
		"labels": {"env": "{{.env}}"},
		"annotations": {"kargo.akuity.io/authorized-stage": "acme:{{ .env }}"},
	},
	"spec": {
		"source": {"repoURL": f.repo, "targetRevision": "{{.values.branch}}", "path": "envs/{{ .env }}"},
		"syncPolicy": {"automated": {}},
	},
}

fast_template := {
	"metadata": {
		"name": "guestbook-{{env}}",
		"namespace": "elsewhere",
		"labels": {"env": "{{env}}"},
		"annotations": {"kargo.akuity.io/authorized-stage": "acme:{{ env }}"},
	},
	"spec": {
		"source": {"repoURL": f.repo, "targetRevision": "{{values.branch}}", "path": "envs/{{ env }}"},
		"syncPolicy": {"automated": {}},
	},
}

go_set(generators, template) := f.application_set("apps", "guestbook", {"goTemplate": true, "generators": generators, "template": template})

fast_set(generators, template) := f.application_set("apps", "guestbook", {"generators": generators, "template": template})

# Views of appsets.generated, read under `with input as ...` in the tests.

names := [a.name | some a in appsets.generated]

revisions := [a.sources[0].raw_revision | some a in appsets.generated]

namespaces := {a.namespace | some a in appsets.generated}

summary(records) := [[a.key, a.labels, a.annotations, [[s.repo_url, s.raw_revision] | some s in a.sources]] | some a in records]

expected_envs := [
	["apps/guestbook-dev", {"env": "dev"}, {"kargo.akuity.io/authorized-stage": "acme:dev"}, [[f.repo, "env/dev"]]],
	["apps/guestbook-qa", {"env": "qa"}, {"kargo.akuity.io/authorized-stage": "acme:qa"}, [[f.repo, "env/qa"]]],
]

# ---------------------------------------------------------------------------
# list generators

test_list_go_template if {
	records := appsets.generated with input as f.estate([go_set([elements_of(envs)], go_template)])
	summary(records) == expected_envs
	[[a.namespace, a.name, a.appset, a.auto_sync, a.metadata_known, a.name_known, a.generator_params_known] | some a in records] == [
		["apps", "guestbook-dev", "guestbook", true, true, true, true],
		["apps", "guestbook-qa", "guestbook", true, true, true, true],
	]
	records[0].ref == {
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "namespace": "apps", "name": "guestbook-dev",
		"file": "test.yaml", "line": 0, "generatedBy": "ApplicationSet apps/guestbook",
	}
}

test_list_fasttemplate if {
	records := appsets.generated with input as f.estate([fast_set([elements_of(envs)], fast_template)])
	summary(records) == expected_envs
}

test_go_syntax_is_not_fasttemplate if {
	# Without goTemplate, "{{.env}}" names no parameter and stays as it is.
	records := appsets.generated with input as f.estate([fast_set([elements_of(envs)], go_template)])
	[a.name | some a in records] == ["guestbook-{{.env}}", "guestbook-{{.env}}"]
	records[0].sources[0].raw_revision == "{{.values.branch}}"
}

test_missing_keys if {
	fast := appsets.generated with input as f.estate([fast_set([elements_of([{"env": "dev"}])], json.patch(fast_template, [{"op": "replace", "path": "/metadata/name", "value": "app-{{ nope }}"}]))])
	[a.name | some a in fast] == ["app-{{nope}}"]
	go := appsets.generated with input as f.estate([go_set([elements_of([{"env": "dev"}])], json.patch(go_template, [{"op": "replace", "path": "/metadata/name", "value": "app-{{ .nope }}"}]))])
	[a.name | some a in go] == ["app-<no value>"]
}

test_non_string_parameters if {
	template := json.patch(go_template, [{"op": "replace", "path": "/metadata/name", "value": "app-{{.env}}-{{.n}}-{{.on}}"}])
	records := appsets.generated with input as f.estate([go_set([elements_of([{"env": "dev", "n": 3, "on": true}])], template)])
	[a.name | some a in records] == ["app-dev-3-true"]
}

test_namespace_is_the_application_sets if {
	records := appsets.generated with input as f.estate([go_set([elements_of(envs)], go_template)])
	{a.namespace | some a in records} == {"apps"}
	unnamespaced := json.remove(go_set([elements_of(envs)], go_template), ["metadata/namespace"])
	namespaces == {"argocd"} with input as f.estate([unnamespaced])
	namespaces == {"gitops"} with input as f.estate([unnamespaced]) with data.lib.flipflop.config.settings as {"argocd_namespace": "gitops"}
}

test_empty_list_generates_nothing if {
	appsets.generated == [] with input as f.estate([go_set([elements_of([])], go_template)])
	appsets.generated == [] with input as f.estate([go_set([], go_template)])
}

test_two_generators_add_up if {
	records := appsets.generated with input as f.estate([go_set([elements_of([envs[0]]), elements_of([envs[1]])], go_template)])
	[a.name | some a in records] == ["guestbook-dev", "guestbook-qa"]
}

# ---------------------------------------------------------------------------
# a generator's own template (spec.generators[].<kind>.template)

# own_source is a generator template that moves every Application to branch env/own.
own_source := {"spec": {"source": {"repoURL": f.repo, "targetRevision": "env/own", "path": "envs/{{.env}}"}}}

test_list_template_is_merged_over_spec_template if {
	records := appsets.generated with input as f.estate([go_set([{"list": {"elements": envs, "template": own_source}}], go_template)])
	[[a.name, a.sources[0].raw_revision, a.generator.template_path] | some a in records] == [
		["guestbook-dev", "env/own", "/spec/generators/0/list/template"],
		["guestbook-qa", "env/own", "/spec/generators/0/list/template"],
	]

	# spec.template's metadata is kept where the generator's template has none
	[a.labels | some a in records] == [{"env": "dev"}, {"env": "qa"}]
}

test_template_beside_the_generator_kind_is_no_template if {
	# Argo CD has no spec.generators[].template: the field is not read.
	records := appsets.generated with input as f.estate([go_set([{"list": {"elements": envs}, "template": own_source}], go_template)])
	[[a.sources[0].raw_revision, a.generator.template_path] | some a in records] == [
		["env/dev", "/spec/template"],
		["env/qa", "/spec/template"],
	]
}

test_matrix_template_applies_and_child_templates_are_ignored if {
	matrix := {"matrix": {
		"generators": [
			{"list": {"elements": [{"env": "dev"}], "template": {"spec": {"source": {"targetRevision": "env/child"}}}}},
			elements_of([{"region": "eu"}]),
		],
		"template": own_source,
	}}
	records := appsets.generated with input as f.estate([go_set([matrix], go_template)])
	[[a.sources[0].raw_revision, a.generator.template_path] | some a in records] == [["env/own", "/spec/generators/0/matrix/template"]]
}

test_expanded_git_generator_template_path_names_git if {
	expanded := {"x-flipflop-expanded-from": "git", "list": {"elements": [{"env": "dev"}], "template": own_source}}
	records := appsets.generated with input as f.estate([go_set([expanded], go_template)])
	[[a.sources[0].raw_revision, a.generator.template_path, a.generator.elements[0].generator] | some a in records] == [["env/own", "/spec/generators/0/git/template", "git"]]
}

# ---------------------------------------------------------------------------
# matrix and merge

test_matrix_of_two_lists if {
	matrix := {"matrix": {"generators": [
		elements_of([{"env": "dev"}, {"env": "qa"}]),
		elements_of([{"region": "eu"}, {"region": "us"}]),
	]}}
	template := json.patch(go_template, [{"op": "replace", "path": "/metadata/name", "value": "{{.env}}-{{.region}}"}])
	names == ["dev-eu", "dev-us", "qa-eu", "qa-us"] with input as f.estate([go_set([matrix], template)])
}

test_matrix_with_one_child_generates_nothing_known if {
	matrix := {"matrix": {"generators": [elements_of([{"env": "dev"}])]}}
	records := appsets.generated with input as f.estate([go_set([matrix], go_template)])
	[a.generator_params_known | some a in records] == [false]
}

# A matrix child's selector filters its parameter sets before they are
# combined; a selector two levels down only with spec.applyNestedSelectors.
test_matrix_child_selector_filters if {
	matrix := {"matrix": {"generators": [
		{"list": {"elements": [{"env": "dev"}, {"env": "qa"}]}, "selector": {"matchLabels": {"env": "qa"}}},
		elements_of([{"region": "eu"}]),
	]}}
	template := json.patch(go_template, [{"op": "replace", "path": "/metadata/name", "value": "{{.env}}-{{.region}}"}])
	names == ["qa-eu"] with input as f.estate([go_set([matrix], template)])
}

nested_matrix := {"matrix": {"generators": [
	{"matrix": {"generators": [
		{"list": {"elements": [{"env": "dev"}, {"env": "qa"}]}, "selector": {"matchLabels": {"env": "dev"}}},
		elements_of([{"tier": "web"}]),
	]}},
	elements_of([{"region": "eu"}]),
]}}

nested_template := json.patch(go_template, [{"op": "replace", "path": "/metadata/name", "value": "{{.env}}-{{.tier}}-{{.region}}"}])

test_nested_selector_needs_apply_nested_selectors if {
	names == ["dev-web-eu", "qa-web-eu"] with input as f.estate([go_set([nested_matrix], nested_template)])
	applied := f.application_set("apps", "guestbook", {"goTemplate": true, "applyNestedSelectors": true, "generators": [nested_matrix], "template": nested_template})
	names == ["dev-web-eu"] with input as f.estate([applied])
}

test_merge_child_selector_filters if {
	merge := {"merge": {"mergeKeys": ["env"], "generators": [
		elements_of([{"env": "dev", "values": {"branch": "main"}}, {"env": "qa", "values": {"branch": "main"}}]),
		{"list": {"elements": [{"env": "qa", "values": {"branch": "env/qa"}}]}, "selector": {"matchLabels": {"env": "dev"}}},
	]}}
	records := appsets.generated with input as f.estate([go_set([merge], go_template)])
	[[a.name, a.sources[0].raw_revision] | some a in records] == [["guestbook-dev", "main"], ["guestbook-qa", "main"]]
}

merge_set(keys, overlay) := go_set(
	[{"merge": {"mergeKeys": keys, "generators": [
		elements_of([{"env": "dev", "values": {"branch": "main"}}, {"env": "qa", "values": {"branch": "main"}}]),
		elements_of(overlay),
	]}}],
	go_template,
)

test_merge_of_lists_on_merge_keys if {
	records := appsets.generated with input as f.estate([merge_set(["env"], [{"env": "qa", "values": {"branch": "env/qa"}}, {"env": "prod", "values": {"branch": "env/prod"}}])])
	[[a.name, a.sources[0].raw_revision] | some a in records] == [["guestbook-dev", "main"], ["guestbook-qa", "env/qa"]]
}

test_merge_without_matching_key_keeps_base if {
	records := appsets.generated with input as f.estate([merge_set(["env"], [{"env": "prod", "values": {"branch": "env/prod"}}])])
	[[a.name, a.sources[0].raw_revision] | some a in records] == [["guestbook-dev", "main"], ["guestbook-qa", "main"]]
}

# Argo CD's merge generator (applicationset/generators/merge.go) on input it
# accepts: three generators, two merge keys (one absent from some sets: null),
# each base set overlaid by the one set of each other generator that agrees
# with it on both keys, the later generator winning and objects merged deeply
# (goTemplate: mergo.Merge); a set no base agrees with is dropped. The result,
# provenance included, is what flipflop built before its merge was made linear
# (this test passes on both).
test_merge_matches_argo_cd_on_unique_keys if {
	merge := {"merge": {"mergeKeys": ["env", "region", "env"], "generators": [
		elements_of([
			{"env": "dev", "region": "eu", "values": {"branch": "main"}},
			{"env": "dev", "region": "us", "values": {"branch": "main"}},
			{"env": "qa", "values": {"branch": "main"}},
		]),
		elements_of([
			{"env": "dev", "region": "us", "values": {"branch": "env/dev-us"}},
			{"env": "qa", "values": {"branch": "env/qa"}, "tier": "web"},
			{"env": "prod", "values": {"branch": "env/prod"}},
		]),
		elements_of([
			{"env": "qa", "region": null, "values": {"branch": "env/qa-final"}},
			{"env": "dev", "region": "eu", "values": {"extra": "x"}},
		]),
	]}}
	template := json.patch(go_template, [
		{"op": "replace", "path": "/metadata/name", "value": "{{.env}}-{{.region}}-{{.tier}}-{{.values.extra}}"},
	])
	records := appsets.generated with input as f.estate([go_set([merge], template)])
	[[a.name, a.sources[0].raw_revision, [e.path | some e in a.generator.elements]] | some a in records] == [
		["dev-eu-<no value>-x", "main", ["/spec/generators/0/merge/generators/0/list/elements/0", "/spec/generators/0/merge/generators/2/list/elements/1"]],
		["dev-us-<no value>-<no value>", "env/dev-us", ["/spec/generators/0/merge/generators/0/list/elements/1", "/spec/generators/0/merge/generators/1/list/elements/0"]],
		["qa-<no value>-web-<no value>", "env/qa-final", [
			"/spec/generators/0/merge/generators/0/list/elements/2",
			"/spec/generators/0/merge/generators/1/list/elements/1",
			"/spec/generators/0/merge/generators/2/list/elements/0",
		]],
	]
}

# Argo CD fails a merge whose generators, base or not, hold two sets with the
# same merge-key values, or that names no merge key (merge.go:
# ErrNonUniqueParamSets, ErrNoMergeKeys): the ApplicationSet then generates
# nothing Argo CD applies, so its Applications are unknown. A child's selector
# filters its sets before they are keyed, as in Argo CD.
test_merge_that_argo_cd_rejects_is_unknown if {
	twice := [{"env": "qa", "values": {"branch": "env/qa"}}, {"env": "qa", "values": {"branch": "env/qa2"}}]
	[a.generator_params_known | some a in appsets.generated] == [false] with input as f.estate([merge_set(["env"], twice)])
	[a.generator_params_known | some a in appsets.generated] == [false] with input as f.estate([merge_set([], [{"env": "qa"}])])
	base_twice := go_set([{"merge": {"mergeKeys": ["env"], "generators": [elements_of([{"env": "dev"}, {"env": "dev"}]), elements_of([{"env": "dev"}])]}}], go_template)
	[a.generator_params_known | some a in appsets.generated] == [false] with input as f.estate([base_twice])
	selected := go_set(
		[{"merge": {"mergeKeys": ["env"], "generators": [
			elements_of(envs),
			{"list": {"elements": [{"env": "qa", "values": {"branch": "env/qa1"}, "keep": "yes"}, {"env": "qa", "values": {"branch": "env/qa2"}}]}, "selector": {"matchLabels": {"keep": "yes"}}},
		]}}],
		go_template,
	)
	revisions == ["env/dev", "env/qa1"] with input as f.estate([selected])
}

# ---------------------------------------------------------------------------
# templatePatch

test_static_template_patch_is_merged if {
	spec := {
		"goTemplate": true,
		"generators": [elements_of(envs)],
		"template": json.remove(go_template, ["spec/syncPolicy", "metadata/annotations"]),
		"templatePatch": "metadata:\n  annotations:\n    kargo.akuity.io/authorized-stage: acme:{{ .env }}\nspec:\n  syncPolicy:\n    automated: {}\n",
	}
	records := appsets.generated with input as f.estate([f.application_set("apps", "guestbook", spec)])
	summary(records) == expected_envs
	[[a.auto_sync, a.metadata_known] | some a in records] == [[true, true], [true, true]]
}

test_template_patch_can_turn_auto_sync_off if {
	spec := {
		"goTemplate": true,
		"generators": [elements_of(envs)],
		"template": go_template,
		"templatePatch": "spec:\n  syncPolicy:\n    automated: null\n",
	}
	records := appsets.generated with input as f.estate([f.application_set("apps", "guestbook", spec)])
	[a.auto_sync | some a in records] == [false, false]
}

test_template_patch_with_actions_is_unknown if {
	spec := {
		"goTemplate": true,
		"generators": [elements_of(envs)],
		"template": go_template,
		"templatePatch": "{{- if .autoSync }}\nspec:\n  syncPolicy:\n    automated: {}\n{{- end }}\n",
	}
	records := appsets.generated with input as f.estate([f.application_set("apps", "guestbook", spec)])
	[[a.name, a.auto_sync, a.metadata_known] | some a in records] == [["guestbook-dev", "unknown", false], ["guestbook-qa", "unknown", false]]
}

# ---------------------------------------------------------------------------
# generators the model cannot enumerate

git_set := go_set(
	[{"git": {"repoURL": f.repo, "revision": "HEAD", "directories": [{"path": "envs/*"}]}}],
	json.patch(go_template, [
		{"op": "replace", "path": "/metadata/name", "value": "guestbook-{{.path.basename}}"},
		{"op": "replace", "path": "/metadata/annotations", "value": {"kargo.akuity.io/authorized-stage": "acme:dev"}},
		{"op": "replace", "path": "/spec/source", "value": {"repoURL": f.repo, "targetRevision": "HEAD", "path": "{{.path.path}}"}},
	]),
)

test_git_generator_gives_one_pattern if {
	records := appsets.generated with input as f.estate([git_set])
	count(records) == 1
	a := records[0]
	a.name_pattern == "guestbook-*"
	a.name_known == false
	a.generator_params_known == false
	a.namespace == "apps"
	[[s.repo_id, s.rev] | some s in a.sources] == [["github.com/acme/deploy", {"kind": "default", "name": "HEAD"}]]
	[p.name_pattern | some p in apps.patterns] == ["guestbook-*"] with input as f.estate([git_set])
}

test_list_generator_gives_no_pattern if {
	apps.patterns == [] with input as f.estate([go_set([elements_of(envs)], go_template)])
}

target_rows := [[t.via, t.app.key, t.app.name, t.app.ref.name, t.authorized] | some u in model.updates; some t in u.targets]

update_stage(name) := f.template_stage("dev", [], [], [f.update([{"name": name, "namespace": "apps", "sources": [f.pin_url(f.repo)]}])])

test_update_resolves_to_a_pattern if {
	estate := f.estate([git_set, update_stage("guestbook-dev")])
	target_rows == [["pattern", "apps/guestbook-dev", "guestbook-dev", "guestbook-dev", true]] with input as estate
	pins := [[p.app.key, p.pointer.key, p.exact] | some p in model.pins] with input as estate
	pins == [["apps/guestbook-dev", "github.com/acme/deploy@HEAD", false]]
}

test_update_outside_the_pattern_resolves_to_nothing if {
	estate := f.estate([git_set, update_stage("other-dev")])
	target_rows == [] with input as estate
	count(model.updates) == 1 with input as estate
	model.pins == [] with input as estate
}

# A git-generated name may hold a dot (path.basename "eu.west"); glob.match with
# delimiters [] treats "." as a separator, so "*" stops at it.
test_pattern_matches_names_with_dots if {
	estate := f.estate([git_set, update_stage("guestbook-eu.west")])

	# regal ignore:with-outside-test-context
	target_rows == [["pattern", "apps/guestbook-eu.west", "guestbook-eu.west", "guestbook-eu.west", true]] with input as estate
}

test_matrix_of_clusters_and_list if {
	matrix := {"matrix": {"generators": [{"clusters": {}}, elements_of([{"env": "dev"}, {"env": "qa"}])]}}
	template := json.patch(go_template, [
		{"op": "replace", "path": "/metadata/name", "value": "{{.name}}-{{.env}}"},
		{"op": "replace", "path": "/spec/source/targetRevision", "value": "env/{{.env}}"},
	])
	records := appsets.generated with input as f.estate([go_set([matrix], template)])
	[[a.name_pattern, a.name_known, a.generator_params_known, a.sources[0].raw_revision, a.labels] | some a in records] == [
		["*-dev", false, false, "env/dev", {"env": "dev"}],
		["*-qa", false, false, "env/qa", {"env": "qa"}],
	]
	records[0].name == concat("", [appsets.unknown, "-dev"])
}

test_matrix_of_clusters_and_list_fasttemplate if {
	matrix := {"matrix": {"generators": [{"clusters": {}}, elements_of([{"env": "dev"}])]}}
	template := json.patch(fast_template, [
		{"op": "replace", "path": "/metadata/name", "value": "{{name}}-{{env}}"},
		{"op": "replace", "path": "/spec/source/targetRevision", "value": "env/{{env}}"},
	])
	records := appsets.generated with input as f.estate([fast_set([matrix], template)])
	[[a.name_pattern, a.sources[0].raw_revision] | some a in records] == [["*-dev", "env/dev"]]
}

test_unknown_parameter_in_revision_is_unknown if {
	template := json.patch(go_template, [{"op": "replace", "path": "/spec/source/targetRevision", "value": "{{.branch}}"}])
	records := appsets.generated with input as f.estate([go_set([{"clusters": {}}], template)])
	[s.rev.kind | some a in records; some s in a.sources] == ["unknown"]
}

# Argo CD merges a generator's own `template` (list.template) over spec.template (argocd.md §3).
test_generator_template_overrides_spec_template if {
	gen := {"list": {"elements": [{"env": "dev"}], "template": {"spec": {"source": {"targetRevision": "env/override"}}}}}

	# regal ignore:with-outside-test-context
	revisions == ["env/override"] with input as f.estate([go_set([gen], go_template)])
}

# ---------------------------------------------------------------------------
# Generated Applications through the model

pin_rows := [[p.stage.key, p.app.key, p.pointer.key, p.exact] | some p in model.pins]

# pinning_stage: Stage name pinning f.repo on the Application entry selects.
pinning_stage(name, entry) := f.template_stage(name, [], [], [
	f.clone(f.repo, [f.checkout("./repo", "main")]),
	f.push("push", "./repo", {}),
	f.update([object.union(entry, {"sources": [f.pin_url(f.repo)]})]),
])

test_generated_application_is_pinned if {
	set := f.application_set("argocd", "envs", {
		"goTemplate": true,
		"generators": [elements_of([{"env": "dev"}, {"env": "qa"}])],
		"template": {
			"metadata": {"name": "app-{{.env}}", "annotations": {"kargo.akuity.io/authorized-stage": "acme:{{.env}}"}},
			"spec": {"source": {"repoURL": f.repo, "targetRevision": "main"}},
		},
	})
	estate := f.estate([set, pinning_stage("dev", {"name": "app-${{ ctx.stage }}"}), pinning_stage("qa", {"name": "app-${{ ctx.stage }}"})])
	pin_rows == [
		["acme/dev", "argocd/app-dev", "github.com/acme/deploy@main", true],
		["acme/qa", "argocd/app-qa", "github.com/acme/deploy@main", true],
	] with input as estate
	target_rows == [["name", "argocd/app-dev", "app-dev", "app-dev", true], ["name", "argocd/app-qa", "app-qa", "app-qa", true]] with input as estate
}

test_templated_patch_makes_authorization_unknown if {
	set := f.application_set("argocd", "envs", {
		"goTemplate": true,
		"generators": [elements_of([{"env": "dev"}])],
		"template": {"metadata": {"name": "app-{{.env}}", "labels": {"env": "{{.env}}"}}, "spec": {"source": {"repoURL": f.repo, "targetRevision": "main"}}},
		"templatePatch": "{{ if .x }}metadata: {annotations: {a: b}}{{ end }}",
	})
	estate := f.estate([set, pinning_stage("dev", {"selector": {"matchLabels": {"env": "dev"}}})])
	target_rows == [["selector", "argocd/app-dev", "app-dev", "app-dev", "unknown"]] with input as estate
	pin_rows == [["acme/dev", "argocd/app-dev", "github.com/acme/deploy@main", false]] with input as estate
}

test_static_annotation_authorizes_a_selector_match if {
	set := f.application_set("argocd", "envs", {
		"goTemplate": true,
		"generators": [elements_of([{"env": "dev"}, {"env": "qa"}])],
		"template": {
			"metadata": {"name": "app-{{.env}}", "labels": {"env": "{{.env}}"}, "annotations": {"kargo.akuity.io/authorized-stage": "acme:{{.env}}"}},
			"spec": {"source": {"repoURL": f.repo, "targetRevision": "main"}},
		},
	})
	estate := f.estate([set, pinning_stage("dev", {"selector": {"matchExpressions": [{"key": "env", "operator": "Exists"}]}})])
	target_rows == [["selector", "argocd/app-dev", "app-dev", "app-dev", true], ["selector", "argocd/app-qa", "app-qa", "app-qa", false]] with input as estate
	pin_rows == [["acme/dev", "argocd/app-dev", "github.com/acme/deploy@main", false]] with input as estate
}

test_unknown_annotation_of_a_pattern_is_unknown_authorization if {
	set := json.patch(git_set, [{"op": "replace", "path": "/spec/template/metadata/annotations", "value": {"kargo.akuity.io/authorized-stage": "acme:{{.path.basename}}"}}])
	estate := f.estate([set, update_stage("guestbook-dev")])
	target_rows == [["pattern", "apps/guestbook-dev", "guestbook-dev", "guestbook-dev", "unknown"]] with input as estate
	count(model.pins) == 1 with input as estate
}

selected_set := {
	"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
	"metadata": {"name": "sel", "namespace": "argocd"},
	"spec": {
		"generators": [{
			"list": {"elements": [{"env": "dev", "tier": "low"}, {"env": "prod", "tier": "high"}]},
			"selector": {"matchLabels": {"tier": "low"}},
		}],
		"template": {"metadata": {"name": "app-{{env}}"}, "spec": {"source": {"repoURL": "https://git.example.com/a.git", "targetRevision": "main"}}},
	},
}

test_generator_selector_filters_parameters if {
	names := {a.name | some a in appsets.generated} with input as [{"path": "s.yaml", "contents": selected_set}]
	names == {"app-dev"}
}

# A name is matched against the patterns through each of its prefixes and
# suffixes, work that grows with the square of its length: a name longer than
# Kubernetes allows names no Application, and no pattern is tried (issue 39:
# a Stage naming a 100 KB Application must not cost more than linear).
test_overlong_name_tries_no_pattern if {
	short := "guestbook-dev"
	long := concat("", ["guestbook-", concat("", [x | some _ in numbers.range(1, 244); x := "a"])])
	count(long) == 254
	[p.name_pattern | some p in apps.matching_patterns(short, [])] == ["guestbook-*"] with input as f.estate([git_set])
	count(apps.pattern_candidates(long, [])) == 0 with input as f.estate([git_set])
	apps.matching_patterns(long, []) == [] with input as f.estate([git_set])
}
