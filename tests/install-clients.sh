#!/bin/sh
# Installs the test clients that are not Python packages; safe to run again.
#   - node's eventsource-parser and playwright-core, from tests/node/package-lock.json
#   - Chromium (Debian package), driven headless by the browser EventSource test
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq nodejs npm
fi
if [ ! -x /usr/bin/chromium ]; then
    apt-get update -qq && apt-get install -y -qq chromium
fi
cd "$here/node"
if ! npm ls --silent >/dev/null 2>&1; then
    npm ci --no-audit --no-fund --loglevel=error
fi
