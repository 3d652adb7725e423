# kube-apiserver and etcd for the tests that need a real API server
# (internal/kubetest, envtest), built from the Go modules pinned in
# hack/kube-tools/go.mod by build.sh: only when a binary is missing or when
# go.mod, go.sum or build.sh changed (by content, so a CI cache of
# hack/kube-tools/bin survives fresh checkouts). A cold build takes ~6-7
# minutes on 2 cores; with a warm Go build cache a rebuild is a relink
# (~5-10 s), and an up-to-date tree costs nothing.
ifndef KUBE_TOOLS_MK
KUBE_TOOLS_MK := 1
KUBE_TOOLS_DIR := $(CURDIR)/hack/kube-tools
KUBE_TOOLS_BIN := $(KUBE_TOOLS_DIR)/bin
KUBE_TOOLS := $(KUBE_TOOLS_BIN)/kube-apiserver $(KUBE_TOOLS_BIN)/etcd
KUBE_TOOLS_SUM := $(firstword $(shell cat $(KUBE_TOOLS_DIR)/go.mod $(KUBE_TOOLS_DIR)/go.sum $(KUBE_TOOLS_DIR)/build.sh | cksum))
KUBE_TOOLS_STAMP := $(KUBE_TOOLS_BIN)/.built-$(KUBE_TOOLS_SUM)

# A missing binary forces a build whatever the stamp says.
ifneq ($(wildcard $(KUBE_TOOLS)),$(KUBE_TOOLS))
.PHONY: $(KUBE_TOOLS_STAMP)
endif

$(KUBE_TOOLS_STAMP):
	bash $(KUBE_TOOLS_DIR)/build.sh $(KUBE_TOOLS_BIN)
	rm -f $(KUBE_TOOLS_BIN)/.built-*
	touch $@

.PHONY: kube-tools
kube-tools: $(KUBE_TOOLS_STAMP) ## build kube-apiserver and etcd for the cluster tests (hack/kube-tools)

EXTRA_TOOLS += $(KUBE_TOOLS_STAMP)
GO_TEST_ENV += KUBEBUILDER_ASSETS=$(KUBE_TOOLS_BIN)

# This file is included before the Makefile's first target: let that one stay
# the default goal.
.DEFAULT_GOAL :=
endif
