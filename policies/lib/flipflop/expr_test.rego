package lib.flipflop.expr_test

import data.lib.flipflop.expr

env := {"ctx": {"stage": "dev", "project": "acme"}, "vars": {"branch": "env/dev", "n": 3, "repo": "https://git.example/acme/deploy.git"}}

test_substitutes_ctx_and_vars if {
	expr.subst("${{ ctx.stage }}", env) == "dev"
	expr.subst("env/${{ctx.stage}}", env) == "env/dev"
	expr.subst("${{ ctx.project }}-${{ ctx.stage }}", env) == "acme-dev"
	expr.subst("${{ vars.branch }}", env) == "env/dev"
	expr.subst("${{ vars['branch'] }}", env) == "env/dev"
	expr.subst(`${{ vars["repo"] }}`, env) == "https://git.example/acme/deploy.git"
	expr.subst("n=${{ vars.n }}", env) == "n=3"
}

test_unknown_expressions_stay if {
	out := expr.subst("${{ outputs.commit.commit }}", env)
	not expr.known(out)
	out2 := expr.subst("${{ vars.missing }}", env)
	not expr.known(out2)
	out3 := expr.subst("${{ ctx.stage }}/${{ quote(vars.branch) }}", env)
	startswith(out3, "dev/")
	not expr.known(out3)
}

test_non_strings_pass_through if {
	expr.subst(true, env) == true
	expr.subst(null, env) == null
	expr.known("main")
	not expr.known(7)
}

test_resolve_vars_layers_and_chains if {
	vars := expr.resolve_vars(
		[
			{"name": "a", "value": "x-${{ ctx.stage }}"},
			{"name": "b", "value": "${{ vars.a }}/y"},
			{"name": "c", "value": "${{ vars.b }}/z"},
			{"name": "base"},
		],
		{"base": "from-base", "a": "overridden"},
		{"stage": "qa", "project": "acme"},
	)
	vars == {"a": "x-qa", "b": "x-qa/y", "c": "x-qa/y/z", "base": "from-base"}
}

test_outputs_alias if {
	expr.outputs_alias("${{ outputs.commit.commit }}") == "commit"
	expr.outputs_alias("${{ task.outputs['commit'].commit }}") == "commit"
	expr.outputs_alias("${{ outputs['wait-for-pr'].commit }}") == "wait-for-pr"
	not expr.outputs_alias("${{ commitFrom(vars.repo).ID }}")
}
