# flipflop — see README.md. `make test` is what CI runs.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
BIN := $(CURDIR)/.bin
# opa, conftest, gator, gatekeeper and regal are symlinks into the host cache
# (hack/hosts/build.sh): built as released, once per machine.
OPA := $(BIN)/opa
CONFTEST := $(BIN)/conftest
GATOR := $(BIN)/gator
# the Gatekeeper manager itself (webhook, audit), for the end-to-end test in deny
GATEKEEPER := $(BIN)/gatekeeper
REGAL := $(BIN)/regal
HOSTS := bash hack/hosts/build.sh
# The oldest OPA the policies support: the first opa line of hack/hosts/matrix.
OPA_FLOOR := $(shell awk '$$1 == "opa" { print $$2; exit }' hack/hosts/matrix)
# -timeout: the end-to-end package (tests/) runs real hosts, a real API server
# and many binaries under -race; on a busy 2-core machine it passes go test's
# default 10 minutes per package. A hang still fails, and CI's limit is 90.
GO_TEST_FLAGS ?= -count=1 -timeout 30m
# The race detector instruments the packages under test; tests/ drives the real
# binaries (built without it) from a mostly sequential harness, where -race
# doubles the time and finds nothing, so tests/ runs without it (go-test-race).
GO_RACE ?= -race
# GO_TEST_SKIP: tests go-test leaves out (go test -skip). .ci/run leaves the host
# tests (^TestCompat) to make compat, which runs them on every host of the
# matrix, the default ones included.
GO_TEST_SKIP ?=
REGO_DIRS := policies

.PHONY: chart all build tools hosts compat compat-hosts test test-parts lint fmt rego-test rego-coverage go-test go-test-plain go-test-race e2e bundles check-bundles bench fuzz help clean

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

# The hosts and the EXTRA_TOOLS (kube-apiserver, etcd) build side by side even
# without -j: make test stays the one command, and the cold build is shorter.
tools: ## build the tools the tests run: the default hosts, regal, kube-apiserver and etcd (cached outside the clone)
	@$(MAKE) --no-print-directory -j2 hosts $(EXTRA_TOOLS)

hosts: ## opa, conftest, gator and the Gatekeeper manager (the default versions of hack/hosts/matrix, each as released) and regal, cached outside the clone
	@$(HOSTS) -l $(BIN) default regal

$(OPA) $(CONFTEST) $(GATOR) $(GATEKEEPER) $(REGAL): hosts

compat-hosts: ## build every host of hack/hosts/matrix (what make compat runs), cached outside the clone
	@$(HOSTS) all

# REGO_TESTED names an opa whose `opa test` of the policies already passed in
# this run: .ci/run passes make test's (.bin/opa, the matrix's default, which
# make rego-test ran), and make compat's opa test leaves that one
# binary out instead of running the same tests on it twice. Unset (make compat
# alone), every opa of the matrix runs them.
REGO_TESTED ?=
compat: build ## the policies on every host of hack/hosts/matrix: opa check/test/eval -b, conftest, gator verify/test (oldest to newest)
	@start=$$(date +%s); hosts=$$($(HOSTS) -p all); \
	FLIPFLOP_REGO_TESTED=$(if $(REGO_TESTED),$(abspath $(REGO_TESTED))) FLIPFLOP_HOSTS="$$hosts" FLIPFLOP_BIN=$(BIN)/flipflop go test -v -count=1 -timeout 30m -run '^TestCompat' ./tests/ | grep -v '^=== \(RUN\|PAUSE\|CONT\)'; \
	echo "compat: $$(( $$(date +%s) - start )) s"

lint: tools ## gofmt, go vet, opa fmt, opa check --strict (and against the floor's capabilities), regal
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^tools/') 2>&1); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	$(OPA) fmt --fail -l $(REGO_DIRS) || { echo "opa fmt needed on the files above (run: make fmt)"; exit 1; }
	$(OPA) check --strict --ignore "*.yaml" --ignore "*.yml" --ignore "*.json" $(REGO_DIRS)
	@# No built-in or keyword newer than the oldest supported OPA in what ships (tests excluded).
	$(OPA) check --strict --capabilities $(OPA_FLOOR) --ignore "*_test.rego" --ignore "*.yaml" --ignore "*.yml" --ignore "*.json" $(REGO_DIRS)
	$(REGAL) lint --config-file .regal/config.yaml $(REGO_DIRS)

fmt: tools ## format Go and Rego
	gofmt -w $$(git ls-files '*.go' | grep -v '^tools/')
	$(OPA) fmt -w $(REGO_DIRS)

# One run of the tests. --timeout is each test's guard against a hang, not a
# speed check: make test runs it beside both Go passes. Coverage is its own
# target (make rego-coverage): OPA's instrumentation takes 27 CPU-seconds where
# the plain run takes 7, and nothing judges the figures.
rego-test: tools ## Rego unit tests
	$(OPA) test --timeout=5m --ignore "*.yaml" --ignore "*.yml" --ignore "*.json" $(REGO_DIRS)

# with --coverage opa test still names each failing test (on stderr) and exits
# non-zero, which fails the pipe (pipefail).
rego-coverage: tools ## Rego unit tests with each file's coverage
	$(OPA) test --timeout=5m --ignore "*.yaml" --ignore "*.yml" --ignore "*.json" --coverage --format=json $(REGO_DIRS) | go run ./hack/covsummary

