#!/bin/sh
# `make bench-ab BASE=<commit>`: builds BASE in a worktree under build/bench/
# (the library, its WASM and bench_sdpa) and times this checkout against it
# with bench/ab.mjs (ROUNDS, default 3, rounds), then the two WASM SIMD
# builds side by side in one process.
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
# Separate processes carry a shared machine's load changes; the two SIMD
# builds side by side in one process, their samples in turn, do not.
echo
echo "The two WASM SIMD builds side by side (BASE's first; × this ÷ BASE):"
node bench/impl.mjs interleaved "$dir/web/lib/attention.wasm" web/lib/attention.wasm
