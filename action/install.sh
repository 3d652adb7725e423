#!/usr/bin/env bash
# Installs flipflop for the GitHub Action (action.yml) and puts it on the PATH
# of the job's later steps ($GITHUB_PATH).
#
# FLIPFLOP_VERSION vX.Y.Z: the release archive for this runner's OS and
# architecture, verified against the release's checksums.txt. Anything else (a
# branch or a commit of the action): built from the action's source in
# $ACTION_PATH with the runner's Go.
#
# FLIPFLOP_RELEASES_URL (default: GitHub's release downloads) and
# FLIPFLOP_INSTALL_DIR (default: $RUNNER_TEMP/flipflop-bin) exist for tests.
set -euo pipefail

fail() { echo "::error title=flipflop install::$*" >&2; exit 1; }

version=${FLIPFLOP_VERSION:-}
base=${FLIPFLOP_RELEASES_URL:-https://github.com/flipflop-dev/flipflop/releases/download}
dest=${FLIPFLOP_INSTALL_DIR:-${RUNNER_TEMP:-/tmp}/flipflop-bin}
mkdir -p "$dest"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN*) os=windows ;;
  *) fail "unsupported OS $(uname -s)" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "unsupported architecture $(uname -m)" ;;
esac
exe=flipflop
[[ $os == windows ]] && exe=flipflop.exe

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | awk '{print $1}'; else shasum -a 256 "$1" | awk '{print $1}'; fi
}

if [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  ext=tar.gz
  [[ $os == windows ]] && ext=zip
  archive="flipflop_${version}_${os}_${arch}.${ext}"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "Downloading flipflop $version ($archive)"
  curl -fsSL --retry 3 -o "$tmp/$archive" "$base/$version/$archive" || fail "cannot download $base/$version/$archive"
  curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/$version/checksums.txt" || fail "cannot download the checksums of $version"
  want=$(awk -v f="$archive" '$2 == f { print $1 }' "$tmp/checksums.txt")
  [[ -n $want ]] || fail "checksums.txt of $version does not list $archive"
  got=$(sha256 "$tmp/$archive")
  [[ $got == "$want" ]] || fail "checksum mismatch for $archive: got $got, want $want"
  if [[ $ext == zip ]]; then
    unzip -o -q "$tmp/$archive" "$exe" -d "$dest"
  else
    tar -xzf "$tmp/$archive" -C "$dest" "$exe"
  fi
else
  [[ -n ${ACTION_PATH:-} ]] || fail "no release version and no source to build"
  command -v go >/dev/null || fail "flipflop ${version:-(no version)} is not a release: building it needs Go (actions/setup-go), or set the version input to a release"
  echo "Building flipflop from the action's source (${version:-unknown ref})"
  (cd "$ACTION_PATH" && go build -o "$dest/$exe" ./cmd/flipflop)
fi

if [[ -n ${GITHUB_PATH:-} ]]; then
  echo "$dest" >>"$GITHUB_PATH"
fi
"$dest/$exe" --version
