# METADATA
# title: One Application
# description: |
#   Normalises one Application object (written, or rendered from an ApplicationSet
#   template) to what the model compares: identity, labels, annotations, auto-sync,
#   and the sources Argo CD tracks (`spec.sourceHydrator` > non-empty `spec.sources`
#   > `spec.source`; for the hydrator, the synced branch is `syncSource.targetBranch`).
package lib.flipflop.application

import data.lib.flipflop.config
import data.lib.flipflop.expr
import data.lib.flipflop.objects
import data.lib.flipflop.repo
import data.lib.flipflop.revision

namespace_of(obj) := ns if {
	ns := objects.string_at(obj, ["metadata", "namespace"])
	ns != ""
} else := config.namespace if {
	config.namespace != ""
} else := config.argocd_namespace

# record normalises one Application object; appset names the ApplicationSet that
# generated it ("" for a written one). The three source fields are read once:
# which one Argo CD tracks follows from the three.
record(obj, ref, namespace, appset) := {
	"key": sprintf("%s/%s", [namespace, name]),
	"namespace": namespace,
	"name": name,
	"name_known": expr.is_known(name),
	"labels": objects.object_at(obj, ["metadata", "labels"]),
	"annotations": objects.object_at(obj, ["metadata", "annotations"]),
	"metadata_known": true,
	"auto_sync": auto_sync(obj),
	"sources": tracked_sources,
	"kargo_sources": kargo_sources(obj, tracked, tracked_sources),
	"reverts_spec": false,
	"spec_source": tracked.field == "source",
	"ref": ref,
	"appset": appset,
	"sources_field": tracked.field,
	"destination_namespace": objects.string_at(obj, ["spec", "destination", "namespace"]),
} if {
	name := objects.string_at(obj, ["metadata", "name"])
	tracked := tracked_field(obj)
	tracked_sources := sources(tracked)
}

# tracked_field names the field the tracked sources are read from, with its
# value: sourceHydrator, else a non-empty sources, else source ("" when there
# is none). spec_source, true when it is source, matters to Kargo v0.x, which
# checks revisions of such sources only.
tracked_field(obj) := {"field": "sourceHydrator", "value": h} if {
	h := objects.object_at(obj, ["spec", "sourceHydrator"])
	count(h) > 0
} else := {"field": "sources", "value": ss} if {
	ss := objects.array_at(obj, ["spec", "sources"])
	count(ss) > 0
} else := {"field": "source", "value": s} if {
	s := objects.object_at(obj, ["spec", "source"])
	count(s) > 0
} else := {"field": "", "value": null}

# kargo_sources are the sources Kargo's argocd-update reads (the revision it
# checks, the update it applies): a non-empty spec.sources, else spec.source
# (argocd_revisions.go, getDesiredRevisions). Kargo's Application type has no
# sourceHydrator, so an Application that only uses one has none; with Argo
# CD's own sources read above, they are the same list.
kargo_sources(obj, tracked, tracked_sources) := tracked_sources if {
	tracked.field != "sourceHydrator"
} else := sources(kargo_field(obj))

kargo_field(obj) := {"field": "sources", "value": ss} if {
	ss := objects.array_at(obj, ["spec", "sources"])
	count(ss) > 0
} else := {"field": "source", "value": s} if {
	s := objects.object_at(obj, ["spec", "source"])
	count(s) > 0
} else := {"field": "", "value": null}

# auto_sync: `automated: {}` is on; absent or null is off; `enabled: false` is off.
auto_sync(obj) := false if {
	not is_object(object.get(obj, ["spec", "syncPolicy", "automated"], null))
} else := false if {
	obj.spec.syncPolicy.automated.enabled == false
} else := true

sources({"field": "sourceHydrator", "value": h}) := [hydrator_source(h)]

sources({"field": "sources", "value": ss}) := [source(s, i, sprintf("/spec/sources/%d", [i])) | some i, s in ss]

sources({"field": "source", "value": s}) := [source(s, 0, "/spec/source")]

sources({"field": "", "value": null}) := []

# source normalises one source; path is its JSON pointer in the Application
# (for a generated Application, in the rendered template: under the
# ApplicationSet's template path), and the rest of the source is kept as
# written for tools that edit it.
source(s, i, path) := {
	"index": i,
	"path": path,
	"fields": s,
	"repo_url": url,
	"repo_id": source_id(url, chart),
	"repo_known": expr.is_known(url),
	"chart": chart,
	"rev": rev(objects.value_at(s, ["targetRevision"], ""), chart),
	"raw_revision": objects.value_at(s, ["targetRevision"], ""),
	"ref_name": objects.string_at(s, ["ref"]),
	"hydrator": false,
} if {
	url := objects.string_at(s, ["repoURL"])
	chart := objects.string_at(s, ["chart"])
}

# source_id is what a source tracks, for pointers: a Git repository's id, or
# for a Helm chart the repository's id and the chart's name (two charts of one
# Helm repository or OCI registry have versions of their own).
source_id(url, "") := repo.id(url)

source_id(url, chart) := sprintf("%s/%s", [trim_right(repo.id(url), "/"), chart]) if chart != ""

hydrator_source(h) := {
	"index": 0,
	"path": "/spec/sourceHydrator/syncSource",
	"fields": objects.object_at(h, ["syncSource"]),
	"repo_url": url,
	"repo_id": repo.id(url),
	"repo_known": expr.is_known(url),
	"chart": "",
	"rev": rev(branch, ""),
	"raw_revision": branch,
	"ref_name": "",
	"hydrator": true,
} if {
	sync_url := objects.string_at(h, ["syncSource", "repoURL"])
	url := hydrator_url(sync_url, objects.string_at(h, ["drySource", "repoURL"]))
	branch := objects.string_at(h, ["syncSource", "targetBranch"])
}

hydrator_url("", dry) := dry

hydrator_url(sync, _) := sync if sync != ""

rev(r, "") := revision.classify(r)

rev(r, chart) := revision.for_chart(revision.classify(r)) if chart != ""
