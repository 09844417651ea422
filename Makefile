# moond — see README.md. `make run` and `make test` are the two commands that matter.
SHELL := /bin/bash
GO ?= go
GOBIN := $(shell $(GO) env GOPATH)/bin
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := $(GOBIN)/staticcheck
BIN := bin/moond
# Packages with goroutines, locks or threads: these also run under -race.
RACE_PKGS := $(foreach d,uring runtime server shard persistence tests,$(if $(wildcard $(d)/*),./$(d)/...))
FUZZTIME ?= 10s

.PHONY: all build run test lint fmt-check vet staticcheck portable unit race fuzz-short fuzz bench bench-redis bench-types bench-txn bench-tracking bench-evict bench-checkpoint bench-repl bench-cold test-long deps apt-deps

all: build

build:
	$(GO) build -o $(BIN) ./cmd/moond

run: build
	mkdir -p data
	./$(BIN) --bind 127.0.0.1 --port 6379 --dir ./data

# Everything CI runs.
test: deps lint portable unit race fuzz-short test-long

deps: apt-deps $(STATICCHECK)
	$(GO) mod download

# Debian packages the end-to-end tests and benchmarks drive (redis-cli,
# redis-benchmark; redis-server to compare against; redis-sentinel to fail over).
apt-deps:
	@if ! command -v redis-cli >/dev/null || ! command -v redis-benchmark >/dev/null || ! command -v redis-server >/dev/null || ! command -v redis-sentinel >/dev/null; then \
		echo "installing redis-tools, redis-server and redis-sentinel"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q redis-tools redis-server redis-sentinel; \
	fi

$(STATICCHECK):
	cd /tmp && GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: fmt-check vet staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

# The pool backend keeps moond portable: it must build where io_uring does not exist.
portable:
	GOOS=darwin $(GO) build ./...
	GOOS=windows $(GO) build ./...

# The end-to-end suite (./tests) runs once, under race: its moond binary
# is built with -race there, so every scenario also hunts data races in
# the server, and running it a second time without race would add minutes
# to CI and nothing the race run misses.
UNIT_PKGS = $(shell $(GO) list ./... | grep -v '/tests$$')

unit:
	$(GO) test -count=1 $(UNIT_PKGS)

race:
	$(GO) test -count=1 -race -timeout 20m $(RACE_PKGS)

# The long runs: three minutes of sustained writes that must keep the WAL
# under --max-wal-size plus a segment, and a WAL record larger than the
# format's limit (about 2 GiB of memory, so never under -race).
test-long:
	MOOND_LONG_TESTS=1 $(GO) test -v -count=1 -timeout 10m -run 'TestSustainedWritesKeepTheWALBounded' ./tests/
	MOOND_LONG_TESTS=1 $(GO) test -count=1 -timeout 10m -run 'TestSplitRecordOfMoreThanMaxPayloadRoundTrips' ./persistence/wal/

# A short run of every fuzz target, counted in executions: a -fuzztime
# duration races Go 1.26's fuzz coordinator at its deadline and fails
# with a bare "context deadline exceeded" on a busy machine
# (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline.
# 28 targets at 100000 executions each take about 4 minutes here, and the
# minimization of a new input is bounded by a count too (its default, 60 s
# each, took whole minutes of CI): the whole CI run stays under 30 minutes.
# `make fuzz FUZZTIME=5m` for a long one.
FUZZ_SHORT ?= 100000x
FUZZ_MINIMIZE ?= 60s
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SHORT) FUZZ_MINIMIZE=2000x

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$t"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZ_MINIMIZE) $$pkg; \
		done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# moond and redis-server side by side on the same CPU; rewrites its section
# of BENCHMARKS.md (see bench/README.md), then the types, txn, tracking and
# evict sections. Takes about 35 minutes.
bench-redis: build apt-deps
	bash bench/redis_compare.sh
	SKIP_BUILD=1 bash bench/types_compare.sh
	bash bench/txn_compare.sh
	SKIP_BUILD=1 bash bench/tracking_compare.sh
	SKIP_BUILD=1 bash bench/evict_compare.sh

# The data-type rows alone (hashes, sets): throughput in paired rounds,
# memory and reply times against redis-server.
bench-types: build apt-deps
	SKIP_BUILD=1 bash bench/types_compare.sh

# Transactions and multi-key commands over two shards against
# redis-server, paired rounds on one CPU (bench/txn_compare.sh).
bench-txn: build apt-deps
	bash bench/txn_compare.sh

# GET with CLIENT TRACKING on and PUBLISH to 50 subscribers against
# redis-server, paired rounds on one CPU (bench/tracking_compare.sh).
bench-tracking: build apt-deps
	SKIP_BUILD=1 bash bench/tracking_compare.sh

# SET at -P 16 while evicting (allkeys-lru, maxmemory at about half the
# data) against redis-server: BENCHMARKS.md's bench-evict section.
bench-evict: build apt-deps
	SKIP_BUILD=1 bash bench/evict_compare.sh

# Replication (issue 22): full sync of 200k keys and SET -P 16 on a master
# with one replica, moond->moond against redis-server->redis-server, paired
# rounds; masters on CPU 0, replicas and clients on CPU 1
# (bench/repl_compare.sh). Not part of make test.
bench-repl: build apt-deps
	SKIP_BUILD=1 bash bench/repl_compare.sh

# The cold tier (issue 19): GETs (uniform, zipfian) over 4x maxmemory of
# data under tiered-storage, against the same moond with all data in
# memory, paired rounds (bench/cold_compare.sh, bench/coldload).
bench-cold: build apt-deps
	SKIP_BUILD=1 bash bench/cold_compare.sh

# Restart time (whole WAL vs heap + tail) and GET/SET latency with and
# without checkpoints running; rewrites its section of BENCHMARKS.md.
bench-checkpoint: build deps
	bash bench/checkpoint_bench.sh
