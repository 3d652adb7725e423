# GoReleaser, for the tests that validate the release configuration
# (goreleaser check) and build a snapshot with it. Built from the module pinned
# in hack/goreleaser/go.mod (its own module, so the product's go.mod stays
# lean), once per version and go.sum, into a cache outside the clone
# (${FLIPFLOP_CACHE:-~/.cache/flipflop}/goreleaser, beside the hosts and
# kube-tools), so a fresh clone on the same machine (CI) reuses it; .bin/goreleaser
# links to it. Cold: several minutes on 2 cores (goreleaser is a large program);
# then nothing, or a relink when the Go build cache is warm.
ifndef GORELEASER_MK
GORELEASER_MK := 1
GORELEASER_DIR := $(CURDIR)/hack/goreleaser
TOOLS_CACHE ?= $(or $(FLIPFLOP_CACHE),$(HOME)/.cache/flipflop)/goreleaser
GORELEASER_VERSION := $(shell awk '$$1 == "github.com/goreleaser/goreleaser/v2" { print $$2 }' $(GORELEASER_DIR)/go.mod)
GORELEASER_SUM := $(firstword $(shell cat $(GORELEASER_DIR)/go.mod $(GORELEASER_DIR)/go.sum | cksum))
GORELEASER_CACHED := $(TOOLS_CACHE)/goreleaser-$(GORELEASER_VERSION)-$(GORELEASER_SUM)
GORELEASER := $(CURDIR)/.bin/goreleaser

$(GORELEASER_CACHED):
	@echo "building goreleaser $(GORELEASER_VERSION) into $(TOOLS_CACHE) (once per version; cold: several minutes)"
	@mkdir -p $(TOOLS_CACHE)
	cd $(GORELEASER_DIR) && time go build -o $@.tmp github.com/goreleaser/goreleaser/v2
	mv -f $@.tmp $@

$(GORELEASER): $(GORELEASER_CACHED)
	@mkdir -p $(dir $@)
	ln -sf $(GORELEASER_CACHED) $@

.PHONY: goreleaser release-check release-test release-snapshot
goreleaser: $(GORELEASER) ## build GoReleaser (hack/goreleaser) into .bin

release-check: $(GORELEASER) ## validate .goreleaser.yaml (goreleaser check)
	$(GORELEASER) check

release-test: $(GORELEASER) build ## the release tests with a snapshot build of this host's target (compiles with the release's flags)
	FLIPFLOP_RELEASE_SNAPSHOT=1 FLIPFLOP_BIN=$(BIN)/flipflop GORELEASER_BIN=$(GORELEASER) go test -count=1 -run 'Goreleaser|Release' ./tests/

release-snapshot: $(GORELEASER) ## every release archive and checksums.txt into dist/, nothing published (cross-compiles 5 targets)
	$(GORELEASER) release --snapshot --clean --skip=publish,ko,sbom

EXTRA_TOOLS += $(GORELEASER)
GO_TEST_ENV += GORELEASER_BIN=$(GORELEASER)

# This file is included before the Makefile's first target: let that one stay
# the default goal.
.DEFAULT_GOAL :=
endif
