# Tradeledger. `make run` serves on :3000 with the embedded store; `make test`
# and `make test-ccxt` are what CI runs (.ci/run).
GO        ?= go
BIN       := bin/tradeledger
DATA      ?= ./data
BENCHTIME ?= 1x
PREFIX    ?= /usr/local
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# staticcheck at a pinned version, built by the go command from the module
# proxy on first use (then cached): nothing to install by hand. -race=false:
# staticcheck itself is built without the race detector, while the packages
# it loads get VETFLAGS through GOFLAGS (see vet).
STATICCHECK ?= $(GO) run -race=false honnef.co/go/tools/cmd/staticcheck@v0.8.2
# vet and staticcheck build the packages they check as make test builds them
# (-race), so that each package is compiled once for all three: from empty
# caches that halves make test's compiling (docs/operations.md).
VETFLAGS  ?= -race

.PHONY: build build-ccxt release install install-release run test test-ccxt test-slow vet vet-ccxt bench bench-growth bench-ab fuzz clean e2e e2e-deps dashboard-vendor

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tradeledger

# build-ccxt builds the binary with the ccxt connector (-tags ccxt: every
# exchange ccxt knows, `connector: ccxt`). ccxt is large: a cold build takes
# minutes more than `make build`, which is why `make build` (and `make run`)
# leave it out and say so for an exchange configured with `connector: ccxt`;
# `make release`, `make install-release` and the Docker image include it.
build-ccxt:
	$(GO) build -tags ccxt -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tradeledger

# release builds what the Docker image ships: a static binary with every
# connector, ccxt included (deploy/build-static.sh). A cold build compiles
# ccxt's one large package: see docs/operations.md for its time and memory.
release:
	deploy/build-static.sh $(BIN)

# install puts the binary on the PATH ($(PREFIX)/bin; PREFIX=$$HOME/.local for
# a user install), so that `tradeledger …` works from any directory;
# install-release does the same with the release binary (ccxt included).
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/tradeledger

install-release: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/tradeledger

run: build
	$(BIN) serve --data $(DATA)

# vet is go vet and staticcheck over every package of the default build
# (the ccxt connector's files need -tags ccxt: vet-ccxt).
vet:
	$(GO) vet $(VETFLAGS) ./...
	GOFLAGS="$$($(GO) env GOFLAGS) $(VETFLAGS)" $(STATICCHECK) ./...

vet-ccxt:
	$(GO) vet $(VETFLAGS) -tags ccxt ./exchange/ccxt/... ./cmd/tradeledger
	GOFLAGS="$$($(GO) env GOFLAGS) $(VETFLAGS)" $(STATICCHECK) -tags ccxt ./exchange/ccxt/... ./cmd/tradeledger

# test prints what `go test` prints (ok/FAIL lines, failures), then the tests
# that skipped and why (.ci/testsummary.go reads go test -json). It leaves
# the ccxt connector out: compiling ccxt's one package under -race takes
# most of ten CPU-minutes and about 12 GB, so it has a target of its own.
test: SHELL := /bin/bash
# go test's own vet checks are off (-vet=off): make vet has just run all
# of go vet's. Four test binaries run at once (-p 4): some packages mostly
# wait (projections/clickhouse on the server: 18 CPU-seconds in 141 s), so
# two at a time would leave the cores idle. The packages whose tests run
# longest (TEST_FIRST: go test starts packages in the order given) start
# first, so that none is left running alone at the end (projections/
# clickhouse, a third of the test step, used to start last). The slow
# suites skip here (TRADELEDGER_SKIP_SLOW), saying so: make test-slow runs
# them.
TEST_FIRST := ./projections/clickhouse ./cmd/tradeledger ./projections ./domain
test: vet
	set -o pipefail; TRADELEDGER_SKIP_SLOW=1 $(GO) test -race -vet=off -p 4 -count=1 -json $(TEST_FIRST) ./... | $(GO) run .ci/testsummary.go

# test-slow runs, under -race, the tests make test skips for their time
# (each skips when TRADELEDGER_SKIP_SLOW is set and names this target);
# CI runs it after make test. Today one: the witness client against
# litewitness, an independent implementation built from the module proxy.
SLOW_TESTS := ^TestAgainstLitewitness$$
SLOW_PKGS  := ./eventstore/transparency/witnesses
test-slow: SHELL := /bin/bash
test-slow:
	set -o pipefail; $(GO) test -race -count=1 -json -run '$(SLOW_TESTS)' $(SLOW_PKGS) | $(GO) run .ci/testsummary.go

