# METADATA
# title: argocd-update names a source the Application does not have
# description: |
#   A `sources[]` entry of a Stage's `argocd-update` step matches none of the
#   Application's sources, so every promotion fails at that step with `no source of
#   Argo CD Application "<app>" in namespace "<ns>" matched update for source with
#   repoURL <url>`. Kargo compares Git URLs in a normal form (case, `.git`, a
#   trailing `/` and https credentials do not matter) but keeps the scheme, so an
#   `ssh` URL never matches an `https` one; chart sources must match `repoURL` and
#   `chart` exactly.
# related_resources:
#   - ref: https://docs.kargo.io/user-guide/reference-docs/promotion-steps/argocd-update
#     description: Kargo reference, the argocd-update step (apps[].sources[])
#   - ref: https://github.com/akuity/kargo/issues/6237
#     description: akuity/kargo#6237, ssh and https URLs of one repository do not match
# custom:
#   id: unmatched-update-source
#   severity: error
#   why: |
#     Each `apps[].sources[]` entry of `argocd-update` says how to update one source
#     of the Application. Kargo looks the source up when it applies the update: a Git
#     entry matches a source whose `repoURL` is equal in Kargo's normal form (lower
#     case, without a trailing `/` or `.git`, without credentials in an https URL; the
#     scheme is kept), a chart entry one whose `repoURL` and `chart` are both equal.
#     When no source matches, the step fails:
#
#     > `no source of Argo CD Application "<app>" in namespace "<ns>" matched update for
#     > source with repoURL <url>`
#
#     and so does every promotion of the Stage. The usual causes: the Stage writes the
#     repository as `git@host:org/repo` and the Application as `https://host/org/repo`,
#     the entry names another repository, or it names a chart the Application does not
#     deploy. flipflop judges only Applications whose every source URL it knows (and
#     that use no source hydrator), and no URL with a placeholder for people to fill
#     in (`<github-username>`).
#   remediation: |
#     Write the entry's `repoURL` (and `chart`) as the Application's source writes
#     it, with the same scheme, or remove the entry if the Application has no such
#     source.
package lib.flipflop.rules.unmatched_update_source

import data.lib.flipflop.model
import data.lib.flipflop.result

report contains finding if {
	some c in model.unmatched
	entry_path := sprintf("%s/sources/%d", [c.update.entry_path, c.index])
	finding := result.fail(
		rego.metadata.chain(),
		message(c),
		result.refs([c.update.stage.ref, c.app.ref]),
		sprintf("%s|%s|%s", [c.update.stage.key, entry_path, c.app.key]),
		result.about([], [c.update.stage.key], [c.app.key], [], []),
		{
			"stage": c.update.stage.key,
			"application": c.app.key,
			"entryPath": entry_path,
			"stageRepoURL": c.url,
			"chart": c.chart,
			"applicationSources": [describe(s) | some s in c.app.kargo_sources],
		},
	)
}

describe(s) := sprintf("%s (chart %s)", [s.repo_url, s.chart]) if s.chart != ""

else := s.repo_url

message(c) := sprintf(
	concat(" ", [
		"Stage %s's argocd-update updates %s on Application %s, which has no such source (%s):",
		"every promotion fails (\"no source of Argo CD Application %q in namespace %q matched update for source with repoURL %s%s\").%s",
	]),
	[
		c.update.stage.key, describe({"repo_url": c.url, "chart": c.chart}), c.app.key,
		its_sources(c.app),
		c.app.name, c.app.namespace, c.url, and_chart(c.chart), model.pattern_note(c.app),
	],
)

# and_chart: Kargo's message names the chart of a chart entry.
and_chart("") := ""

and_chart(chart) := sprintf(" and chart %q", [chart]) if chart != ""

its_sources(app) := sprintf("its sources: %s", [concat(", ", [describe(s) | some s in app.kargo_sources])]) if {
	count(app.kargo_sources) > 0
} else := "it uses a source hydrator, which Kargo's argocd-update does not read: to Kargo it has no sources"
