# METADATA
# title: Expression syntax
# description: |
#   The expressions of promotion steps that Kargo's expression language cannot
#   parse. Kargo finds each expression of a string as
#   pkg/expressions/json_templates.go, nextExpression, does: from the first
#   `${{` (or, from v1.9, `${%`) to the first `}}` (`%}`) after it, an
#   expression that is never closed being an error; and compiles its text with
#   expr-lang (evaluateExpression). Both happen when a Promotion runs the step,
#   so the Stage is accepted and then fails at that step.
#
#   Without a parser, only what certainly fails to compile is judged: an
#   unclosed expression, an empty one, a string literal that never ends, and
#   brackets that do not pair up once literals are set aside. An expression
#   with a comment, or nested deeper than the check reads, is not judged.
package lib.flipflop.expr_syntax

import data.lib.flipflop.config

# json_pattern finds the expressions of a JSON text, whose strings cannot
# hold a raw quote, so that no match crosses from one string to the next:
# leftmost first, each ending at the first closing delimiter, as Kargo reads
# each string.
default json_pattern := `\$\{\{((?:[^"\\]|\\.)*?)\}\}`

json_pattern := `\$\{\{((?:[^"\\]|\\.)*?)\}\}|\$\{%((?:[^"\\]|\\.)*?)%\}` if config.kargo_at_least([1, 9])

# pattern finds the expressions of one string the same way.
default pattern := `(?s)\$\{\{(.*?)\}\}`

pattern := `(?s)\$\{\{(.*?)\}\}|\$\{%(.*?)%\}` if config.kargo_at_least([1, 9])

# opening is where an expression starts.
default opening := `\$\{\{`

opening := `\$\{\{|\$\{%` if config.kargo_at_least([1, 9])

# applies: expressions came with Kargo v1.1.
applies if config.kargo_at_least([1, 1])

# suspect holds when a value, marshalled to JSON (every string of it at once),
# may hold an expression Kargo cannot parse: a few evaluations however many
# expressions it has, and false (undefined) for almost every value. Only a
# suspect value's strings are read one by one (problems).
suspect(value) := suspect_json(json.marshal(value))

# suspect_json is suspect for a value already marshalled.
suspect_json(text) if {
	applies
	not regex.match(simple, text)
	suspect_text(text)
}

# An operator next to a delimiter is suspect even in a simple expression.
suspect_json(text) if {
	applies
	regex.match(json_dangling, text)
}

# json_dangling finds an opening delimiter followed by an operator that is
# only binary, or an operator followed by a closing delimiter (a superset of
# dangling: problems decides).
json_dangling := `\$\{[{%]\s*(?:[*/%^<>=&|?]|(?:and|or|in)\b)|(?:[-+*/%^<>=&|?!]|[^.\w$](?:and|or|not|in))\s*[}%]\}`

# simple matches a JSON text whose expressions are all simple: not blank,
# without a literal, a bracket or an escape (outputs.push.commit,
# ctx.stage): none of them can fail the checks below, so such a text (most
# of them) costs one match.
simple := concat("", [`^(?:[^$]|\$+[^{$]|\$+\{[^{%$]|\$+\{?$`, simple_body(`\{`, `\}`), simple_body("%", "%"), ")*$"]) if {
	config.kargo_at_least([1, 9])
} else := concat("", [`^(?:[^$]|\$+[^{$]|\$+\{[^{$]|\$+\{?$`, simple_body(`\{`, `\}`), ")*$"])

simple_body(open, close) := sprintf(`|\$+\{%s[^"'%s\\(){}\[\]%%]*[^\s"'%s\\(){}\[\]%%][^"'%s\\(){}\[\]%%]*%s\}`, [open, "`", "`", "`", close])

suspect_text(text) if regex.match(opening, regex.replace(text, json_pattern, ""))

suspect_text(text) if {
	bodies := [b | some m in regex.find_all_string_submatch_n(json_pattern, text, -1); b := concat("", array.slice(m, 1, 3))]
	joined := json.unmarshal(concat("", [`"`, concat(`\u0001`, bodies), `"`]))
	not all_well_formed(joined)
}

