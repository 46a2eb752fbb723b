#!/usr/bin/env bash
# The build steps of deploy/Dockerfile and `make release`, runnable outside
# Docker (CI runs this script): a static tradeledger binary with every
# connector, ccxt included (-tags ccxt), cgo SQLite linked statically and its
# load extensions compiled out; then a check that it is static and runs.
# A cold build compiles ccxt's one large package: minutes, and about 12 GB of
# memory at its peak (docs/operations.md has the figures).
#
#   deploy/build-static.sh [OUT]      (OUT defaults to bin/tradeledger-static)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin/tradeledger-static}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$(dirname "$out")"
CGO_ENABLED=1 go build -trimpath \
	-tags 'ccxt sqlite_omit_load_extension osusergo netgo' \
	-ldflags "-s -w -linkmode external -extldflags '-static' -X main.version=${version} -X main.commit=${commit}" \
	-o "$out" ./cmd/tradeledger 2> >(grep -v 'statically linked applications requires at runtime' >&2)
# Static: no program interpreter, no shared libraries.
if readelf -lW "$out" | grep -q 'INTERP\|Requesting program interpreter'; then
	echo "build-static: $out is dynamically linked" >&2
	exit 1
fi
"$out" version
