# METADATA
# title: Repository identity
# description: |
#   One repository however its URL is written: `git@host:org/repo.git`,
#   `ssh://git@host/org/repo`, `https://host/org/repo(.git)(/)`, any case,
#   credentials and ports stripped. Pure functions.
package lib.flipflop.repo

# id returns the identity of a repository URL: "host/path", lower case, without
# scheme, credentials, port, trailing "/" or ".git".
id(url) := strip_tail(host_and_path(lower(trim_space(url)))) if is_string(url)

id(url) := "" if not is_string(url)

# With a scheme: scheme://[userinfo@]host[:port]/path.
host_and_path(u) := join_host(parts) if {
	regex.match(`^[a-z][a-z0-9+.-]*://`, u)
	parts := split(substring(u, indexof(u, "://") + 3, -1), "/")
} else := concat("/", [strip_userinfo(m[0][1]), m[0][2]]) if {
	# scp form: [user@]host:path (no scheme, a ":" before the first "/", not a port).
	m := regex.find_all_string_submatch_n(`^([^/:]+):([^/:][^:]*)$`, u, 1)
	count(m) == 1
	not regex.match(`^[0-9]+(/|$)`, m[0][2])
} else := join_host(split(u, "/"))

join_host(parts) := concat("/", array.concat([strip_port(strip_userinfo(parts[0]))], array.slice(parts, 1, count(parts))))

strip_userinfo(authority) := substring(authority, i + 1, -1) if {
	contains(authority, "@")
	i := (count(authority) - 1) - indexof(strings.reverse(authority), "@")
} else := authority

strip_port(host) := regex.replace(host, `:[0-9]*$`, "")

strip_tail(s) := trim_suffix(trim_right(s, "/"), ".git")
