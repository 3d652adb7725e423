package lib.flipflop.expr_syntax_test

import data.lib.flipflop.config
import data.lib.flipflop.expr_syntax

reasons(s) := [p.reason | some p in expr_syntax.problems(s)]

test_well_formed_expressions_have_no_problem if {
	every s in [
		"${{ outputs.push.commit }}",
		`${{ imageFrom("ghcr.io/acme/app").Tag }}`,
		"env/${{ ctx.stage }}",
		"${{ vars.a }}-${{ vars.b }}",
		`${{ "}" + 'a(' }}`,
		"${{ a[0] }}",
		"${{ map(x, {a: #}) }}",
		"no expression at all, ${ not one",
	] {
		reasons(s) == []
		not expr_syntax.suspect({"x": s})
	}
}

# A comment, or brackets nested deeper than the check reads, make a value
# suspect, and the check of its strings judges nothing.
test_comments_and_deep_nesting_are_not_judged if {
	every s in ["${{ a // a comment ( }}", "${{ a /* ' */ }}", "${{ ((((((((((a)))))))))) }}", "${{ ((((((((((a))))))))) }}"] {
		reasons(s) == []
	}
}

test_each_certain_failure if {
	reasons("${{ outputs.push.commit") == ["unclosed"]
	reasons("${{ }}") == ["empty"]
	reasons("a${{   }}b") == ["empty"]
	reasons(`${{ imageFrom("ghcr.io/acme/app).Tag }}`) == ["unterminated-literal"]
	reasons("${{ imageFrom('x'.Tag }}") == ["unbalanced-brackets"]
	reasons("${{ a] }}") == ["unbalanced-brackets"]
	reasons("${{ vars.a }} and ${{ vars.b") == ["unclosed"]
}

# Kargo ends an expression at the first }} after ${{: a map literal closed
# by }} inside an expression ends it early.
test_expression_ends_at_first_closing if {
	reasons("${{ {a: {b: 1}} }}") == ["unbalanced-brackets"]
}

test_suspect_finds_each_failure_in_a_config if {
	every s in ["${{ x", "${{ }}", `${{ f("a) }}`, "${{ f(a }}"] {
		expr_syntax.suspect({"config": {"nested": [{"value": s}]}})
	}
}

test_alternative_delimiters_from_v1_9 if {
	reasons("${% f(a %}") == ["unbalanced-brackets"] with config.settings as {"kargo_version": "1.9.0"}
	reasons("${% f(a %}") == [] with config.settings as {"kargo_version": "1.8.0"}
}

test_not_before_v1_1 if {
	not expr_syntax.suspect({"x": "${{ x"}) with config.settings as {"kargo_version": "1.0.0"}
}

# A run of dollars before ${{ does not hide the expression from the check.
test_dollar_runs if {
	reasons("$${{ x(") == ["unclosed"]
	expr_syntax.suspect({"x": "$${{ x("})
	expr_syntax.suspect({"x": "$$${{ f( }}"})
	not expr_syntax.suspect({"x": "$5 and $${{ a.b }} $"})
}

# An operator left without its operand, found in a simple expression too.
test_dangling_operator if {
	[p.reason | some p in expr_syntax.problems("${{ outputs.push.commit + }}")] == ["dangling-operator"]
	[p.reason | some p in expr_syntax.problems("${{ == ctx.stage }}")] == ["dangling-operator"]
	[p.reason | some p in expr_syntax.problems("${{ vars.a and }}")] == ["dangling-operator"]
	expr_syntax.problems("${{ -1 }} ${{ !vars.a }} ${{ not vars.a }} ${{ a.in }} ${{ 'x +' }}") == []
	expr_syntax.suspect({"path": "${{ outputs.push.commit + }}"})
	expr_syntax.suspect({"path": "${{ in vars.list }}"})
	not expr_syntax.suspect({"path": "${{ outputs.push.commit }}", "b": "${{ -1 }}"})
}
