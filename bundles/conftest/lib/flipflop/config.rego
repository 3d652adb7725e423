# METADATA
# title: Settings
# description: |
#   Settings every host may override with `with data.lib.flipflop.config.settings as {...}`:
#   `default_branch` (the branch `HEAD` and an empty targetRevision stand for; empty means
#   "main or master, whichever the estate uses, and say that it was assumed") and
#   `argocd_namespace` (where Applications live when `apps[].namespace` is omitted),
#   `namespace` (the namespace of manifests that name none, as `kubectl apply -n`
#   gives it; empty: the files leave it to apply time),
#   `kargo_version` (the Kargo release the estate runs on, "v1.9" or "1.9.3";
#   empty: the newest flipflop models, newest_kargo),
#   `waivers` (see lib.flipflop.waivers), `annotation_waivers` (false: ignore every
#   flipflop.dev/ignore annotation) and `today` (the date waivers expire against;
#   default: the clock).
package lib.flipflop.config

settings := {}

default_branch := object.get(settings, "default_branch", "")

argocd_namespace := object.get(settings, "argocd_namespace", "argocd")

# namespace is where a namespaced manifest without metadata.namespace is taken
# to be applied (kubectl apply -n, kargo apply --project); "" when the run
# does not say.
namespace := object.get(settings, "namespace", "")

# newest_kargo is the newest Kargo release the model follows line by line:
# the version assumed when the run names none, and for any newer one.
newest_kargo := "v1.11.2"

# kargo_version_setting is the Kargo version the run names ("" for none).
default kargo_version_setting := ""

kargo_version_setting := v if {
	v := object.get(settings, "kargo_version", "")
	is_string(v)
}

# kargo is the Kargo version the model follows, as [major, minor, patch]:
# the setting's (a release newer than newest_kargo is read as newest_kargo,
# whose facts are the newest flipflop knows), else newest_kargo. A setting
# that is no version is read as none (the Go host and the Gatekeeper
# parameter's schema reject one before it gets here).
kargo := v if {
	v := parse_version(kargo_version_setting)
	v <= parse_version(newest_kargo)
} else := parse_version(newest_kargo)

default kargo_explicit := false

# kargo_explicit: the run names the Kargo version (a version-dependent fact
# the files also date, such as promotionMechanisms, follows the files when it
# does not).
kargo_explicit if parse_version(kargo_version_setting)

default kargo_newer := false

# kargo_newer: the run names a release newer than newest_kargo.
kargo_newer if parse_version(kargo_version_setting) > parse_version(newest_kargo)

# kargo_report is what hosts tell their users about the version followed.
kargo_report := {
	"version": kargo_text,
	"named": kargo_explicit == true,
	"newer": kargo_newer == true,
}

# kargo_text names the version the model follows, for messages and reports.
kargo_text := sprintf("v%d.%d.%d", kargo)

# kargo_at_least holds when the version followed is v or later ([major, minor]).
kargo_at_least(v) if array.slice(kargo, 0, 2) >= v

# kargo_lists_stages: the version followed reads the authorized-stage
# annotation as a comma-separated list (v1.11 on).
kargo_lists_stages if kargo_at_least([1, 11])

# kargo_rejects_globs: the version followed rejects a glob in the
# authorized-stage annotation (v0.9 on; earlier ones match it).
kargo_rejects_globs if kargo_at_least([0, 9])

# kargo_infers_revisions: the version followed checks a source that no
# argocd-update entry gives a revision against the Freight's commit of its
# repository (v0.9 and v1.0; v1.1 checks only what it is given).
kargo_infers_revisions if {
	kargo_at_least([0, 9])
	not kargo_at_least([1, 1])
}

# parse_version reads "v1.9", "1.9.3", "v1.10.0-rc.1" as [major, minor, patch]
# (a missing patch is 0); undefined for anything else.
parse_version(s) := [to_number(m[1]), to_number(m[2]), patch] if {
	m := regex.find_all_string_submatch_n(`^v?([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,6}))?(?:[-+][0-9A-Za-z.+-]*)?$`, s, 1)[0]
	patch := to_number(object.get({"": "0"}, m[3], m[3]))
}

# The branch names an unconfigured `HEAD` may stand for, in order of preference.
default_branch_candidates := ["main", "master"]

# waivers are the configured waivers (a waivers file, or conftest data).
default waivers := []

# settings is read with object.get, never settings.x: the type checker knows
# settings as the empty object above, and OPA 1.21 rejects a ref into it
# ("undefined ref") even though every host replaces it.
waivers := w if {
	w := object.get(settings, "waivers", null)
	is_array(w)
}

# argocd_update_fields lists the argocd-update fields the model reads that not every
# version has, with the first version that has each ("since") and the first
# that no longer does ("until"), [major, minor]; where: "app" (an apps[]
# entry) or "source" (an apps[].sources[] entry). From the step's JSON schema
# (argocd-update-config.json) at each tag: every object of it has
# additionalProperties: false, so Kargo rejects a config with a field the
# version does not have when a promotion runs the step. The model reports them
# (unsupported-field), and the step schema check leaves them to it.
argocd_update_fields := [
	{"where": "app", "field": "selector", "since": [1, 9], "until": null},
	{"where": "app", "field": "fromOrigin", "since": [0, 9], "until": [1, 3]},
	{"where": "source", "field": "desiredRevision", "since": [1, 1], "until": null},
	{"where": "source", "field": "desiredCommitFromStep", "since": [0, 9], "until": [1, 3]},
	{"where": "source", "field": "fromOrigin", "since": [0, 9], "until": [1, 3]},
]

# lacks holds for what the version followed does not have: f.since is the
# first version that has it, f.until (or null) the first that no longer does
# ([major, minor]).
lacks(f) if not kargo_at_least(f.since)

lacks(f) if {
	f.until != null
	kargo_at_least(f.until)
}

# history says, for what the version followed lacks (lacks), when it came or
# went.
history(f) := sprintf("it came in v%d.%d.0", f.since) if {
	not kargo_at_least(f.since)
} else := sprintf("it was removed in v%d.%d.0", f.until)

# assumed_note ends a message that depends on the version when the run named
# none.
default assumed_note := " flipflop assumed the newest Kargo it models; if you run an older one, say so with --kargo-version."

assumed_note := "" if kargo_explicit
