# flipflop — see README.md. `make test` is what CI runs.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
BIN := $(CURDIR)/.bin
OPA := $(BIN)/opa
CONFTEST := $(BIN)/conftest
GATOR := $(BIN)/gator
REGAL := $(BIN)/regal
GO_TEST_FLAGS ?= -race -count=1
REGO_DIRS := policies

.PHONY: all build tools test lint fmt rego-test go-test e2e bundles check-bundles bench fuzz help clean

# Extra tool and test targets live beside what they build (hack/*.mk); they may
# add prerequisites to EXTRA_TOOLS, and environment for go test to GO_TEST_ENV.
EXTRA_TOOLS :=
GO_TEST_ENV :=
-include hack/*.mk

all: build test ## build and test

help: ## list targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## build .bin/flipflop, and .bin/kubectl-flipflop (the same binary, as a kubectl plugin)
	go build -o $(BIN)/flipflop ./cmd/flipflop
	ln -sf flipflop $(BIN)/kubectl-flipflop

tools: $(OPA) $(CONFTEST) $(GATOR) $(REGAL) $(EXTRA_TOOLS) ## build the pinned tools (opa, conftest, gator, regal) from the Go module proxy

$(OPA) $(CONFTEST) $(GATOR): tools/go.mod tools/go.sum
	cd tools && go build -o $(BIN)/ github.com/open-policy-agent/opa github.com/open-policy-agent/conftest github.com/open-policy-agent/gatekeeper/v3/cmd/gator
	touch $(OPA) $(CONFTEST) $(GATOR)

$(REGAL): tools/regal/go.mod tools/regal/go.sum
	cd tools/regal && go build -o $(REGAL) github.com/open-policy-agent/regal

lint: tools ## gofmt, go vet, opa fmt, opa check --strict, regal
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^tools/') 2>&1); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	$(OPA) fmt --fail -l $(REGO_DIRS) || { echo "opa fmt needed on the files above (run: make fmt)"; exit 1; }
	$(OPA) check --strict --ignore "*.yaml" --ignore "*.yml" --ignore "*.json" $(REGO_DIRS)
	$(REGAL) lint --config-file .regal/config.yaml $(REGO_DIRS)

fmt: tools ## format Go and Rego
	gofmt -w $$(git ls-files '*.go' | grep -v '^tools/')
	$(OPA) fmt -w $(REGO_DIRS)

rego-test: tools ## Rego unit tests with coverage
	$(OPA) test --ignore "*.yaml" --ignore "*.yml" --ignore "*.json" $(REGO_DIRS)
	$(OPA) test --ignore "*.yaml" --ignore "*.yml" --ignore "*.json" --coverage --format=json $(REGO_DIRS) | go run ./hack/covsummary

go-test: tools build ## Go unit and end-to-end tests (real binary, real conftest)
	FLIPFLOP_BIN=$(BIN)/flipflop OPA_BIN=$(OPA) CONFTEST_BIN=$(CONFTEST) GATOR_BIN=$(GATOR) $(GO_TEST_ENV) go test $(GO_TEST_FLAGS) ./...

bundles: ## regenerate bundles/ (conftest folder, Gatekeeper templates and suites, OPA bundle) from policies/
	rm -rf bundles
	go run ./cmd/flipflop export all bundles

check-bundles: ## fail when the committed bundles/ differ from what policies/ generate
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	go run ./cmd/flipflop export all $$tmp; \
	if ! diff -r $$tmp bundles >/dev/null; then diff -r $$tmp bundles | head -40; echo "bundles/ is stale: run 'make bundles' and commit"; exit 1; fi; \
	echo "bundles/ up to date"

test: lint check-bundles rego-test go-test ## everything CI runs

bench: bench-all ## every benchmark row at 1k/10k/50k; rewrites docs/benchmarks.md (about 10 minutes)

# FUZZTIME is a duration or a count of inputs (e.g. 1000x, as CI uses)
FUZZTIME ?= 30s
FUZZ_TARGETS := ./evaluator/loader:FuzzLoadBytes ./evaluator:FuzzPureFunctions ./evaluator:FuzzCheck

fuzz: ## run every fuzz target for FUZZTIME (default 30s each); crashers land in testdata/fuzz as regression seeds
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
		go test -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	done

clean: ## remove built binaries
	rm -rf $(BIN)
