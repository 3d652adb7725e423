# METADATA
# title: Repository identity
# description: |
#   One repository however its URL is written: `git@host:org/repo.git`,
#   `ssh://git@host/org/repo`, `https://host/org/repo(.git)(/)`, any case,
#   credentials and ports stripped. Pure functions.
package lib.flipflop.repo

# id returns the identity of a repository URL: "host/path", lower case, without
# scheme, credentials, port, trailing "/" or ".git".
id(url) := ident if {
	u := lower(trim_space(url))
	no_scheme := strip_scheme(u)
	authority_and_path := scp_to_path(no_scheme)
	parts := split(authority_and_path, "/")
	host := strip_port(strip_userinfo(parts[0]))
	path := concat("/", array.slice(parts, 1, count(parts)))
	ident := strip_tail(concat("/", [host, path]))
}

strip_scheme(u) := substring(u, i + 3, -1) if {
	i := indexof(u, "://")
	i > 0
} else := u

# scp form: user@host:org/repo (no scheme, a ":" before the first "/").
scp_to_path(u) := concat("/", [substring(u, 0, i), substring(u, i + 1, -1)]) if {
	i := indexof(u, ":")
	i > 0
	slash := indexof(u, "/")
	scp_colon(i, slash)
	not regex.match(`^[^/]*:[0-9]+(/|$)`, u)
} else := u

scp_colon(_, slash) if slash < 0

scp_colon(colon, slash) if {
	slash >= 0
	colon < slash
}

strip_userinfo(authority) := substring(authority, i + 1, -1) if {
	i := indexof(authority, "@")
	i >= 0
} else := authority

strip_port(host) := h if {
	regex.match(`:[0-9]*$`, host)
	h := regex.replace(host, `:[0-9]*$`, "")
} else := host

strip_tail(s) := strip_git(trim_right(s, "/"))

strip_git(s) := trim_suffix(s, ".git")

# display returns a short form of a repository URL for messages.
display(url) := id(url)
