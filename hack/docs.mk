# Rule documentation: docs/rules/<id>.md, docs/rules/README.md and the generated
# regions of README.md, rendered from the rules' METADATA and samples
# (internal/docs). The Go test in internal/docs fails when they drift.

# This file is included before the Makefile's first target: keep `all` the default.
ifeq ($(.DEFAULT_GOAL),)
.DEFAULT_GOAL := all
endif

.PHONY: docs check-docs schemas

docs: ## regenerate docs/rules/ and the generated regions of README.md from the rules' METADATA
	go run ./hack/gendocs

check-docs: ## fail when docs/rules/ or README.md's generated regions drift from the rules' METADATA
	go run ./hack/gendocs -check

schemas: ## regenerate policies/lib/flipflop/schemas.rego from Kargo's and Argo CD's CRDs and Kargo's step config schemas (the releases internal/upstream pins, and Kargo's older releases at their tags); internal/schemagen's test fails when it drifts
	go run ./hack/genschemas
