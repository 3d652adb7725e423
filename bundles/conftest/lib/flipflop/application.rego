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
} else := config.argocd_namespace

# record normalises one Application object; appset names the ApplicationSet that
# generated it ("" for a written one).
record(obj, ref, namespace, appset) := {
	"key": sprintf("%s/%s", [namespace, name]),
	"namespace": namespace,
	"name": name,
	"name_known": expr.is_known(name),
	"labels": objects.object_at(obj, ["metadata", "labels"]),
	"annotations": objects.object_at(obj, ["metadata", "annotations"]),
	"metadata_known": true,
	"auto_sync": auto_sync(obj),
	"sources": sources(obj),
	"spec_source": spec_source(obj),
	"ref": ref,
	"appset": appset,
} if {
	name := objects.string_at(obj, ["metadata", "name"])
}

# auto_sync: `automated: {}` is on; absent or null is off; `enabled: false` is off.
auto_sync(obj) := false if {
	not is_object(object.get(obj, ["spec", "syncPolicy", "automated"], null))
} else := false if {
	obj.spec.syncPolicy.automated.enabled == false
} else := true

sources(obj) := [hydrator_source(h)] if {
	h := objects.object_at(obj, ["spec", "sourceHydrator"])
	count(h) > 0
} else := [source(s, i) | some i, s in objects.array_at(obj, ["spec", "sources"])] if {
	count(objects.array_at(obj, ["spec", "sources"])) > 0
} else := [source(s, 0) | s := objects.object_at(obj, ["spec", "source"]); count(s) > 0]

# spec_source reports whether the Application's one source is `spec.source` (no
# hydrator, no `spec.sources`): Kargo v0.x checks revisions of such sources only.
spec_source(obj) if {
	count(objects.object_at(obj, ["spec", "sourceHydrator"])) == 0
	count(objects.array_at(obj, ["spec", "sources"])) == 0
	count(objects.object_at(obj, ["spec", "source"])) > 0
} else := false

source(s, i) := {
	"index": i,
	"repo_url": url,
	"repo_id": repo.id(url),
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

hydrator_source(h) := {
	"index": 0,
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
