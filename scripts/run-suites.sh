#!/usr/bin/env bash
# Runs each suite of `make test` (the make targets given as arguments) to
# its end whatever the others did, so one failing file never hides the
# rest: each suite's result is printed as it ends and again in a table at
# the end, then what each failed suite said of its failures (the tests
# scripts/run-tests.mjs names at its end, or the suite's last lines), so a
# log cut to its tail still says what failed; then a closing line
# "N passed, N failed" (suites), and the exit status is 1 if any failed.
#
#   scripts/run-suites.sh lint test-native test-browser ...
set -uo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=()
failed=()
results=()
for suite in "$@"; do
    started=$SECONDS
    echo "== make $suite"
    if make --no-print-directory "$suite" 2>&1 | tee "$logs/$suite"; then
        passed+=("$suite")
        results+=("passed  $suite ($((SECONDS - started)) s)")
    else
        failed+=("$suite")
        results+=("FAILED  $suite ($((SECONDS - started)) s)")
    fi
    echo "== make $suite: ${results[-1]%% *}"
done

echo
echo "== every suite's result"
printf '  %s\n' "${results[@]}"
for suite in "${failed[@]}"; do
    echo
    echo "== what failed in $suite"
    if grep -q '^# [0-9]* failed:$' "$logs/$suite"; then
        sed -n '/^# [0-9]* failed:$/,$p' "$logs/$suite"
    else
        tail -n 15 "$logs/$suite"
    fi
done
echo
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed"
[ "${#failed[@]}" -eq 0 ]
