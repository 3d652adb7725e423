package lib.flipflop.waivers_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.waivers

annotate(obj, anns) := object.union(obj, {"metadata": {"annotations": anns}})

# res names an object of the test estate as findings do (fixtures put every
# object in test.yaml).
res(kind, ns, name) := {"kind": kind, "namespace": ns, "name": name, "file": "test.yaml"}

finding(rule, kind, ns, name) := {"rule": rule, "resources": [res(kind, ns, name)]}

stage_dev := f.stage("dev", "main", [])

test_annotation_waives_named_rule if {
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch, foreign-branch-writer: monorepo by design"})])
	marked := waivers.apply({finding("shared-write-branch", "Stage", "acme", "dev")}) with input as estate
	some m in marked
	m.waived.reason == "monorepo by design"
	m.waived.by == "annotation flipflop.dev/ignore on Stage/acme/dev"
}

test_annotation_leaves_other_rules if {
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch: by design"})])
	marked := waivers.apply({finding("shared-branch-contradiction", "Stage", "acme", "dev")}) with input as estate
	some m in marked
	not m.waived
}

# "*" (or any glob) in an annotation waives nothing and is reported.
test_wildcard_refused_in_annotation if {
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch, *: trust me"})])
	some m in waivers.apply({finding("shared-application", "Stage", "acme", "dev")}) with input as estate
	not m.waived
	some w in waivers.every_waiver with input as estate
	not waivers.valid(w)
	w.invalid == `"*" is refused in an annotation: name the rules it waives`
}

# a finding about two Kargo projects' Stages and their Applications.
two_projects := {
	"rule": "shared-branch-contradiction",
	"resources": [
		res("Stage", "acme", "dev"),
		res("Stage", "shop", "qa"),
		res("Application", "argocd", "dev"),
		res("Application", "argocd", "qa"),
	],
}

shop_qa := object.union(f.stage("qa", "main", []), {"metadata": {"namespace": "shop"}})

ignore_contradiction(reason, expires) := {"flipflop.dev/ignore": sprintf("shared-branch-contradiction: %s", [reason]), "flipflop.dev/ignore-expires": expires}

# One project's annotation cannot waive a finding that involves another's Stage.
test_annotation_speaks_for_its_project_only if {
	estate := f.estate([annotate(stage_dev, ignore_contradiction("mine", "")), shop_qa, f.app("dev", "main"), f.app("qa", "main")])
	some m in waivers.apply({two_projects}) with input as estate
	not m.waived
}

# An Application's annotation does not waive a finding about Stages.
test_application_annotation_cannot_waive_stages if {
	app := annotate(f.app("dev", "main"), ignore_contradiction("apps team says so", ""))
	estate := f.estate([app, stage_dev, shop_qa])
	some m in waivers.apply({two_projects}) with input as estate
	not m.waived
}

# Every project agreed: waived, with both reasons and the earliest expiry.
test_every_project_agreed if {
	estate := f.estate([
		annotate(stage_dev, ignore_contradiction("acme accepts", "2031-01-31")),
		annotate(shop_qa, ignore_contradiction("shop accepts", "2030-06-30")),
	])
	some m in waivers.apply({two_projects}) with input as estate with data.lib.flipflop.config.settings as {"today": "2026-01-01"}
	m.waived == {
		"reason": "acme accepts; shop accepts",
		"by": "annotation flipflop.dev/ignore on Stage/acme/dev, annotation flipflop.dev/ignore on Stage/shop/qa",
		"expires": "2030-06-30",
	}
}

# Within one project, one Stage's annotation speaks for the project.
test_one_stage_speaks_for_its_project if {
	acme_qa := f.stage("qa", "main", [])
	fnd := {"rule": "shared-write-branch", "resources": [
		res("Stage", "acme", "dev"),
		res("Stage", "acme", "qa"),
	]}
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch: monorepo"}), acme_qa])
	some m in waivers.apply({fnd}) with input as estate
	m.waived.reason == "monorepo"
}

