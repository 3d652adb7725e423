# METADATA
# title: Hand-written pairwise check (benchmark baseline)
# description: |
#   What a user might write by hand for flipflop's headline check, kept as the
#   baseline of `make bench-all` (hack/bench): for every pair of Stages that pin
#   desiredRevision (argocd-update) on Applications with the same repoURL and
#   targetRevision, deny. Written naively on purpose: the pairs come from
#   nested iteration, every pin compared with every other (quadratic).
#   Applications are looked up by name in an object built once (scanning the
#   input for each pin instead took 15 times longer at 10k objects). It
#   understands inline steps and single-source Applications only, reports
#   pairs rather than groups, and is not part of flipflop.
#
#   conftest test --combine --namespace pairwise -p tests/bench/pairwise DIR
package pairwise

# pins: every Stage's pinned Application, with what that Application tracks.
pins contains pin if {
	some stage in input
	stage.contents.kind == "Stage"
	some step in stage.contents.spec.promotionTemplate.spec.steps
	step.uses == "argocd-update"
	some update in step.config.apps
	some source in update.sources
	source.desiredRevision
	app := applications[update.name]
	pin := {
		"stage": sprintf("%s/%s", [stage.contents.metadata.namespace, stage.contents.metadata.name]),
		"app": update.name,
		"repo": app.contents.spec.source.repoURL,
		"revision": app.contents.spec.source.targetRevision,
	}
}

deny contains msg if {
	some a in pins
	some b in pins
	a.stage < b.stage
	a.repo == b.repo
	a.revision == b.revision
	msg := sprintf("Stages %s and %s both pin desiredRevision on Applications %s and %s, which track %s @ %s", [
		a.stage, b.stage, a.app, b.app, a.repo, a.revision,
	])
}

applications := {doc.contents.metadata.name: doc | some doc in input; doc.contents.kind == "Application"}
