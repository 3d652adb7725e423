# The measuring harness (issue 7): hack/bench drives it, hack/bench/decode is
# the decode floor, hack/bench/gatekeeper (its own Go module, so Gatekeeper
# never becomes a dependency of flipflop) times admission reviews, and
# tests/bench/pairwise is the naive hand-written policy it compares against.
#
#   make bench-all     every measurement at 1k, 10k and 50k objects; rewrites docs/benchmarks.md
#   make bench-smoke   the same at 200 objects (shapes at 100), one run each, no timing judged:
#                      fails when a measurement produced no number or when
#                      flipflop and conftest disagree on the findings
#
# BENCH_FLAGS passes extra flags to hack/bench (go run ./hack/bench -h).

# This file is included before the Makefile's first target: keep `all` the default.
ifeq ($(.DEFAULT_GOAL),)
.DEFAULT_GOAL := all
endif

.PHONY: bench-all bench-smoke bench-programs bench-gatekeeper-3.20

BENCH_FLAGS ?=
BENCH_DECODE := $(CURDIR)/.bin/flipflop-bench-decode
BENCH_GATEKEEPER := $(CURDIR)/.bin/flipflop-bench-gatekeeper

bench-programs: $(CONFTEST) build ## build flipflop, conftest and the benchmark programs (decode floor, Gatekeeper review)
	go build -o $(BENCH_DECODE) ./hack/bench/decode
	cd hack/bench/gatekeeper && go build -o $(BENCH_GATEKEEPER) .

# The same review program on Gatekeeper v3.20.1's modules and OPA v1.7.1 (its
# own modfile; -tags gatekeeper320 for the one call whose signature changed):
#   .bin/flipflop-bench-gatekeeper-3.20 -dir ESTATE -apps 2000 -template T -constraint C
bench-gatekeeper-3.20: ## the Gatekeeper review benchmark built on Gatekeeper v3.20.1 (OPA v1.7.1)
	cd hack/bench/gatekeeper && GOFLAGS=-modfile=go.gatekeeper-3.20.mod go build -tags gatekeeper320 -o $(BENCH_GATEKEEPER)-3.20 .

bench-all: bench-programs ## every benchmark (end to end, decode floor, conftest, pairwise, Go API, Gatekeeper) at 1k/10k/50k; writes docs/benchmarks.md
	@start=$$(date +%s); \
	go run ./hack/bench -out docs/benchmarks.md $(BENCH_FLAGS); \
	echo "bench-all: $$(( $$(date +%s) - start )) s"

bench-smoke: bench-programs ## the benchmarks at 200 objects, once each: every row must produce a number and flipflop and conftest must agree (no timings judged)
	@start=$$(date +%s); \
	go run ./hack/bench -smoke -sizes 200 -runs 1 -large-runs 1 -gatekeeper-apps 20,50 -shapes selector:100,pattern:100,merge:100,branch:100,monorepo:100,matrix:100 -shape-runs 1 -budget 1m -timeout 2m $(BENCH_FLAGS); \
	echo "bench-smoke: $$(( $$(date +%s) - start )) s"
