# kube-apiserver and etcd for the tests that need a real API server
# (internal/kubetest, envtest), built from the Go modules pinned in
# hack/kube-tools/go.mod by build.sh, into a cache outside the clone keyed by
# the content of go.mod, go.sum and build.sh:
#   ${FLIPFLOP_CACHE:-$HOME/.cache/flipflop}/kube-tools/<sum>/
# hack/kube-tools/bin is a symlink to it (kubetest's default). A fresh clone on
# a machine that built them once costs nothing; a changed go.mod, go.sum or
# build.sh builds anew. A cold build takes ~6-7 minutes on 2 cores; with a warm
# Go build cache a rebuild is a relink (~5-10 s).
ifndef KUBE_TOOLS_MK
KUBE_TOOLS_MK := 1
KUBE_TOOLS_DIR := $(CURDIR)/hack/kube-tools
KUBE_TOOLS_BIN := $(KUBE_TOOLS_DIR)/bin
KUBE_TOOLS_SUM := $(firstword $(shell cat $(KUBE_TOOLS_DIR)/go.mod $(KUBE_TOOLS_DIR)/go.sum $(KUBE_TOOLS_DIR)/build.sh | cksum))
KUBE_TOOLS_CACHE := $(or $(FLIPFLOP_CACHE),$(HOME)/.cache/flipflop)/kube-tools/$(KUBE_TOOLS_SUM)
KUBE_TOOLS := $(KUBE_TOOLS_CACHE)/kube-apiserver $(KUBE_TOOLS_CACHE)/etcd
KUBE_TOOLS_STAMP := $(KUBE_TOOLS_CACHE)/.built

# A missing binary forces a build whatever the stamp says.
ifneq ($(wildcard $(KUBE_TOOLS)),$(KUBE_TOOLS))
.PHONY: $(KUBE_TOOLS_STAMP)
endif

# flock: another checkout on this machine may be building the same sum.
$(KUBE_TOOLS_STAMP):
	@mkdir -p $(KUBE_TOOLS_CACHE)
	@flock $(KUBE_TOOLS_CACHE)/.lock bash -c 'if [ -x $(KUBE_TOOLS_CACHE)/kube-apiserver ] && [ -x $(KUBE_TOOLS_CACHE)/etcd ] && [ -e $@ ]; then exit 0; fi; \
		echo "kube-tools: building kube-apiserver and etcd (cold ~6-7 min on 2 cores, a relink with a warm Go cache)"; start=$$(date +%s); \
		bash $(KUBE_TOOLS_DIR)/build.sh $(KUBE_TOOLS_CACHE) && touch $@ && echo "kube-tools: built in $$(( $$(date +%s) - start ))s"'

# hack/kube-tools/bin -> the cache (a directory there, from older checkouts, is replaced).
.PHONY: kube-tools
kube-tools: $(KUBE_TOOLS_STAMP) ## build kube-apiserver and etcd for the cluster tests (hack/kube-tools), cached outside the clone
	@if [ -d $(KUBE_TOOLS_BIN) ] && [ ! -L $(KUBE_TOOLS_BIN) ]; then rm -rf $(KUBE_TOOLS_BIN); fi
	@ln -sfn $(KUBE_TOOLS_CACHE) $(KUBE_TOOLS_BIN)

EXTRA_TOOLS += kube-tools
GO_TEST_ENV += KUBEBUILDER_ASSETS=$(KUBE_TOOLS_CACHE)

# This file is included before the Makefile's first target: let that one stay
# the default goal.
.DEFAULT_GOAL :=
endif