# A finding about Argo CD objects only: each object must carry the waiver.
test_objects_agree_when_no_project if {
	fnd := {"rule": "invalid-object", "resources": [
		res("Application", "argocd", "dev"),
		res("Application", "argocd", "qa"),
	]}
	ann := {"flipflop.dev/ignore": "invalid-object: generated"}
	one := f.estate([annotate(f.app("dev", "main"), ann), f.app("qa", "main")])
	both := f.estate([annotate(f.app("dev", "main"), ann), annotate(f.app("qa", "main"), ann)])
	some m1 in waivers.apply({fnd}) with input as one
	not m1.waived
	some m2 in waivers.apply({fnd}) with input as both
	m2.waived.reason == "generated; generated"
}

# annotation_waivers: false ignores every annotation (and reports none of them).
test_annotations_off if {
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch: x", "flipflop.dev/ignore-expires": "bad"})])
	settings := {"annotation_waivers": false}
	count(waivers.every_waiver) == 0 with input as estate with data.lib.flipflop.config.settings as settings
	some m in waivers.apply({finding("shared-write-branch", "Stage", "acme", "dev")}) with input as estate with data.lib.flipflop.config.settings as settings
	not m.waived
}

# A configured waiver may still use "*": the waivers file is given by whoever runs the check.
test_configured_wildcard_rule if {
	settings := {"waivers": [{"rule": "*", "resources": ["Stage/acme/*"], "reason": "legacy, retiring"}]}
	some m in waivers.apply({finding("shared-application", "Stage", "acme", "dev")}) with input as [] with data.lib.flipflop.config.settings as settings
	m.waived.by == "waiver 1 (*)"
}

test_annotation_without_reason_waives_nothing if {
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch"})])
	some m in waivers.apply({finding("shared-write-branch", "Stage", "acme", "dev")}) with input as estate
	not m.waived
	some w in waivers.every_waiver with input as estate
	not waivers.valid(w)
}

test_expired_annotation_waives_nothing if {
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch: temporary", "flipflop.dev/ignore-expires": "2026-01-31"})])
	fs := {finding("shared-write-branch", "Stage", "acme", "dev")}
	some before in waivers.apply(fs) with input as estate with data.lib.flipflop.config.settings as {"today": "2026-01-30"}
	before.waived.expires == "2026-01-31"
	some after in waivers.apply(fs) with input as estate with data.lib.flipflop.config.settings as {"today": "2026-02-01"}
	not after.waived
}

configured := {"today": "2026-06-01", "waivers": [
	{"rule": "shared-write-branch", "resources": ["Stage/acme/*"], "reason": "one branch per monorepo"},
	{"rule": "unknown-application", "resources": ["Stage/*/*"], "reason": "apps live in another repo", "expires": "2026-01-01"},
	{"rule": "shared-application", "resources": ["Stage/acme/dev"]},
]}

test_configured_waiver_globs if {
	some m in waivers.apply({finding("shared-write-branch", "Stage", "acme", "qa")}) with input as [] with data.lib.flipflop.config.settings as configured
	m.waived.by == "waiver 1 (shared-write-branch)"
	some other in waivers.apply({finding("shared-write-branch", "Stage", "shop", "qa")}) with input as [] with data.lib.flipflop.config.settings as configured
	not other.waived
}

test_configured_expired_and_reasonless_waive_nothing if {
	some a in waivers.apply({finding("unknown-application", "Stage", "acme", "qa")}) with input as [] with data.lib.flipflop.config.settings as configured
	not a.waived
	some b in waivers.apply({finding("shared-application", "Stage", "acme", "dev")}) with input as [] with data.lib.flipflop.config.settings as configured
	not b.waived
}

test_today_defaults_to_the_clock if {
	regex.match(`^\d{4}-\d{2}-\d{2}$`, waivers.today)
}

# An annotation binds to the document that carries it: a document in another
# file with the same kind and name (here without a namespace, so not known to
# be the same object) does not speak for the one the finding was read from.
test_annotation_binds_to_its_document if {
	bare := json.patch(stage_dev, [{"op": "remove", "path": "/metadata/namespace"}])
	copy := annotate(bare, {"flipflop.dev/ignore": "shared-write-branch: not mine to say"})
	estate := [f.entry(bare), {"path": "elsewhere.yaml", "contents": copy}]
	some m in waivers.apply({finding("shared-write-branch", "Stage", "", "dev")}) with input as estate
	not m.waived
	some w in waivers.annotated with input as estate
	w.ref.file == "elsewhere.yaml"
	w.contested == false
	some waived in waivers.apply({{"rule": "shared-write-branch", "resources": [object.union(res("Stage", "", "dev"), {"file": "elsewhere.yaml"})]}}) with input as estate
	waived.waived.reason == "not mine to say"
}

