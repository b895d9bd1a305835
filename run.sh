#!/usr/bin/env bash
# The one entry point, on Debian 12 with or without the tools installed:
#
#   ./run.sh        install what is missing, build, and serve the page
#                   (PORT=9000 ./run.sh for another port)
#   ./run.sh test   install what is missing, then run every suite (make test)
set -euo pipefail
cd "$(dirname "$0")"

usage() {
    echo "usage: ./run.sh [test]"
}

# What ./run.sh shows.
start() {
    make --no-print-directory -s -j"$(nproc)" all
    make --no-print-directory -s serve
}

run_tests() {
    make --no-print-directory test
}

case "${1:-}" in
    "") ./scripts/ensure-deps.sh && start ;;
    test) ./scripts/ensure-deps.sh && run_tests ;;
    -h | --help) usage ;;
    *) usage >&2; exit 2 ;;
esac
