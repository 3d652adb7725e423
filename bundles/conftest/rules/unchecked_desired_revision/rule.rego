# METADATA
# title: desiredRevision that Kargo never checks
# description: |
#   A Stage's `argocd-update` sets a `desiredRevision` for a Git repository whose
#   `repoURL` is written differently from the Application source's (`.git`, case,
#   a trailing `/` or credentials): Kargo matches the two when it applies the
#   update, but checks the desired revision only against a source written exactly
#   the same, so the revision is never checked and the Stage turns Healthy whatever
#   Argo CD synced. Likewise a `sources[]` entry written exactly like an earlier one
#   of the same app entry: Kargo reads the first, so the later `desiredRevision` is
#   never checked.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (sources[].repoURL, desiredRevision)
#   - ref: https://github.com/akuity/kargo/issues/6237
#     description: akuity/kargo#6237, matching argocd-update sources by repository URL
# custom:
#   id: unchecked-desired-revision
#   severity: warning
#   why: |
#     `argocd-update` compares repository URLs twice, in two ways. When it applies
#     an update it matches each `sources[]` entry to the Application's sources on
#     Kargo's normal form of a Git URL: lower case, without a trailing `/` or `.git`,
#     without credentials in an https URL. When it then checks the Stage's health, it
#     looks up the desired revision of each Application source by **exact string
#     equality** of `repoURL`. An entry written `https://github.com/acme/deploy` for
#     a source written `https://github.com/acme/deploy.git` passes the first
#     comparison and fails the second: the promotion succeeds, and the revision it
#     asked for is never compared with what Argo CD synced. Drift detection is off
#     without a word, and flipflop's own contradiction checks, which follow Kargo,
#     see no pin either.
#
#     The health check takes, for each source, the **first** `sources[]` entry equal
#     to it. A second entry with the same `repoURL` (and `chart`) is applied (to the
#     same source), but its `desiredRevision` is never read.
#   remediation: |
#     Write the `repoURL` of the `sources[]` entry exactly as the Application's
#     source writes it (the same `.git`, case and trailing `/`), or write the
#     Application's the way the Stage does. If no revision check is wanted, drop
#     desiredRevision instead.
#   remediations:
#     repeated-entry: |
#       Keep one `sources[]` entry per Application source: merge the two into the first,
#       with the `desiredRevision` you mean Kargo to check (and, if wanted,
#       `updateTargetRevision`). If no revision check is wanted, drop desiredRevision
#       from both.
package lib.flipflop.rules.unchecked_desired_revision

import data.lib.flipflop.expr
import data.lib.flipflop.model
import data.lib.flipflop.objects
import data.lib.flipflop.result
import data.lib.flipflop.stages

# An entry that an earlier entry of the same app entry repeats (the same
# repoURL and chart, as Kargo evaluates them): Kargo takes the first entry
# matching a source, so this one's desiredRevision is never read.
report contains finding if {
	some c in shadowed
	entry_path := sprintf("%s/sources/%d", [c.update.entry_path, c.index])
	finding := result.fail(
		rego.metadata.chain(),
		sprintf(
			concat(" ", [
				"Stage %s's argocd-update sets desiredRevision %q for %s on Application %s in sources[%d], but sources[%d] names the same %s:",
				"Kargo checks each source against the first sources[] entry written like it, so it never reads this one.%s%s",
			]),
			[
				c.update.stage.key, c.desired, c.label, c.app.key, c.index, c.first,
				c.what, first_says(c), model.pattern_note(c.app),
			],
		),
		result.refs([c.update.stage.ref, c.app.ref]),
		sprintf("%s|%s|%s", [c.update.stage.key, entry_path, c.app.key]),
		result.about([], [c.update.stage.key], [c.app.key], [], []),
		{
			"stage": c.update.stage.key,
			"application": c.app.key,
			"entryPath": entry_path,
			"stageRepoURL": c.url,
			"shadowedBy": sprintf("%s/sources/%d", [c.update.entry_path, c.first]),
			"kind": "repeated-entry",
		},
	)
}

