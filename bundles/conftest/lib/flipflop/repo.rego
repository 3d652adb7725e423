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

# kargo_key returns a Git URL as Kargo's urls.NormalizeGit writes it, which is
# how argocd-update matches its sources[] entries to an Application's sources
# when it applies an update: lower case, one trailing "/" and then ".git" cut,
# credentials dropped from http(s) URLs (kept in ssh ones), the scp form
# written as ssh://; the scheme is kept, so https and ssh URLs differ. A URL of
# another form is returned as it is.
kargo_key(url) := sprintf("%s://%s%s", [scheme, authority, kargo_path(path)]) if {
	u := lower(trim_space(url))
	regex.match(`^[a-z][a-z0-9+.-]*://`, u)
	scheme := substring(u, 0, indexof(u, "://"))
	rest := substring(u, indexof(u, "://") + 3, -1)
	slash := indexof(rest, "/")
	authority := kargo_authority(scheme, authority_of(rest, slash))
	path := path_of(rest, slash)
} else := sprintf("ssh://%s%s", [m[0][1], kargo_path(concat("", ["/", m[0][3]]))]) if {
	m := regex.find_all_string_submatch_n(`^((?:[\w-]+@)?[\w-]+(?:\.[\w-]+)*)(:(.*))?$`, lower(trim_space(url)), 1)
	count(m) == 1
} else := url

authority_of(rest, -1) := rest

authority_of(rest, slash) := substring(rest, 0, slash) if slash >= 0

path_of(_, -1) := ""

path_of(rest, slash) := substring(rest, slash, -1) if slash >= 0

kargo_authority("ssh", authority) := authority

kargo_authority(scheme, authority) := strip_userinfo(authority) if scheme != "ssh"

kargo_path(p) := trim_suffix(trim_suffix(p, "/"), ".git")
