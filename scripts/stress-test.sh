#!/usr/bin/env bash
# `make test` under load, as a busy machine runs it: COPIES clean clones of
# HEAD each run `make test` at the same time, beside one CPU-bound loop per
# core, so that every test that waits for time instead of for what it
# asserts shows itself. Passes when every copy passes. Run it before each
# release (docs/development.md#under-load); on 2 cores it takes about three
# times as long as one `make test`.
#
#   scripts/stress-test.sh
#
#   COPIES       how many runs side by side (default 2)
#   STRESS_ROOT  where the clones go, anew each run
#                (default /var/tmp/attention-stress)
#
# The clones share this checkout's node_modules (a link) when it installed
# the same package-lock.json: what is under test is the suites, not npm.
set -euo pipefail
cd "$(dirname "$0")/.."

COPIES=${COPIES:-2}
ROOT=${STRESS_ROOT:-/var/tmp/attention-stress}
REPO=$PWD

log() { echo "stress-test: $*" >&2; }

burners=()
# shellcheck disable=SC2317 # called by the EXIT trap
stop_burners() {
    [ "${#burners[@]}" -eq 0 ] || kill "${burners[@]}" 2>/dev/null || true
}
trap stop_burners EXIT

clone() {
    local dir=$1
    git clone --quiet --no-hardlinks "$REPO" "$dir"
    git -C "$dir" checkout --quiet --detach "$(git rev-parse HEAD)"
    local installed=$REPO/node_modules/.package-lock.json
    if [ -f "$installed" ] && cmp -s "$REPO/package-lock.json" "$dir/package-lock.json"; then
        ln -s "$REPO/node_modules" "$dir/node_modules"
        # The clone's lock is the installed one: dated as it, so that
        # ensure-deps.sh sees nothing to install (npm ci would empty the
        # shared folder).
        touch -r "$installed" "$dir/package-lock.json"
    fi
}

rm -rf --one-file-system "$ROOT"
mkdir -p "$ROOT"
for i in $(seq 1 "$COPIES"); do clone "$ROOT/copy-$i"; done

for _ in $(seq 1 "$(nproc)"); do
    (while :; do :; done) &
    burners+=("$!")
done
log "$COPIES runs of make test beside ${#burners[@]} busy loops; logs in $ROOT/copy-*.log"

runs=()
started=$SECONDS
for i in $(seq 1 "$COPIES"); do
    (cd "$ROOT/copy-$i" && CI=true make test </dev/null >"$ROOT/copy-$i.log" 2>&1) &
    runs+=("$!")
done

failed=0
for i in $(seq 1 "$COPIES"); do
    if wait "${runs[$((i - 1))]}"; then status=passed; else status=FAILED; failed=1; fi
    log "copy $i $status: $(grep -a '^suites:' "$ROOT/copy-$i.log" | tail -1)"
    grep -a '^  FAILED' "$ROOT/copy-$i.log" || true
done
log "all runs ended after $((SECONDS - started)) s"
exit "$failed"