report contains finding if {
	some c in unchecked
	entry_path := sprintf("%s/sources/%d", [c.update.entry_path, c.index])
	finding := result.fail(
		rego.metadata.chain(),
		message(c.update, c.app, c.url, c.loose, rewrites(c)),
		result.refs([c.update.stage.ref, c.app.ref]),
		sprintf("%s|%s|%s", [c.update.stage.key, entry_path, c.app.key]),
		result.about([], [c.update.stage.key], [c.app.key], [], []),
		{
			"stage": c.update.stage.key,
			"application": c.app.key,
			"entryPath": entry_path,
			"stageRepoURL": c.url,
			"applicationRepoURLs": sort({s.repo_url | some s in c.loose}),
		},
	)
}

# unchecked lists the argocd-update sources[] entries that set a desired
# revision for a Git URL an Application they reach writes only otherwise.
unchecked := [{"update": u, "app": t.app, "index": j, "url": url, "loose": loose} |
	some u in model.updates
	some t in u.targets
	not t.unjudged
	model.pinnable(u, t)
	some j, e in objects.array_at(u.entry, ["sources"])
	is_object(e)
	model.desired(e) != ""
	object.get(e, "chart", "") == ""
	url := stages.value(u.step, object.get(e, "repoURL", ""))
	is_string(url)
	url != ""
	expr.known(url)
	loose := loose_sources(t.app, url)
	count(loose) > 0
	not exact_source(t.app, url)
]

# shadowed lists the sources[] entries that set a desired revision for a
# source of an Application they reach, written exactly like it, after an
# earlier entry of the same app entry with the same repoURL and chart
# (argocd_revisions.go, findSourceUpdate: the first match wins).
shadowed := [{"update": u, "app": t.app, "index": j, "first": i, "url": url, "desired": model.desired(e), "label": label, "what": what} |
	some u in model.updates
	entries := objects.array_at(u.entry, ["sources"])
	count(entries) > 1
	some j, e in entries
	j > 0
	is_object(e)
	model.desired(e) != ""
	[url, chart] := written(u, e)
	expr.known(url)
	expr.known(chart)
	i := [k |
		some k, x in array.slice(entries, 0, j)
		is_object(x)
		written(u, x) == [url, chart]
	][0]
	some t in u.targets
	not t.unjudged
	model.pinnable(u, t)
	some s in t.app.kargo_sources
	s.repo_url == url
	s.chart == chart
	label := source_label(url, chart)
	what := source_what(chart)
]

written(u, e) := [stages.value(u.step, object.get(e, "repoURL", "")), stages.value(u.step, object.get(e, "chart", ""))]

source_label(url, "") := url

source_label(url, chart) := sprintf("chart %s of %s", [chart, url]) if chart != ""

source_what("") := "repoURL"

source_what(chart) := "repoURL and chart" if chart != ""

# first_says says what the first entry gives the source instead.
first_says(c) := sprintf(" Kargo checks %s against %q, the first entry's desiredRevision.", [c.label, d]) if {
	first := objects.array_at(c.update.entry, ["sources"])[c.first]
	d := model.desired(first)
	d != ""
} else := sprintf(" The first entry sets no desiredRevision, so Kargo checks no revision of %s at all.", [c.label])

# loose_sources: the Git sources of app that Kargo matches to url when it
# applies the update (equal in its normal form) but that are written otherwise.
loose_sources(app, url) := [s |
	some s in app.kargo_sources
	s.chart == ""
	s.repo_known
	s.repo_url != url
	model.update_matches(s, url, "")
]

exact_source(app, url) if {
	some s in app.kargo_sources
	s.chart == ""
	s.repo_url == url
}

message(u, app, url, loose, rewrite) := sprintf(
	concat(" ", [
		"Stage %s's argocd-update sets desiredRevision for %s on Application %s, whose source is written %s:",
		"Kargo applies the update (the URLs are equal in its normal form) but checks the revision only against a source written exactly the same,",
		"so it never checks this one.%s%s",
	]),
	[u.stage.key, url, app.key, concat(", ", sort({s.repo_url | some s in loose})), rewrite, model.pattern_note(app)],
)

# rewrites says what updateTargetRevision still does when the entry sets it:
# the update is applied by the same normal-form match, so the source is moved
# to the revision; only the check is lost.
rewrites(c) := concat(" ", [
	"",
	"Its updateTargetRevision still sets the source's targetRevision to that revision (the update matches in the normal form),",
	"so the Application is moved to it, but whether it got there is never checked.",
]) if {
	some x in c.update.sources
	x.index == c.index
	x.update_target
} else := ""
