#!/bin/sh
# `make bench-ab BASE=<commit>`: builds BASE in a worktree under build/bench/
# (the library, its WASM and bench_sdpa) and times this checkout against it
# with bench/ab.mjs. ROUNDS (default 3) rounds.
set -eu
cd "$(dirname "$0")/.."
base=${1:?usage: bench/ab.sh COMMIT (ROUNDS=N in the environment)}
rev=$(git rev-parse --short "$base^{commit}")
dir=build/bench/base-$rev
if [ ! -d "$dir" ]; then
    git worktree add --detach "$dir" "$rev"
    ln -s "$PWD/node_modules" "$dir/node_modules"
fi
./bench/build.sh "$dir"
./bench/build.sh .
node bench/ab.mjs "$dir" "${ROUNDS:-3}"