# all_well_formed: each body (separated by \x01) is non-blank, has its
# literals closed and its brackets paired.
all_well_formed(joined) if {
	not regex.match(`(?:^|\x{1})\s*(?:$|\x{1})`, joined)
	stripped := regex.replace(joined, literal, "L")
	not regex.match(quote_or_comment, stripped)
	not regex.match(`[\[\](){}]`, paired(stripped))
	not regex.match(dangling, stripped)
}

# dangling finds, in a text whose literals are set aside (bodies separated
# by \x01), a body that ends with an operator, which still needs its right
# operand (`1 +`, `a ==`, `x and`, `a ??`), or that begins with one that is
# only binary (`* 2`, `&& x`): unary -, +, ! and not may begin one. A keyword
# operator counts only when it is no member name (`a.in`).
dangling := `(?:[-+*/%^<>=&|?!]|(?:^|[^.\w$])(?:and|or|not|in))\s*(?:$|\x{1})|(?:^|\x{1})\s*(?:[*/%^<>=&|?]|(?:and|or|in)(?:$|[^\w$]))`

# quote is a quote that opens a literal; quote_or_comment, that or a comment.
quote := concat("", [`["'`, "`", "]"])

quote_or_comment := concat("", [`["'`, "`", `]|//|/\*`])

# literal is a string literal of expr-lang: double- or single-quoted with
# escapes, or a raw string in backquotes; never across bodies.
literal := "\"(?:[^\"\\\\\\x{1}]|\\\\.)*\"|'(?:[^'\\\\\\x{1}]|\\\\.)*'|`[^`\\x{1}]*`"

# innermost is a pair of brackets with no bracket (and no body boundary)
# between them.
innermost := `\([^\[\](){}\x{1}]*\)|\[[^\[\](){}\x{1}]*\]|\{[^\[\](){}\x{1}]*\}`

# paired removes innermost pairs eight times over: brackets nested up to
# eight deep are all removed, and what is left of deeper ones is no proof.
paired(s) := regex.replace(
	regex.replace(
		regex.replace(
			regex.replace(
				regex.replace(regex.replace(regex.replace(regex.replace(s, innermost, "P"), innermost, "P"), innermost, "P"), innermost, "P"),
				innermost, "P",
			),
			innermost, "P",
		),
		innermost, "P",
	),
	innermost, "P",
)

# problems lists why the string s fails to parse, as Kargo reads it: one
# entry per expression that certainly fails (its text and the reason), and
# one for an expression never closed.
problems(s) := array.concat(
	[{"expression": "", "reason": "unclosed"} | regex.match(opening, regex.replace(s, pattern, ""))],
	[{"expression": body, "reason": r} |
		some m in regex.find_all_string_submatch_n(pattern, s, -1)
		body := concat("", array.slice(m, 1, 3))
		r := reason(body)
	],
)

# reason is why an expression's text certainly fails to compile (undefined
# when it may compile).
reason(body) := "empty" if {
	trim_space(body) == ""
} else := "unterminated-literal" if {
	stripped := regex.replace(body, literal, "L")
	not regex.match(`//|/\*`, stripped)
	regex.match(quote, stripped)
} else := "unbalanced-brackets" if {
	stripped := regex.replace(body, literal, "L")
	not regex.match(quote_or_comment, stripped)
	p := paired(stripped)
	regex.match(`[\[\](){}]`, p)

	# Pairing has come to an end: what is left can never pair (brackets nested
	# deeper than eight would still be pairing, and are not judged).
	regex.replace(p, innermost, "P") == p
} else := "dangling-operator" if dangles(body)

# dangles: an operator of the body (literals set aside, no comment) has no
# operand on one side.
dangles(body) if {
	stripped := regex.replace(body, literal, "L")
	not regex.match(quote_or_comment, stripped)
	regex.match(dangling, stripped)
}
