#!/usr/bin/env bash
# Builds the policy hosts of hack/hosts/matrix (opa, conftest, gator) as
# released: each from its own module at that version, fetched from the Go
# module proxy, built inside the module's directory with its own go.mod and
# go.sum (and replace directives), so each binary carries the OPA its users
# download -- not the one of this repository or of another tool. Also builds
# Regal from tools/regal.
#
# Binaries are cached outside the clone, by content, in
#   ${FLIPFLOP_CACHE:-$HOME/.cache/flipflop}/hosts/<tool>@<version>/<tool>
# keyed by this script, the matrix line and the Go version: an up-to-date
# binary costs nothing (a fresh clone on a warm machine takes seconds), a
# missing or stale one is rebuilt. Builds run in parallel (HOSTS_JOBS, default 2).
#
# Usage: build.sh [-l LINKDIR] [-p] SPEC...
#   SPEC     tool@version (a matrix line), "default" (the lines marked default),
#            "all" (every line), or "regal" (tools/regal)
#   -l DIR   also symlink each binary as DIR/<tool> (only sensible for one
#            version per tool)
#   -p       print "tool@version PATH" for each binary on stdout
# Progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
matrix=$here/matrix
cache=${FLIPFLOP_CACHE:-$HOME/.cache/flipflop}/hosts
jobs=${HOSTS_JOBS:-2}
link=""
print=""
while getopts "l:p" opt; do
  case $opt in
    l) link=$OPTARG ;;
    p) print=1 ;;
    *) echo "usage: $0 [-l LINKDIR] [-p] SPEC..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-l LINKDIR] [-p] SPEC..." >&2; exit 2; }

gover=$(go env GOVERSION)
self=$(sha256sum "$0" | cut -c1-16)

# lines prints the matrix lines a spec selects.
lines() {
  case $1 in
    all) grep -Ev '^\s*(#|$)' "$matrix" ;;
    default) grep -Ev '^\s*(#|$)' "$matrix" | awk '$5 == "yes"' ;;
    *@*) grep -Ev '^\s*(#|$)' "$matrix" | awk -v t="${1%@*}" -v v="${1#*@}" '$1 == t && $2 == v' ;;
    *) return 1 ;;
  esac
}

# ldflags stamps the version the way each project's release builds do
# (goreleaser / Makefile); OPA's version is in its source.
ldflags() {
  local tool=$1 version=$2
  case $tool in
    # conftest moved its version variable: internal/commands (<= v0.6x), internal/version (later).
    conftest) echo "-s -w -X github.com/open-policy-agent/conftest/internal/commands.version=${version#v} -X github.com/open-policy-agent/conftest/internal/version.Version=${version#v}" ;;
    gator|gatekeeper) echo "-s -w -X github.com/open-policy-agent/gatekeeper/v3/pkg/version.Version=$version" ;;
    *) echo "-s -w" ;;
  esac
}

# opa_in prints the OPA module version a binary was built with: a dependency
# of conftest and gator; opa itself (the main module, "(devel)" to the build
# info when built from its directory) says it with `opa version`.
opa_in() {
  if [ "$2" = opa ]; then
    "$1" version | awk '$1 == "Version:" { print "v" $2 }'
  else
    go version -m "$1" | awk '$1 == "dep" && $2 == "github.com/open-policy-agent/opa" { print $3 }'
  fi
}

