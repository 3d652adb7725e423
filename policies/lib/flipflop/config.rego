# METADATA
# title: Settings
# description: |
#   Settings every host may override with `with data.lib.flipflop.config.settings as {...}`:
#   `default_branch` (the branch `HEAD` and an empty targetRevision stand for; empty means
#   "main or master, whichever the estate uses, and say that it was assumed") and
#   `argocd_namespace` (where Applications live when `apps[].namespace` is omitted),
#   `namespace` (the namespace of manifests that name none, as `kubectl apply -n`
#   gives it; empty: the files leave it to apply time),
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
