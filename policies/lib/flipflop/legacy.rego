# METADATA
# title: Legacy promotion mechanisms
# description: |
#   Stages written for Kargo v0.8 and earlier (`spec.promotionMechanisms`). Their
#   `argoCDAppUpdates` have no `desiredRevision`: Kargo checks a single-source Git
#   Application against the Freight's commit of the Application's repository, which
#   is the commit `gitRepoUpdates` pushed when the Stage pushes to that repository
#   (`healthCheckCommit`), else the commit the Warehouse found. The Freight carries
#   a commit of a repository only when a Warehouse the Stage's Freight comes from
#   subscribes to it (`requestedFreight[].origin`, `subscriptions.warehouse`, or
#   the Warehouses of `subscriptions.upstreamStages`, transitively); an origin the
#   inputs do not define, or two Warehouses subscribing to the repository (which
#   Kargo rejects as ambiguous), leaves the check unknown: no pin.
package lib.flipflop.legacy

import data.lib.flipflop.config
import data.lib.flipflop.expr
import data.lib.flipflop.objects
import data.lib.flipflop.repo
import data.lib.flipflop.stages

# updates lists every argoCDAppUpdates entry of every Stage, shaped like an
# argocd-update app entry (stage, step, index, namespace, name).
updates := [u |
	read
	some s in written
	some i, entry in objects.array_at(s.legacy, ["argoCDAppUpdates"])
	is_object(entry)
	path := sprintf("/spec/promotionMechanisms/argoCDAppUpdates/%d", [i])
	u := {
		"stage": s,
		"step": {
			"id": concat("|", [s.key, path]),
			"index": i,
			"origin": {"ref": s.ref, "path": path},
			"scope": {"ref": s.ref, "path": "/spec/promotionMechanisms/argoCDAppUpdates", "task": ""},
			"via": "",
			"alias": sprintf("promotionMechanisms.argoCDAppUpdates[%d]", [i]),
			"uses": "argoCDAppUpdates",
			"config": entry,
			"env": {"ctx": s.ctx, "vars": {}},
			"task": "",
			"task_resolved": true,
		},
		"index": i,
		"entry": entry,
		"entry_path": path,
		"namespace": namespace(entry),
		"name": objects.string_at(entry, ["appName"]),
	}
]

# written lists the Stages written with spec.promotionMechanisms: the one pass
# over every Stage that the legacy readings start from.
written := [s |
	some s in stages.records
	s.legacy != {}
]

# read: the model reads promotionMechanisms, as Kargo v0.8 and earlier do: unless
# the run names a Kargo version from v1.0 on, which no longer has the field.
read if not config.kargo_explicit

read if not config.kargo_at_least([1, 0])

# dated lists the keys of the Stages read as Kargo v0.8 reads them while the
# run follows another version: it named none, so the files date these Stages
# (they are written with promotionMechanisms) and the rest of the estate is
# read as the newest release, on which the field is dropped. A finding about
# one says so (lib.flipflop.result).
dated contains s.key if {
	not config.kargo_explicit
	some s in written
}

any_dated if count(dated) > 0

namespace(entry) := ns if {
	ns := objects.string_at(entry, ["appNamespace"])
	ns != ""
} else := config.argocd_namespace

# checks returns the revision check Kargo v0.x registers for an Application an
# update names: at most one, on its `spec.source`, when that is a Git source
# whose repository exactly one origin Warehouse subscribes to.
checks(u, app) := [c |
	app.spec_source == true
	src := app.sources[0]
	src.chart == ""
	src.repo_known
	subscribed := [w | some w in origin_warehouses(u, src); subscribes(w, src.repo_id)]
	count(subscribed) == 1
	c := check(u.stage, src, subscribed[0])
]

check(s, src, warehouse) := {
	"source": src,
	"desired": "the commit its gitRepoUpdates push (healthCheckCommit)",
	"desired_class": "own",
	"warehouse": warehouse.key,
} if {
	pushes_to(s, src.repo_id)
} else := {
	"source": src,
	"desired": sprintf("the Freight's commit of %s (Warehouse %s)", [src.repo_url, warehouse.key]),
	"desired_class": "freight",
	"warehouse": warehouse.key,
}

pushes_to(s, repo_id) if {
	some g in objects.array_at(s.legacy, ["gitRepoUpdates"])
	is_object(g)
	repo.id(object.get(g, "repoURL", "")) == repo_id
}

# provides: Warehouse w's Freight has the revision of an Application source:
# a Git source's commit when w subscribes to its repository, a chart's
# version when w subscribes to the chart exactly as Kargo v0.9 and v1.0 look
# it up (internal/controller/freight/finder.go, FindChart: repoURL and name
# equal as written; a chart source whose repoURL has no scheme is an OCI
# chart, looked up as oci://<repoURL>/<chart> with no name,
# internal/directives/argocd_revisions.go).
provides(w, src) if {
	src.chart == ""
	subscribes(w, src.repo_id)
}

provides(w, src) if {
	src.chart != ""
	[url, name] := chart_lookup(src.repo_url, src.chart)
	some sub in objects.array_at(w.obj, ["spec", "subscriptions"])
	sub.chart.repoURL == url

	# an OCI chart's subscription names none: "" then matches
	n := object.get(sub.chart, "name", "")
	n == name
}

chart_lookup(url, chart) := [url, chart] if contains(url, "://")

