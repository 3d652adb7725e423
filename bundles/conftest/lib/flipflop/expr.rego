# METADATA
# title: Kargo expressions
# description: |
#   Static substitution of the Kargo expressions a checker can know before a
#   Promotion runs: `${{ ctx.stage }}`, `${{ ctx.project }}`, `${{ vars.NAME }}` and
#   `${{ vars['NAME'] }}`, also inside larger strings. Every other expression stays in
#   the string, which makes the value unknown: never guessed, never matched.
package lib.flipflop.expr

# has_expr reports whether s still holds an expression (`${{ }}` or `${% %}`).
has_expr(s) if contains(s, "${")

# known reports whether s is a string without expressions (has_expr, written
# out: it is called for most values the model reads).
known(s) if {
	is_string(s)
	not contains(s, "${")
}

# is_known is known as a value: true or false, never undefined.
is_known(s) if known(s)

else := false

# subst substitutes what env (`{"ctx": {...}, "vars": {...}}`, and optionally
# "under": [{...}, ...], the layers of vars below env.vars: see var) knows in s.
subst(s, env) := strings.replace_n(replacements, s) if {
	is_string(s)
	contains(s, "${{")
	found := regex.find_all_string_submatch_n(`\$\{\{\s*(.*?)\s*\}\}`, s, -1)
	replacements := {m[0]: v | some m in found; v := lookup(m[1], env)}
} else := s

lookup("ctx.stage", env) := env.ctx.stage

# ctx.project is unknown when the Stage's namespace is (""): the expression stays.
lookup("ctx.project", env) := env.ctx.project if env.ctx.project != ""

lookup(e, env) := v if {
	m := regex.find_all_string_submatch_n(`^vars\.([A-Za-z_][A-Za-z0-9_]*)$`, e, 1)
	v := scalar(var(env, m[0][1]))
}

lookup(e, env) := v if {
	m := regex.find_all_string_submatch_n(`^vars\[\s*['"]([^'"]+)['"]\s*\]$`, e, 1)
	v := scalar(var(env, m[0][1]))
}

# var is the value of the var name in env: env.vars's, else that of the first
# of the layers under them (env.under, an array of name -> value objects, the
# Stage's vars for a step with vars of its own) that defines it. Each layer is
# looked up by name: a step's vars are never merged with a copy of the Stage's.
var(env, name) := v if {
	v := env.vars[name]
} else := vs[0] if {
	vs := [v | some layer in object.get(env, "under", []); v := layer[name]]
	count(vs) > 0
}

scalar(v) := v if is_string(v)

scalar(v) := sprintf("%v", [v]) if is_number(v)

scalar(v) := sprintf("%v", [v]) if is_boolean(v)

# resolve_vars resolves an ordered list of {name, value} definitions layered over
# base (a name -> value object): later definitions win, a value may use ctx and
# the vars defined before it. Three passes resolve chains three deep; anything
# deeper stays unknown.
resolve_vars(defs, base, ctx) := raw if {
	raw := layer(defs, base)
	every v in raw {
		not has_expr_value(v)
	}
} else := pass3 if {
	raw := layer(defs, base)
	pass1 := {k: subst(v, {"ctx": ctx, "vars": raw}) | some k, v in raw}
	pass2 := {k: subst(v, {"ctx": ctx, "vars": pass1}) | some k, v in pass1}
	pass3 := {k: subst(v, {"ctx": ctx, "vars": pass2}) | some k, v in pass2}
}

# resolve_over resolves an ordered list of {name, value} definitions (a
# step's own vars) layered over start (a name -> value object) and over under, the layers of vars below them (see var;
# resolved already, and looked up by name, never copied): a name -> value
# object of the names defs define, later definitions winning, a value reading
# ctx, the other definitions and the layers. Three passes, as resolve_vars.
resolve_over(defs, start, under, ctx) := raw if {
	raw := layer(defs, start)
	every v in raw {
		not has_expr_value(v)
	}
} else := pass3 if {
	raw := layer(defs, start)
	pass1 := {k: subst(v, {"ctx": ctx, "vars": raw, "under": under}) | some k, v in raw}
	pass2 := {k: subst(v, {"ctx": ctx, "vars": pass1, "under": under}) | some k, v in pass1}
	pass3 := {k: subst(v, {"ctx": ctx, "vars": pass2, "under": under}) | some k, v in pass2}
}

# layer puts the definitions over base; a name defined twice keeps its last value.
# One pass, keyed by name: object.union_n keeps the last of each key (each value
# wrapped in an array, which it never merges), where finding each name's last
# definition by scanning the list cost every var a pass over every var (4,000
# vars took 24-45 s).
layer(defs, base) := base if {
	count(defs) == 0
} else := object.union(base, {name: wrapped[0] | some name, wrapped in last_values(defs)})

# last_values maps each name defs define (with a value that is not null) to
# [its last value]. (Each key goes in through object.union: the type checkers
# of OPA 1.0 and 1.7 reject an object literal with a variable key built in a
# function's head.)
last_values(defs) := object.union_n([object.union({}, {d.name: [d.value]}) |
	some d in defs
	is_object(d)
	is_string(d.name)
	not null_value(d)
])

has_expr_value(v) if {
	is_string(v)
	contains(v, "${")
}

null_value(d) if object.get(d, "value", null) == null

# outputs_alias returns the step alias whose `commit` output an expression reads:
# outputs.A.commit, outputs['A'].commit, task.outputs.A.commit.
outputs_alias(s) := m[0][2] if {
	m := regex.find_all_string_submatch_n(`(^|[^.\w])(?:task\.)?outputs\.([A-Za-z0-9_-]+)\.commit\b`, s, 1)
	count(m) == 1
} else := m[0][2] if {
	m := regex.find_all_string_submatch_n(`(^|[^.\w])(?:task\.)?outputs\[\s*['"]([^'"]+)['"]\s*\]\.commit\b`, s, 1)
	count(m) == 1
}
