# The argocd-update steps Kargo fails on every promotion, and what that does to
# the pins: none of them is ever checked. (The package's METADATA is in
# model.rego; docs/model.md cites Kargo's lines.)
package lib.flipflop.model

import data.lib.flipflop.expr
import data.lib.flipflop.step_configs

# failing maps the key of every Stage whose promotions always fail in an
# argocd-update step to why (the reasons' kinds, sorted). Kargo appends a
# step's revision checks only when the step succeeds
# (pkg/promotion/local_orchestrator.go), and a Stage whose last Promotion
# failed gets health Unknown with no check run
# (pkg/controller/stages/regular_stages.go): such a Stage's pins are never
# checked, so they contradict nothing (one problem, one finding: the rule that
# reports the failure). What fails, from argocd_updater.go:
#   - an Application named that does not authorize the Stage, or a selector
#     whose every match does not (L841-L877);
#   - a sources[] entry that matches no source of an Application it reaches;
#   - a selector with no criterion.
# Unknown never proves a failure: an authorization or a source that the files
# leave unknown fails nothing.
failing := {k: sort(reasons) |
	some k in {f.stage | some f in failures}
	reasons := {f.reason | some f in failures; f.stage == k}
}

# Two objects may hold one Application (a copy the duplicate-object rule
# reports); which one Kargo meets is unknown, so a failure needs every copy to
# fail.
failures contains {"stage": u.stage.key, "reason": "unauthorized"} if {
	some [u, t] in unauthorized_names
	not authorized_copy(u, t.app.key)
}

failures contains {"stage": u.stage.key, "reason": "unauthorized"} if {
	some u in unauthorized_selectors
}

failures contains {"stage": m.update.stage.key, "reason": "unmatched-source"} if {
	some m in unmatched
	not matched_copy(m)
}

failures contains {"stage": u.stage.key, "reason": "empty-selector"} if {
	some u in empty_selectors
}

# A step whose config Kargo's schema rejects fails every promotion that runs
# it (lib.flipflop.step_configs; invalid-step-config reports it).
failures contains {"stage": k, "reason": "invalid-step-config"} if {
	some k in step_configs.failing_stages
}

# unauthorized_names lists [update, target] for every Application an
# argocd-update entry names that does not authorize the Stage ("Argo CD
# Application %q in namespace %q is not authorized").
unauthorized_names := [[u, t] |
	some u in updates
	not u.selector
	some t in u.targets
	t.authorized == false
]

# unauthorized_selectors lists the updates whose selector matches Applications,
# none of which authorizes the Stage ("found %d Application(s) matching
# selector in namespace %q, but none are authorized for Stage %s:%s").
unauthorized_selectors := [u |
	some u in updates
	u.selector
	count(u.targets) > 0
	every t in u.targets {
		t.authorized == false
	}
]

# empty_selectors lists the updates whose selector has no criterion.
empty_selectors := [u |
	some u in updates
	u.selector
	empty_selector(u.entry.selector)
]

authorized_copy(u, key) if {
	some c in u.targets
	c.app.key == key
	c.authorized != false
}

matched_copy(m) if {
	some c in m.update.targets
	c.app.key == m.app.key
	not unmatched_by(c.app, m.url, m.chart)
}

unmatched_by(app, url, chart) if {
	judged(app)
	not update_matched(app, url, chart)
}

# unmatched lists the argocd-update sources[] entries that match no source of
# an Application they reach, for Applications whose every source is known
# (argocd_updater.go: "no source of Argo CD Application %q in namespace %q
# matched update for source with repoURL %s").
unmatched := [{"update": u, "app": t.app, "index": x.index, "url": x.url, "chart": x.chart} |
	some u in updates
	some t in u.targets
	not t.unjudged
	pinnable(u, t)
	judged(t.app)
	some x in u.sources
	is_string(x.url)
	x.url != ""
	expr.known(x.url)
	not placeholder(x.url)
	is_string(x.chart)
	expr.known(x.chart)
	not update_matched(t.app, x.url, x.chart)
]

# A target only a name pattern matched (t.via "pattern") is judged too unless
# it is unjudged (model.targets: another pattern matches the name as well, or
# the pattern is no more than a wildcard): the Application is then assumed to
# be one of those its ApplicationSet generates, with the sources its template
# writes (judged: a template source that depends on the generator is unknown),
# and a finding about it says so (pattern_note).

# pattern_note says, for a finding about a target only a name pattern matched,
# what was assumed ("" for any other target).
pattern_note(app) := sprintf(
	concat(" ", [
		" (No Application %s is among the inputs: ApplicationSet %s/%s generates Applications named %s that flipflop cannot list,",
		"so it assumed this is one of them, with the sources its template writes.)",
	]),
	[app.key, app.generator.appset.namespace, app.generator.appset.name, app.name_pattern],
) if {
	is_string(app.name_pattern)
	app.name_pattern != app.name
} else := ""

# judged: the Application's sources, as Kargo reads them, are all known: it
# has some, or it has none because it uses a source hydrator, which Kargo does
# not read (any entry then matches nothing).
judged(app) if {
	count(app.kargo_sources) > 0
	every s in app.kargo_sources {
		s.repo_known
		not placeholder(s.repo_url)
	}
}

judged(app) if {
	count(app.kargo_sources) == 0
	app.sources_field == "sourceHydrator"
}

# placeholder: a URL written as a template for people to fill in
# (https://github.com/<github-username>/repo), as quickstarts do: not judged.
placeholder(url) if regex.match(`<[^<>]*>`, url)

update_matched(app, url, chart) if {
	some s in app.kargo_sources
	update_matches(s, url, chart)
}
