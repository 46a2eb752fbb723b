#!/usr/bin/env bash
# Installs what the dashboard's browser tests need, so a fresh machine needs
# nothing by hand: Debian's chromium (apt) when /usr/bin/chromium is missing,
# and playwright-core + lightweight-charts from the committed lockfile (npm ci)
# when node_modules does not match it. Idempotent and quiet when all is there.
set -euo pipefail
cd "$(dirname "$0")"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "e2e: installing chromium (apt-get)"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
if ! command -v npm >/dev/null; then
	echo "e2e: npm is missing (Node.js 20 or later is needed)" >&2
	exit 1
fi
# npm ci again only when the lockfile changed since the last install.
if ! cmp -s package-lock.json node_modules/.package-lock.json.installed 2>/dev/null; then
	echo "e2e: npm ci"
	npm ci --no-audit --no-fund --loglevel=error
	cp package-lock.json node_modules/.package-lock.json.installed
fi