else := [sprintf("oci://%s/%s", [trim_suffix(url, "/"), chart]), ""]

subscribes(w, repo_id) if {
	some sub in objects.array_at(w.obj, ["spec", "subscriptions"])
	url := object.get(sub, ["git", "repoURL"], "")
	expr.known(url)
	repo.id(url) == repo_id
}

# origin_warehouses: the Warehouses the Freight checked for src may come from:
# the origin the mechanisms name for it (sourceUpdates[] > argoCDAppUpdates[] >
# promotionMechanisms, as Kargo inherits it), else every origin of the Stage.
# Undefined when one of them is not among the inputs.
origin_warehouses(u, src) := ws if {
	o := explicit_origin(u, src)
	ws := [w | some w in object.get(warehouses, sprintf("%s/%s", [u.stage.project, o]), [])]
	count(ws) > 0
} else := ws if {
	not explicit_origin(u, src)
	names := stage_origins[u.stage.key]
	ws := [w | some n in names; some w in warehouses[sprintf("%s/%s", [u.stage.project, n])]]
}

explicit_origin(u, src) := [o |
	some x in array.concat(
		[object.get(su, "origin", null) |
			some su in objects.array_at(u.entry, ["sourceUpdates"])
			is_object(su)
			su.repoURL == src.repo_url
		],
		[object.get(u.entry, "origin", null), object.get(u.stage.legacy, "origin", null)],
	)
	is_object(x)
	object.get(x, "kind", "Warehouse") == "Warehouse"
	o := objects.string_at(x, ["name"])
][0]

# warehouses groups Warehouses by "namespace/name".
warehouses := {k: group |
	some k in {w.key | some w in warehouse_entries}
	group := [w | some w in warehouse_entries; w.key == k]
}

warehouse_entries := [{"key": key(o), "obj": o.obj, "ref": o.ref} | some o in objects.warehouses]

stage_entries := [{"key": key(o), "obj": o.obj} | some o in objects.stages]

key(o) := sprintf("%s/%s", [o.ref.namespace, o.ref.name])

# stage_origins maps a Stage key to the names of the Warehouses its Freight
# comes from, following upstreamStages; a Stage whose chain leaves the inputs
# or names a Warehouse the inputs do not define has no entry.
stage_origins := {s.key: names |
	some s in stages.records
	needs_origins(s)
	chain := graph.reachable(upstream, {s.key})
	every c in chain {
		c in known_stages
	}
	names := {n | some c in chain; some n in direct_origins[c]}
	every n in names {
		warehouses[sprintf("%s/%s", [s.project, n])]
	}
}

# needs_origins: a Stage whose checks come from its Freight: legacy
# argoCDAppUpdates, or argocd-update steps on a Kargo that infers revisions.
needs_origins(s) if count(objects.array_at(s.legacy, ["argoCDAppUpdates"])) > 0

needs_origins(s) if {
	config.kargo_infers_revisions
	some step in s.steps
	step.uses == "argocd-update"
}

# inferred_warehouses: the Warehouses whose Freight Kargo v0.9 and v1.0 look
# the commit of an argocd-update source up in (internal/directives/origins.go,
# getDesiredOrigin, and internal/controller/freight/finder.go, FindCommit):
# the fromOrigin of the sources[] entry that matches the source, else of its
# apps[] entry, else of the step; with none, every Warehouse the Stage
# requests Freight from. Undefined when one of them is not among the inputs
# (Kargo fails the step: unknown, no pin).
inferred_warehouses(u, entries) := ws if {
	o := inferred_origin(u, entries)
	ws := object.get(warehouses, sprintf("%s/%s", [u.stage.project, o]), [])
	count(ws) > 0
} else := ws if {
	not inferred_origin(u, entries)
	names := stage_origins[u.stage.key]
	ws := [w | some n in names; some w in warehouses[sprintf("%s/%s", [u.stage.project, n])]]
}

inferred_origin(u, entries) := [o |
	some x in array.concat(
		[object.get(e.entry, "fromOrigin", null) | some e in array.slice(entries, 0, 1)],
		[object.get(u.entry, "fromOrigin", null), object.get(u.step.config, "fromOrigin", null)],
	)
	is_object(x)
	object.get(x, "kind", "Warehouse") == "Warehouse"
	o := objects.string_at(x, ["name"])
][0]

known_stages := {s.key | some s in stages.records}

# upstream maps a Stage key to the keys of its subscriptions.upstreamStages.
upstream := {k: {sprintf("%s/%s", [ns, n]) |
	some e in stage_entries
	e.key == k
	some x in objects.array_at(e.obj, ["spec", "subscriptions", "upstreamStages"])
	n := objects.string_at(x, ["name"])
	n != ""
	ns := objects.string_at(e.obj, ["metadata", "namespace"])
} |
	some k in known_stages
}

# direct_origins maps a Stage key to the Warehouse names it requests directly.
direct_origins := {k: {n |
	some e in stage_entries
	e.key == k
	some x in array.concat(
		[object.get(r, "origin", {}) | some r in objects.array_at(e.obj, ["spec", "requestedFreight"])],
		[{"name": object.get(e.obj, ["spec", "subscriptions", "warehouse"], "")}],
	)
	is_object(x)
	object.get(x, "kind", "Warehouse") == "Warehouse"
	n := objects.string_at(x, ["name"])
	n != ""
} |
	some k in known_stages
}
