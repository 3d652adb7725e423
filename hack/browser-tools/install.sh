#!/usr/bin/env bash
# Installs Mermaid's CLI (mmdc, with the puppeteer it drives) from the npm
# registry for the browser tests (tests/browser_test.go), from this directory's
# package.json and package-lock.json, into a cache outside the clone keyed by
# their content and this script's:
#   ${FLIPFLOP_CACHE:-$HOME/.cache/flipflop}/browser-tools/<sum>/node_modules
# and links hack/browser-tools/node_modules to it. No browser is downloaded
# (PUPPETEER_SKIP_DOWNLOAD, no install scripts): the tests drive Debian's
# Chromium (/usr/bin/chromium, apt-get install chromium; .ci/run installs it).
# Cold: about a minute (191 packages); warm: nothing to do.
# Without npm it says so and exits 0 (the browser tests then skip, unless
# FLIPFLOP_REQUIRE_BROWSER=1, which makes that a failure).
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
if ! command -v npm >/dev/null; then
  echo "browser-tools: npm not found: the browser tests will skip (apt-get install nodejs npm to run them)" >&2
  [[ ${FLIPFLOP_REQUIRE_BROWSER:-} == 1 ]] && exit 1
  exit 0
fi
sum=$(cat package.json package-lock.json install.sh | cksum | cut -d' ' -f1)
cache=${FLIPFLOP_CACHE:-$HOME/.cache/flipflop}/browser-tools/$sum
mkdir -p "$cache"
# flock: another checkout on this machine may be installing the same sum.
flock "$cache/.lock" bash -c '
  set -euo pipefail
  cache=$1 here=$2
  [[ -e $cache/.installed && -x $cache/node_modules/.bin/mmdc ]] && exit 0
  echo "browser-tools: installing @mermaid-js/mermaid-cli with npm ci into $cache"
  start=$(date +%s)
  cp "$here/package.json" "$here/package-lock.json" "$cache/"
  rm -rf "$cache/node_modules"
  (cd "$cache" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  touch "$cache/.installed"
  echo "browser-tools: installed in $(( $(date +%s) - start ))s"
' _ "$cache" "$here"
# hack/browser-tools/node_modules -> the cache (a directory there, from a
# manual npm install, is replaced).
if [[ -d node_modules && ! -L node_modules ]]; then rm -rf node_modules; fi
ln -sfn "$cache/node_modules" node_modules