GO_TEST_RUN = FLIPFLOP_BIN=$(BIN)/flipflop OPA_BIN=$(OPA) CONFTEST_BIN=$(CONFTEST) GATOR_BIN=$(GATOR) GATEKEEPER_BIN=$(GATEKEEPER) $(GO_TEST_ENV) go test
# The race pass leaves out the packages whose tests reach no goroutine and no
# state shared between goroutines, so the detector has nothing to watch there:
# estate, ignore, safetext, textwrap and version import nothing that starts one
# (nor does any of their tests); schemagen's and upstream's tests read schemas
# on one goroutine (upstream's mutex guards the evaluator's concurrent reads,
# which the evaluator's and cli's race runs exercise); hack/ holds tools.
# export's tests all skip under -race (race.Sequential: each evaluates
# policies on one goroutine, or one prepared query side by side), so its race
# build was linked to run nothing (a test there that runs concurrent code of
# its own takes export out of this list).
# Every other package imports the evaluator (parallel evaluation), the loader,
# render or cluster workers, or kubetest, and keeps its race run.
GO_RACE_SKIP_PKGS := ^\./(internal/(estate|ignore|safetext|textwrap|version|schemagen|upstream|export)|hack/.*)$$

go-test: go-test-plain go-test-race ## Go unit and end-to-end tests (real binary, real conftest)

# go test starts the packages in the order given: the longest go first, so
# that none is left running alone at the end (tests/ about 310 s, evaluator
# 120 s and export 55 s without -race; evaluator 90 s, render 80 s, cluster
# 60 s and cli 25 s with it, on 2 cores: .ci/run's make test, 2026-12-04).
GO_TEST_FIRST := tests evaluator internal/export
GO_RACE_FIRST := evaluator/render evaluator internal/cli internal/cluster
# the packages of go list ./..., those of $(1) first (paths relative to the module)
go-packages = $(addprefix ./,$(1)) $$(go list -f '{{.Dir}}' ./... | sed 's|^$(CURDIR)/||' | grep -vxF $(foreach p,$(1),-e $(p)) | sed 's|^|./|')

# Every package's tests without the race detector, tests/ (the end-to-end
# package, the longest) among them in the same go test, so it runs beside the
# unit packages instead of after them.
#
# A package none of whose tests skip under -race (none calls race.Sequential)
# runs whole in the race pass, a stronger check of the same tests: the plain
# pass leaves it out when the race pass runs (GO_RACE set). internal/cluster's
# tests start a real API server (about 22 CPU-seconds a pass).
# internal/race's test fails when a package listed here gets a test that skips
# under -race.
GO_RACE_ONLY_PKGS := internal/cluster
go-test-plain: tools build
	$(GO_TEST_RUN) $(GO_TEST_FLAGS) $(if $(GO_TEST_SKIP),-skip '$(GO_TEST_SKIP)') $$(echo $(call go-packages,$(GO_TEST_FIRST)) | tr ' ' '\n' $(if $(GO_RACE),| grep -vxF $(foreach p,$(GO_RACE_ONLY_PKGS),-e ./$(p))))

# Every package again, with the race detector. Under -race the tests that only evaluate
# policies or read data on one goroutine skip (race.Sequential: nothing for the
# detector to find, ten times slower), so this run is the concurrent code's:
# parallel evaluation, the loader's and render workers, the cluster reader.
# tests/ drives the real binaries (built without it) and stays out. (GO_RACE=
# skips the pass.) make -j2 runs it beside go-test-plain.
go-test-race: tools build
	$(if $(GO_RACE),$(GO_TEST_RUN) $(GO_RACE) $(GO_TEST_FLAGS) $(if $(GO_TEST_SKIP),-skip '$(GO_TEST_SKIP)') $$(echo $(call go-packages,$(GO_RACE_FIRST)) | tr ' ' '\n' | grep -v '^./tests$$' | grep -Ev '$(GO_RACE_SKIP_PKGS)'))

bundles: ## regenerate bundles/ (conftest folder, Gatekeeper templates and suites, OPA bundle) from policies/, and the chart's copy of the Gatekeeper template
	rm -rf bundles
	go run ./cmd/flipflop export all bundles
	cp bundles/gatekeeper/template.yaml bundles/gatekeeper/sync.yaml charts/flipflop/files/gatekeeper/

chart: ## package charts/flipflop as dist/flipflop-VERSION.tgz (VERSION: the latest tag, or 0.0.0), with the released report CRDs
	go run ./hack/chartpackage -version $(or $(VERSION),$(shell git describe --tags --abbrev=0 2>/dev/null),0.0.0) -out dist

check-bundles: ## fail when the committed bundles/ differ from what policies/ generate
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	go run ./cmd/flipflop export all $$tmp; \
	if ! diff -r $$tmp bundles >/dev/null; then diff -r $$tmp bundles | head -40; echo "bundles/ is stale: run 'make bundles' and commit"; exit 1; fi; \
	echo "bundles/ up to date"

# test runs its parts side by side (TEST_JOBS at a time, each part's output
# kept together): lint, check-bundles, rego-test and the two Go passes are
# independent, and one after the other they left one of two cores idle about
# a third of the time. make test is what the README and CI both run.
TEST_JOBS ?= 2
test: ## everything CI runs (its parts side by side: TEST_JOBS, default 2)
	$(MAKE) --no-print-directory -j$(TEST_JOBS) -O test-parts

test-parts: lint check-bundles rego-test go-test

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
