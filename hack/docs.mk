# Generated documentation: docs/rules/<id>.md, docs/rules/README.md and the
# generated regions of README.md and docs/usage.md, rendered from the rules'
# METADATA and samples (internal/docs); the command reference
# docs/reference/flipflop*.md and the man pages docs/man/*.1, rendered from the
# command tree with cobra/doc (internal/clidoc). The Go tests in internal/docs
# and internal/clidoc fail when they drift.

# This file is included before the Makefile's first target: keep `all` the default.
ifeq ($(.DEFAULT_GOAL),)
.DEFAULT_GOAL := all
endif

.PHONY: docs check-docs schemas

docs: ## regenerate docs/rules/, README.md's generated regions (rules' METADATA), docs/reference/ and docs/man/ (command tree)
	go run ./hack/gendocs

check-docs: ## fail when docs/rules/, the generated regions, docs/reference/ or docs/man/ drift from what make docs writes
	go run ./hack/gendocs -check

schemas: ## regenerate policies/lib/flipflop/schemas.rego from Kargo's and Argo CD's CRDs and Kargo's step config schemas (the releases internal/upstream pins, and Kargo's older releases at their tags); internal/schemagen's test fails when it drifts
	go run ./hack/genschemas
