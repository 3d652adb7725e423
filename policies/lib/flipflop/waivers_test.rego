package lib.flipflop.waivers_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.waivers

annotate(obj, anns) := object.union(obj, {"metadata": {"annotations": anns}})

finding(rule, kind, ns, name) := {"rule": rule, "resources": [{"kind": kind, "namespace": ns, "name": name}]}

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

test_wildcard_rule if {
	estate := f.estate([annotate(stage_dev, {"flipflop.dev/ignore": "*: legacy pipeline, retiring"})])
	some m in waivers.apply({finding("shared-application", "Stage", "acme", "dev")}) with input as estate
	m.waived
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
