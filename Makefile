# Tradeledger. `make run` serves on :3000 with the embedded store; `make test` is what CI runs.
GO        ?= go
BIN       := bin/tradeledger
DATA      ?= ./data
BENCHTIME ?= 1x

.PHONY: build run test vet bench clean

build:
	$(GO) build -o $(BIN) ./cmd/tradeledger

run: build
	$(BIN) serve --data $(DATA)

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 ./...

# Benchmarks print their figures (events/s, orders/s, p99, bytes/order) and
# their ratio to the raw reference measured in the same run.
# One package at a time (-p 1): benchmarks of two packages must not share
# the two cores. The placement benchmark needs many orders for a p99: it
# runs apart.
bench:
	$(GO) test -p 1 -run '^$$' -bench . -skip '^BenchmarkTradePlacementHTTP$$' -benchtime $(BENCHTIME) -timeout 60m ./...
	$(GO) test -run '^$$' -bench '^BenchmarkTradePlacementHTTP$$' -benchtime 20000x ./http

clean:
	rm -rf bin
