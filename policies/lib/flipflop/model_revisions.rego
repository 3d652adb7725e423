# argocd-update's pins as Kargo computes them: the sources[] entries of an
# update, the first exact match that decides the revision a source is checked
# against, and the rewrite updateTargetRevision makes (docs/model.md cites
# Kargo's lines). (The package's METADATA is in model.rego.)
package lib.flipflop.model

import data.lib.flipflop.objects
import data.lib.flipflop.repo
import data.lib.flipflop.stages

# update_sources lists an argocd-update entry's sources[] entries in order,
# with repoURL and chart substituted (Kargo evaluates the step's config before
# the step runs).
update_sources(step, entry) := [{
	"index": j,
	"entry": e,
	"url": stages.value(step, object.get(e, "repoURL", "")),
	"chart": stages.value(step, object.get(e, "chart", "")),
	"update_target": update_target(step, e),
} |
	some j, e in objects.array_at(entry, ["sources"])
	is_object(e)
]

update_target(step, e) if {
	e.updateTargetRevision == true
} else if {
	is_string(e.updateTargetRevision)
	stages.value(step, e.updateTargetRevision) == "true"
} else := false

# step_pins: argocd-update's pins, as Kargo computes the revisions it checks
# (argocd_revisions.go, getDesiredRevisions and findSourceUpdate): each source
# Kargo reads takes the desired revision of the first sources[] entry whose
# repoURL and chart equal its own exactly, none if that entry sets none (a
# later entry is never consulted). updateTargetRevision does not change what is
# checked; it rewrites a source's targetRevision (rewritten). Selector matches
# that do not authorize the Stage are skipped, as Kargo skips them.
step_pins := [p |
	some u in updates
	some t in u.targets
	pinnable(u, t)
	some src in t.app.kargo_sources
	first := [x | some x in u.sources; x.url == src.repo_url; x.chart == src.chart][0]
	e := first.entry
	desired(e) != ""
	d := stages.value(u.step, desired(e))
	entry_path := sprintf("%s/sources/%d", [u.entry_path, first.index])
	p := {
		"id": concat("|", [u.step.id, entry_path, t.app.key, sprintf("%d", [src.index])]),
		"stage": u.stage,
		"step": u.step,
		"app": t.app,
		"source": src,
		"pointer": pointer(src.repo_id, src.repo_known, src.rev),
		"desired": d,
		"desired_class": desired_class(d),
		"exact": t.via == "name",
		"via": t.via,
		"legacy_field": object.get(e, "desiredCommitFromStep", "") != "",
		"app_entry_path": u.entry_path,
		"entry_path": entry_path,
		"repo_url": first.url,
		"rewritten": rewritten(u, t.app, src),
	}
]

# rewritten: the update sets this source's targetRevision to the revision
# Kargo checks on it (argocd_updater.go, buildDesiredSources and
# applyArgoCDSourceUpdate): an entry with updateTargetRevision is applied to
# the first source it matches in Kargo's normal form, with that source's
# desired revision.
rewritten(u, app, src) if {
	some x in u.sources
	x.update_target
	[s.index | some s in app.kargo_sources; update_matches(s, x.url, x.chart)][0] == src.index
} else := false

held(p) if {
	p.rewritten
	not reverted(p)
	not literal_ref(p)
}

reverted(p) if {
	p.rewritten
	p.app.reverts_spec
} else := false

literal_ref(p) if {
	p.desired_class == "literal"
	p.source.chart == ""
	not regex.match(`^[0-9a-fA-F]{40}$`, p.desired)
}

# update_matches: Kargo's argocd-update applies a sources[] entry (url, chart)
# to an Application source when, for a chart, repoURL and chart are equal, and
# for Git, the URLs are equal in Kargo's normal form (repo.kargo_key). Its
# revision check then looks the entry up by exact equality (step_pins).
update_matches(src, url, chart) if {
	chart != ""
	src.chart == chart
	src.repo_url == url
}

update_matches(src, url, "") if {
	src.chart == ""
	repo.kargo_key(src.repo_url) == repo.kargo_key(url)
}

pinnable(u, _) if not u.selector

pinnable(u, t) if {
	u.selector
	t.authorized != false
}