# test-ccxt vets, builds and tests the ccxt connector and its wiring
# (-tags ccxt, -race); CI runs it after make test.
test-ccxt: SHELL := /bin/bash
test-ccxt: vet-ccxt
	set -o pipefail; { $(GO) test -race -vet=off -count=1 -tags ccxt -json ./exchange/ccxt/...; a=$$?; \
		$(GO) test -race -vet=off -count=1 -tags ccxt -json -run CCXT ./cmd/tradeledger; b=$$?; \
		exit $$((a|b)); } | $(GO) run .ci/testsummary.go

# Benchmarks print their figures (events/s, orders/s, p99, bytes/order) and
# their ratio to the raw reference measured in the same run.
# One package at a time (-p 1): benchmarks of two packages must not share
# the two cores. The placement benchmark needs many orders for a p99: it
# runs apart. The open-loop placement benchmark (BenchmarkPlacementOpenLoop,
# ./cmd/tradeledger) paces itself at a fixed arrival rate: one iteration is
# its whole run (about 45 s), so it runs with the others.
bench:
	$(GO) test -p 1 -run '^$$' -bench . -skip '^BenchmarkTradePlacementHTTP$$' -benchtime $(BENCHTIME) -timeout 60m ./...
	$(GO) test -run '^$$' -bench '^BenchmarkTradePlacementHTTP$$' -benchtime 20000x ./http

# The growth curve (BenchmarkGrowth, part of bench at 100k and 1M orders)
# with its 10M point: building that log takes many minutes and several GB.
# Each size prints the time to ready without a snapshot (s-to-ready) and
# from a read-model snapshot 100,000 events old (snap-s-to-ready).
# BENCH_DATA keeps the logs for the next run.
BENCH_DATA ?=
bench-growth:
	TRADELEDGER_BENCH_10M=1 TRADELEDGER_BENCH_DATA=$(BENCH_DATA) $(GO) test -run '^$$' -bench '^BenchmarkGrowth$$' -benchtime 1x -timeout 4h ./cmd/tradeledger

# bench-ab compares the working tree (HEAD) with the commit REF in one run
# (cmd/benchab): REF is built from a git archive of it in a temporary
# directory, and the same benchmarks — import, serve to /readyz with and
# without a snapshot, replay, verify, 64-writer appends, the ClickHouse
# overview over 60 time zones (with CLICKHOUSE), placement p99 at 1,000
# orders/s — run for both alternately, ROUNDS times; it prints each figure
# and the ratio HEAD/REF (min/median/max). docs/benchmarks.md says more.
REF        ?=
ROUNDS     ?= 3
CLICKHOUSE ?= $(TRADELEDGER_TEST_CLICKHOUSE)
BENCHAB_FLAGS ?=
bench-ab:
	@test -n "$(REF)" || { echo 'usage: make bench-ab REF=<commit> [ROUNDS=3] [CLICKHOUSE=clickhouse://127.0.0.1:9000] [BENCHAB_FLAGS=-only import,start]'; exit 2; }
	$(GO) run ./cmd/benchab -ref '$(REF)' -rounds $(ROUNDS) -clickhouse '$(CLICKHOUSE)' $(BENCHAB_FLAGS)

# Fuzz targets (func Fuzz… next to the code they fuzz): their seed corpora
# run in make test; make fuzz runs every target for FUZZTIME, one after the
# other (go test -fuzz takes one target per run). A failing input is saved
# under the package's testdata/fuzz/<target>/ and then runs in make test.
# The first run builds the instrumented packages (minutes, once).
FUZZTIME ?= 30s

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

clean:
	rm -rf bin

# The dashboard (http/dashboard). Its chart library is vendored from the npm
# package pinned in e2e/package.json (a Go test fails when the two drift);
# `make e2e` installs chromium and the npm packages if missing and runs the
# browser tests against a freshly built binary.
DASH := http/dashboard
LWC  := $(DASH)/e2e/node_modules/lightweight-charts

e2e-deps:
	$(DASH)/e2e/install.sh

dashboard-vendor: e2e-deps
	mkdir -p $(DASH)/vendor/lightweight-charts
	cp $(LWC)/dist/lightweight-charts.standalone.production.mjs $(DASH)/vendor/lightweight-charts/lightweight-charts.mjs
	cp $(LWC)/LICENSE $(DASH)/vendor/lightweight-charts/LICENSE
	sed -n '3,4s/^ \* //p' $(LWC)/dist/lightweight-charts.standalone.production.mjs > $(DASH)/vendor/lightweight-charts/NOTICE
	echo 'https://www.tradingview.com/' >> $(DASH)/vendor/lightweight-charts/NOTICE

e2e: build e2e-deps
	cd $(DASH)/e2e && TRADELEDGER_BIN=$(CURDIR)/$(BIN) npm test

# The overview's time to interactive over ORDERS imported fills (default
# 200,000; the import takes minutes), printed, not asserted.
e2e-bench: build e2e-deps
	cd $(DASH)/e2e && TRADELEDGER_BIN=$(CURDIR)/$(BIN) node bench-overview.mjs
