# The browser tests (tests/browser_test.go): Mermaid's own parser and renderer
# and the HTML report in Debian's Chromium. hack/browser-tools/install.sh
# installs the npm side (@mermaid-js/mermaid-cli: mermaid and puppeteer, no
# browser download) into a cache outside the clone keyed by the content of
# package.json, package-lock.json and install.sh:
#   ${FLIPFLOP_CACHE:-$HOME/.cache/flipflop}/browser-tools/<sum>/node_modules
# and links hack/browser-tools/node_modules to it: about a minute cold, nothing
# warm. Chromium is Debian's (apt-get install chromium; .ci/run installs it).
# Without npm or Chromium the browser tests skip, unless
# FLIPFLOP_REQUIRE_BROWSER=1 (.ci/run), which makes that a failure.

# This file is included before the Makefile's first target: keep `all` the default.
ifeq ($(.DEFAULT_GOAL),)
.DEFAULT_GOAL := all
endif

.PHONY: browser-tools

browser-tools: ## install what the browser tests run besides Chromium (npm: mermaid, puppeteer), cached outside the clone
	@bash hack/browser-tools/install.sh

EXTRA_TOOLS += browser-tools
