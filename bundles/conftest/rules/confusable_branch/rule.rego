# METADATA
# title: Branch names that differ only by look-alike or invisible characters
# description: |
#   Two branch names of one repository that Applications track or Stages push
#   to differ only by characters a reader cannot see (a zero-width space, a
#   soft hyphen, a bidirectional control) or cannot tell apart (a Cyrillic `а`
#   for a Latin `a`). To Git they are different branches, so no contradiction
#   between them is found, and the one with the odd character is most likely a
#   typo or a trap.
# related_resources:
#   - ref: https://git-scm.com/docs/git-check-ref-format
#     description: git check-ref-format, what a branch name may hold (any Unicode)
#   - ref: https://www.unicode.org/reports/tr39/
#     description: Unicode Technical Standard #39, confusable characters
#   - ref: https://trojansource.codes/
#     description: Trojan Source (CVE-2021-42574), invisible and bidirectional characters in reviewed text
# custom:
#   id: confusable-branch
#   severity: warning
#   why: |
#     flipflop compares branches by name, as Git and Argo CD do. A branch written
#     `main\u200b` (with a zero-width space) or `mаin` (with a Cyrillic `а`) looks like
#     `main` in every editor, review tool and terminal, yet it is another branch: an
#     Application that tracks it follows a branch nobody pushes to (or that does not
#     exist), and a Stage that pushes to it moves a branch no Application follows. The
#     contradictions such a Stage would cause with the others on `main` are not
#     reported either, because the names differ. A pull request can use this to slip
#     a change past a reviewer.
#   remediation: |
#     Write the branch name in plain ASCII, as the other objects do (the finding says
#     which name it looks like and which characters differ), and check the change
#     that introduced it.
package lib.flipflop.rules.confusable_branch

import data.lib.flipflop.model
import data.lib.flipflop.result

# odd_branches lists the branch names the estate uses that hold an invisible
# or a look-alike character (odd), each with its repository and the object
# that names it: most names hold none, and only the odd ones are made records.
odd_branches := array.concat(
	[{"repo": s.pointer.repo, "branch": s.pointer.name, "ref": s.app.ref, "stage": "", "app": s.app.key, "pointer": s.pointer} |
		some s in model.sources
		s.pointer.known
		s.pointer.kind == "branch"
		odd(s.pointer.name)
	],
	[{"repo": w.pointer.repo, "branch": w.pointer.name, "ref": w.stage.ref, "stage": w.stage.key, "app": "", "pointer": w.pointer, "write": w.id} |
		some w in model.writers
		w.pointer.known
		w.pointer.kind == "branch"
		odd(w.pointer.name)
	],
)

# invisible are the format characters (Unicode Cf: zero-width and
# bidirectional controls, soft hyphen, byte order mark, ...).
invisible := `\p{Cf}`

# look_alikes maps characters that look like a Latin letter or digit to it
# (Cyrillic, Greek, fullwidth and a few others; a selection of Unicode's
# confusables for the characters branch names use).
look_alikes := {
	"а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
	"ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g", "ı": "i", "ο": "o", "α": "a", "ν": "v",
	"τ": "t", "κ": "k", "ρ": "p", "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O",
	"Р": "P", "С": "C", "Т": "T", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Α": "A", "Β": "B", "Ε": "E",
	"Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y",
	"Χ": "X", "ℓ": "l", "∕": "/", "⁄": "/", "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-",
	"０": "0", "１": "1", "２": "2", "３": "3", "４": "4", "５": "5", "６": "6", "７": "7", "８": "8", "９": "9",
}

# skeleton is what a branch name looks like: invisible characters dropped,
# look-alikes replaced by the character they imitate.
skeleton(b) := strings.replace_n(look_alikes, regex.replace(b, invisible, ""))

# odd reports a name with an invisible or a look-alike character.
odd(b) if regex.match(odd_pattern, b)

# odd_pattern matches a name whose skeleton differs from it: one with an
# invisible character or a look-alike (one match per name, where the
# skeleton takes a replace of each kind and a comparison).
odd_pattern := concat("|", array.concat([invisible], [regex.replace(k, `[.*+?()|\[\]{}^$\\-]`, `\$0`) | some k, _ in look_alikes]))

# groups: per repository and skeleton, the distinct names that share it, when
# one of them is odd. A name that is not odd is its own skeleton, so a group
# is the odd names with that skeleton, and the skeleton itself when some
# object names it: only odd names are looked at twice.
groups := {[r, sk]: names |
	some [r, sk] in {[x.repo, skeleton(x.branch)] | some x in odd_branches}
	names := {x.branch | some x in odd_branches; x.repo == r; skeleton(x.branch) == sk} | {sk | named[[r, sk]]}
	count(names) > 1
}

# named are the [repository, branch] pairs the estate names (read only when
# a name is odd).
named := {[p.repo, p.name] |
	some p in array.concat([s.pointer | some s in model.sources], [w.pointer | some w in model.writers])
	p.known
	p.kind == "branch"
}

report contains finding if {
	some [r, sk], names in groups
	some b in names
	odd(b)
	plain := [n | some n in names; not odd(n)]
	uses := [x | some x in odd_branches; x.repo == r; x.branch == b]
	finding := result.fail(
		rego.metadata.chain(),
		sprintf("Branch %s of %s looks like %s but is another branch to Git: %s. Did you mean %s?", [
			visible(b), r, looks_like(plain, sk), differs(b), looks_like(plain, sk),
		]),
		result.refs([x.ref | some x in uses]),
		sprintf("%s@%s", [r, visible(b)]),
		result.about(
			[x.pointer | some x in uses],
			{x.stage | some x in uses; x.stage != ""}, {x.app | some x in uses; x.app != ""}, [],
			{x.write | some x in uses; x.write},
		),
		{"branch": b, "looksLike": sk, "repo": r},
	)
}

looks_like(plain, _) := sprintf("%q", [plain[0]]) if count(plain) > 0

looks_like(plain, sk) := sprintf("%q", [sk]) if count(plain) == 0

# visible spells a name with its odd characters marked: "ma⟨U+0456⟩n".
visible(b) := sprintf("%q", [strings.replace_n(marks, b)])

marks := object.union(
	{c: sprintf("<look-alike of %s>", [l]) | some c, l in look_alikes},
	{c: sprintf("<%s>", [n]) | some c, n in invisible_names},
)

# The invisible characters most often met, by name (others are still dropped
# by skeleton, and shown escaped by flipflop's output).
invisible_names := {
	"\u200b": "zero-width space", "\u200c": "zero-width non-joiner", "\u200d": "zero-width joiner",
	"\u2060": "word joiner", "\ufeff": "zero-width no-break space", "\u00ad": "soft hyphen",
	"\u200e": "left-to-right mark", "\u200f": "right-to-left mark", "\u202a": "left-to-right embedding",
	"\u202b": "right-to-left embedding", "\u202c": "pop directional formatting",
	"\u202d": "left-to-right override", "\u202e": "right-to-left override",
	"\u2066": "left-to-right isolate", "\u2067": "right-to-left isolate",
	"\u2068": "first strong isolate", "\u2069": "pop directional isolate",
}

differs(b) := "it holds an invisible character" if {
	regex.match(invisible, b)
	strings.replace_n(look_alikes, b) == b
} else := "it holds a look-alike character" if {
	not regex.match(invisible, b)
} else := "it holds invisible and look-alike characters"
