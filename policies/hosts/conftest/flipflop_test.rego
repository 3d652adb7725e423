package flipflop_test

import data.flipflop
import data.lib.flipflop.fixtures as f
import data.main as conftest_main

estate := [
	{"path": "argocd.yaml", "line": 3, "contents": f.app("dev", "main")},
	{"path": "argocd.yaml", "line": 20, "contents": f.app("qa", "main")},
	{"path": "kargo.yaml", "contents": f.stage("dev", "main", [f.pin("dev")])},
	{"path": "kargo.yaml", "contents": f.stage("qa", "main", [f.pin("qa")])},
	{"path": "kargo.yaml", "contents": null},
]

test_deny_carries_metadata_and_location if {
	denies := flipflop.deny with input as estate
	count(denies) == 1
	some d in denies
	startswith(d.msg, "[shared-branch-contradiction] ")
	d.rule == "shared-branch-contradiction"
	d.severity == "error"
	d.remediation != ""
	d._loc == {"file": "argocd.yaml", "line": 3}
}

test_location_without_lines_is_the_file if {
	no_lines := [{"path": e.path, "contents": e.contents} | some e in estate]
	some d in flipflop.deny with input as no_lines
	d._loc == {"file": "kargo.yaml", "line": 1}
}

test_a_document_checked_alone_is_a_warning if {
	warns := flipflop.warn with input as f.stage("dev", "main", [f.pin("dev")])
	{w.rule | some w in warns} == {"not-combined"}
	count(flipflop.deny) == 0 with input as f.stage("dev", "main", [f.pin("dev")])
}

test_warn_for_warnings if {
	warns := flipflop.warn with input as estate
	{w.rule | some w in warns} == {"shared-write-branch"}
}

test_settings_from_data if {
	head := [
		{"path": "a.yaml", "contents": f.app("dev", "HEAD")},
		{"path": "a.yaml", "contents": f.app("qa", "main")},
		{"path": "k.yaml", "contents": f.stage("dev", "main", [f.pin("dev")])},
		{"path": "k.yaml", "contents": f.stage("qa", "main", [f.pin("qa")])},
	]
	"shared-branch-contradiction" in {d.rule | some d in flipflop.deny} with input as head
	not "shared-branch-contradiction" in {d.rule | some d in flipflop.deny} with input as head with data.flipflop_settings as {"default_branch": "trunk"}
}

test_list_documents_are_expanded if {
	list := {"apiVersion": "v1", "kind": "List", "items": [f.app("dev", "main"), f.app("qa", "main")]}
	listed := [
		{"path": "apps.yaml", "contents": list},
		{"path": "k.yaml", "contents": f.stage("dev", "main", [f.pin("dev")])},
		{"path": "k.yaml", "contents": f.stage("qa", "main", [f.pin("qa")])},
	]
	count(flipflop.deny) == 1 with input as listed
}

# conftest's default namespace (package main) reports what package flipflop
# reports, each result once: errors, warnings, and the not-combined warning.
test_default_namespace_hands_on_every_result if {
	denies := conftest_main.deny with input as estate
	denies == flipflop.deny with input as estate
	count(denies) == 1
	warns := conftest_main.warn with input as estate
	warns == flipflop.warn with input as estate
	count(warns) > 0
	lone := f.stage("dev", "main", [f.pin("dev")])
	{w.rule | some w in conftest_main.warn} == {"not-combined"} with input as lone
	count(conftest_main.deny) == 0 with input as lone
}
