#!/usr/bin/env bash
# Runs each suite of `make test` (the make targets given as arguments) to
# its end whatever the others did, so one failing file never hides the
# rest. Suites run two at a time (SUITE_JOBS), in the order given, since
# most use one core; a suite named in SUITES_ALONE runs with nothing beside
# it, its output printed as it comes (by default test-browser, which keeps
# both cores busy itself, and test-dist, whose `npm pack` rebuilds the
# element and the vendored files that other suites serve). Another suite's
# output is printed whole when it ends, never mixed with another's, then
# its result. At the end: a table of every suite's result in the order
# given; what each failed suite said of its failures (the tests
# scripts/run-tests.mjs names at its end, else each `not ok` of node
# --test with its error's first line, else the suite's last lines), so a
# log cut to its tail still says what failed; a closing line "N passed, N
# failed" (suites); and the exit status 1 if any failed. Whatever the
# suites need is built before (the Makefile's `test`), which passes
# SUITE_MAKEFLAGS (`-o wasm -o vendor ...`) so that no suite builds a file
# again while another suite reads it.
#
#   scripts/run-suites.sh lint test-native test-browser ...
set -uo pipefail
cd "$(dirname "$0")/.."

jobs=${SUITE_JOBS:-2}
alone=" ${SUITES_ALONE:-test-browser test-dist} "
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
declare -A suite_of result_of
running=0

start() { # suite [streamed]
    if [ -n "${2:-}" ]; then echo "== make $1 (alone)"; else echo "== make $1: started"; fi
    (
        started=$SECONDS
        if [ -n "${2:-}" ]; then
            make --no-print-directory ${SUITE_MAKEFLAGS:-} "$1" 2>&1 | tee "$logs/$1"
        else
            make --no-print-directory ${SUITE_MAKEFLAGS:-} "$1" >"$logs/$1" 2>&1
        fi
        status=$?
        echo "$((SECONDS - started))" >"$logs/$1.seconds"
        exit "$status"
    ) &
    suite_of[$!]=$1
    running=$((running + 1))
}

# Waits for one running suite, then prints its output and its result.
finish_one() {
    local pid status suite
    wait -n -p pid
    status=$?
    suite=${suite_of[$pid]}
    running=$((running - 1))
    if [ -z "${streamed:-}" ]; then
        echo "== make $suite"
        cat "$logs/$suite"
    fi
    if [ "$status" -eq 0 ]; then
        result_of[$suite]="passed  $suite ($(cat "$logs/$suite.seconds") s)"
    else
        result_of[$suite]="FAILED  $suite ($(cat "$logs/$suite.seconds") s)"
    fi
    echo "== make $suite: ${result_of[$suite]%% *}"
}

for suite in "$@"; do
    if [[ $alone == *" $suite "* ]]; then
        while [ "$running" -gt 0 ]; do finish_one; done
        start "$suite" streamed
        streamed=1 finish_one
        continue
    fi
    [ "$running" -lt "$jobs" ] || finish_one
    start "$suite"
done
while [ "$running" -gt 0 ]; do finish_one; done

passed=0
failed=()
echo
echo "== every suite's result"
for suite in "$@"; do
    echo "  ${result_of[$suite]}"
    if [[ ${result_of[$suite]} == passed* ]]; then passed=$((passed + 1)); else failed+=("$suite"); fi
done
for suite in "${failed[@]}"; do
    echo
    echo "== what failed in $suite"
    if grep -q '^# [0-9]* failed:$' "$logs/$suite"; then
        sed -n '/^# [0-9]* failed:$/,$p' "$logs/$suite"
    elif grep -q '^ *not ok ' "$logs/$suite"; then
        # node --test's TAP: each failed test and the first line of its error.
        awk '/^ *not ok / && !/# (TODO|SKIP)/ { print; want = 1; next }
             want && /^ *error: / { print; if ($0 ~ /\|-$/) { getline; print }; want = 0 }' "$logs/$suite"
        tail -n 3 "$logs/$suite"
    else
        tail -n 15 "$logs/$suite"
    fi
done
echo
echo "suites: $passed passed, ${#failed[@]} failed"
[ "${#failed[@]}" -eq 0 ]