# build TOOL VERSION MODULE PACKAGE OPA COLD: build one matrix line unless cached.
build() {
  local tool=$1 version=$2 module=$3 pkg=$4 opa=$5 cold=$6
  local dir=$cache/$tool@$version bin key
  bin=$dir/$tool
  key="$self $gover $tool $version $module $pkg"
  if [ -x "$bin" ] && [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ]; then
    return 0
  fi
  mkdir -p "$dir"
  (
    # Another checkout may be building the same binary: wait for it.
    flock 9
    if [ -x "$bin" ] && [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ]; then
      exit 0
    fi
    echo "hosts: building $tool@$version from $module@$version (its own go.mod; cold ~${cold}s on 2 cores, a relink with a warm Go cache)" >&2
    local start moddir
    start=$(date +%s)
    moddir=$(cd "${TMPDIR:-/tmp}" && GOFLAGS= GO111MODULE=on go mod download -json "$module@$version" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
    if [ -z "$moddir" ] || [ ! -f "$moddir/go.mod" ]; then
      echo "hosts: go mod download $module@$version failed" >&2
      exit 1
    fi
    # The module cache is read-only: -mod=readonly never writes go.mod/go.sum.
    # GOTOOLCHAIN=local: build with this Go even when the release names a newer toolchain.
    (cd "$moddir" && GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local GOWORK=off \
      go build -ldflags "$(ldflags "$tool" "$version")" -o "$dir/.$tool.tmp" "$pkg")
    local got
    got=$(opa_in "$dir/.$tool.tmp" "$tool")
    if [ "$got" != "$opa" ]; then
      echo "hosts: $tool@$version was built with OPA ${got:-?}, the matrix says $opa" >&2
      rm -f "$dir/.$tool.tmp"
      exit 1
    fi
    mv -f "$dir/.$tool.tmp" "$bin"
    echo "$key" >"$dir/.key"
    echo "hosts: built $tool@$version (OPA $got) in $(($(date +%s) - start))s" >&2
  ) 9>"$dir/.lock"
}

# Regal comes from tools/regal (its go.mod pins the release).
regal_mod=$root/tools/regal
regal_version() {
  awk '$1 == "tool" { next } $1 == "github.com/open-policy-agent/regal" { print $2 }' "$regal_mod/go.mod"
}

# build_regal VERSION: build Regal unless cached.
build_regal() {
  local version=$1 dir bin key
  dir=$cache/regal@$version
  bin=$dir/regal
  key="$self $gover $(cat "$regal_mod/go.mod" "$regal_mod/go.sum" | sha256sum | cut -c1-16)"
  if [ -x "$bin" ] && [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ]; then
    return 0
  fi
  mkdir -p "$dir"
  (
    flock 9
    if [ -x "$bin" ] && [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ]; then
      exit 0
    fi
    echo "hosts: building regal@$version from tools/regal (cold ~40s on 2 cores)" >&2
    local start
    start=$(date +%s)
    (cd "$regal_mod" && GOFLAGS="-mod=readonly -buildvcs=false" GOWORK=off go build -o "$dir/.regal.tmp" github.com/open-policy-agent/regal)
    mv -f "$dir/.regal.tmp" "$bin"
    echo "$key" >"$dir/.key"
    echo "hosts: built regal@$version in $(($(date +%s) - start))s" >&2
  ) 9>"$dir/.lock"
}

selected=()
want_regal=""
for spec in "$@"; do
  if [ "$spec" = regal ]; then
    want_regal=1
    continue
  fi
  sel=$(lines "$spec" || true)
  if [ -z "$sel" ]; then
    echo "hosts: no matrix line for '$spec' in $matrix" >&2
    exit 2
  fi
  while IFS= read -r l; do selected+=("$l"); done <<<"$sel"
done

regal_version=""
if [ -n "$want_regal" ]; then
  regal_version=$(regal_version)
  [ -n "$regal_version" ] || { echo "hosts: no regal version in $regal_mod/go.mod" >&2; exit 1; }
fi

# Build what is missing, HOSTS_JOBS at a time.
failflag=$(mktemp)
rm -f "$failflag"
trap 'rm -f "$failflag"' EXIT
throttle() { while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done; }
for l in ${selected[@]+"${selected[@]}"}; do
  read -r tool version module pkg _ opa cold _ <<<"$l"
  { build "$tool" "$version" "$module" "$pkg" "$opa" "$cold" || touch "$failflag"; } &
  throttle
done
if [ -n "$regal_version" ]; then
  { build_regal "$regal_version" || touch "$failflag"; } &
fi
wait
[ ! -e "$failflag" ] || { echo "hosts: build failed" >&2; exit 1; }

out() {
  local tool=$1 version=$2
  [ -z "$print" ] || echo "$tool@$version $cache/$tool@$version/$tool"
  if [ -n "$link" ]; then
    mkdir -p "$link"
    ln -sfn "$cache/$tool@$version/$tool" "$link/$tool"
  fi
}
for l in ${selected[@]+"${selected[@]}"}; do
  read -r tool version _ <<<"$l"
  out "$tool" "$version"
done
[ -z "$regal_version" ] || out regal "$regal_version"
