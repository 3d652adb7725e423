# METADATA
# title: Label selectors
# description: |
#   Kubernetes label selectors (matchLabels, matchExpressions with In, NotIn,
#   Exists, DoesNotExist), for argocd-update app selectors and ApplicationSet
#   generator selectors. Pure functions.
package lib.flipflop.labels

import data.lib.flipflop.objects

# matches evaluates a Kubernetes label selector against labels.
matches(sel, labels) if {
	every k, v in objects.object_at(sel, ["matchLabels"]) {
		labels[k] == v
	}
	every e in objects.array_at(sel, ["matchExpressions"]) {
		is_object(e)
		expression_matches(e, labels)
	}
}

expression_matches(e, labels) if {
	e.operator == "In"
	labels[e.key] in objects.array_at(e, ["values"])
}

expression_matches(e, labels) if {
	e.operator == "NotIn"
	not label_in(labels, e.key, objects.array_at(e, ["values"]))
}

expression_matches(e, labels) if {
	e.operator == "Exists"
	labels[e.key]
}

expression_matches(e, labels) if {
	e.operator == "DoesNotExist"
	not has_label(labels, e.key)
}

label_in(labels, key, values) if labels[key] in values

has_label(labels, key) if labels[key]
