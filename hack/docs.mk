# Rule documentation: docs/rules/<id>.md, docs/rules/README.md and the generated
# regions of README.md, rendered from the rules' METADATA and samples
# (internal/docs). The Go test in internal/docs fails when they drift.

# This file is included before the Makefile's first target: keep `all` the default.
ifeq ($(.DEFAULT_GOAL),)
.DEFAULT_GOAL := all
endif

.PHONY: docs check-docs step-schemas

docs: ## regenerate docs/rules/ and the generated regions of README.md from the rules' METADATA
	go run ./hack/gendocs

check-docs: ## fail when docs/rules/ or README.md's generated regions drift from the rules' METADATA
	go run ./hack/gendocs -check

step-schemas: ## regenerate policies/lib/flipflop/step_schemas.rego from Kargo's step config schemas (the release internal/upstream pins); internal/stepschema's test fails when it drifts
	go run ./hack/genstepschemas