# An object defined by two documents: neither one's annotation waives, even for
# a finding read from the annotated document itself.
test_contested_object_waives_nothing if {
	ann := annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch: ours"})
	alone := [f.entry(ann)]
	twice := [f.entry(ann), {"path": "elsewhere.yaml", "contents": stage_dev}]
	fs := {finding("shared-write-branch", "Stage", "acme", "dev")}
	some waived in waivers.apply(fs) with input as alone
	waived.waived.reason == "ours"
	some m in waivers.apply(fs) with input as twice
	not m.waived
}

# A written Application without metadata.namespace is named in findings with
# the namespace it is taken to live in; its annotation binds to that name.
test_annotation_on_application_without_namespace if {
	app := annotate(json.patch(f.app("dev", "main"), [{"op": "remove", "path": "/metadata/namespace"}]), {"flipflop.dev/ignore": "invalid-object: generated"})
	some m in waivers.apply({finding("invalid-object", "Application", "argocd", "dev")}) with input as [f.entry(app)]
	m.waived.by == "annotation flipflop.dev/ignore on Application/argocd/dev"
}

# An expiry is a date that exists: month 13, day 0, 31 April or 29 February of
# a common year is not one, and the waiver carrying it waives nothing (a
# "2027-13-01" compared as text was later than any date, so it never expired).
test_expiry_is_a_real_date if {
	every d in ["2027-06-30", "2028-02-29", "2000-02-29", "2027-12-31", "0001-01-01"] {
		waivers.well_formed_expiry(d)
	}
	every d in ["2027-13-01", "2027-00-10", "2027-04-31", "2027-02-29", "1900-02-29", "2027-06-00", "2027-06-32", "2027-6-30", "27-06-30", "2027-06-30T00:00:00Z", "２０２７-06-30"] {
		not waivers.well_formed_expiry(d)
	}
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "shared-write-branch: x", "flipflop.dev/ignore-expires": "2027-13-01"})])
	settings := {"waivers": [{"rule": "shared-write-branch", "resources": ["Stage/acme/*"], "reason": "x", "expires": "2027-02-30"}]}
	some m in waivers.apply({finding("shared-write-branch", "Stage", "acme", "dev")}) with input as estate
	not m.waived
	some c in waivers.apply({finding("shared-write-branch", "Stage", "acme", "dev")}) with input as [] with data.lib.flipflop.config.settings as settings
	not c.waived
}

# bare is a Stage written without a namespace.
bare(name) := json.remove(f.stage(name, "main", []), ["metadata/namespace"])

# unknown names a Stage of unknown project in file as findings do.
unknown(file, name) := {"kind": "Stage", "namespace": "", "name": name, "file": file}

# Two Stages whose projects are unknown are not known to share one: the
# annotation on a namespace-less Stage in one file does not speak for a
# namespace-less Stage of another file in the same finding (a pull request's
# own Stage could otherwise waive a contradiction of another team's Stages
# that it made unknown, or that nothing places). Within one file, applied to
# one namespace, it does.
test_unknown_projects_are_not_one_project if {
	theirs := {"path": "acme/kargo/stages.yaml", "contents": bare("dev")}
	ours := {"path": "pr/stage.yaml", "contents": annotate(bare("prod"), {"flipflop.dev/ignore": "shared-branch-contradiction: ours"})}
	fnd := {"rule": "shared-branch-contradiction", "resources": [unknown("acme/kargo/stages.yaml", "dev"), unknown("pr/stage.yaml", "prod")]}
	some m in waivers.apply({fnd}) with input as [theirs, ours]
	not m.waived
}

test_unknown_project_of_one_file_speaks_for_it if {
	ours := {"path": "pr/stage.yaml", "contents": annotate(bare("prod"), {"flipflop.dev/ignore": "shared-branch-contradiction: ours"})}
	fnd := {"rule": "shared-branch-contradiction", "resources": [unknown("pr/stage.yaml", "dev"), unknown("pr/stage.yaml", "prod")]}
	some m in waivers.apply({fnd}) with input as [{"path": "pr/stage.yaml", "contents": bare("dev")}, ours]
	m.waived.reason == "ours"
}
