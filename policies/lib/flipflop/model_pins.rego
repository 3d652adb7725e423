# The pins no promotion can satisfy, with why: a ref name where Argo CD reports
# a SHA, the Stage's own commit on a fixed revision, or on a branch the Stage
# does not push to. One problem gets one finding: these are
# unreachable-desired-revision's, and the model's pin groups leave them out.
# (The package's METADATA is in model.rego.)
package lib.flipflop.model

# unreachable maps the id of every pin that can never be met to why: no
# promotion makes the Application report the commit the pin expects. The
# unreachable-desired-revision rule reports them; the rules about pins that
# contradict each other or a writer (pins_by_pointer) leave them out, so that
# one problem gets one finding, with its true mechanism.
unreachable := {p.id: reason | some p in pins; reason := never_met(p)}

# A literal ref: Argo CD reports resolved commit SHAs for Git sources.
never_met(p) := sprintf("%q is a ref, and Argo CD reports the commit SHA it resolves to, never the name.", [p.desired]) if {
	p.desired_class == "literal"
	p.source.chart == ""
	not regex.match(`^[0-9a-fA-F]{40}$`, p.desired)
}

# The Stage's own commit on a fixed revision.
never_met(p) := "it is the commit the Stage's own promotion produces, but the Application tracks a fixed revision, which Argo CD keeps reporting." if {
	p.desired_class == "own"
	p.pointer.known
	not p.pointer.floating
}

# The Stage's own commit on a branch the Stage does not write.
never_met(p) := sprintf("it is the commit the Stage's own promotion produces, but the Stage pushes only to %s, not to the branch the Application tracks.", [
	concat(", ", sort({describe(w.pointer) | some w in writes})),
]) if {
	p.desired_class == "own"
	p.pointer.known
	p.pointer.floating
	p.pointer.kind == "branch"
	not p.stage.key in unknown_writes
	writes := object.get(writers_by_stage, p.stage.key, [])
	count(writes) > 0
	every w in writes {
		w.pointer.key != p.pointer.key
	}
}
