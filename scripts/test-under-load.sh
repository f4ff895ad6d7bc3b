#!/usr/bin/env bash
# The README's test command with one of the machine's cores kept busy by an unrelated process, as on
# a shared machine (README, "Commands"). A test that waits for wall-clock guesses instead of conditions,
# or whose timeout is too tight for a slowed engine, fails here first.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v stress-ng >/dev/null 2>&1; then
  echo "stress-ng is missing (Debian: apt-get install stress-ng)" >&2
  exit 2
fi
stress-ng --cpu 1 --timeout 0 --quiet &
stress=$!
trap 'kill "$stress" 2>/dev/null || true' EXIT
npm test -- "$@"
