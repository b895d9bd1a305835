#!/bin/sh
# bench/build.sh DIR: builds what the benchmarks time in the checkout at DIR
# (the library, its WASM modules, build/bench/bench_sdpa); bench/run.sh
# builds this checkout, bench/ab.sh a base commit's too.
set -eu
dir=$1
make --no-print-directory -C "$dir" lib
(cd "$dir" && ./build.sh)
mkdir -p "$dir/build/bench"
# The same optimisation as the library; never -ffast-math.
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -I"$dir/src" \
    "$dir/bench/bench_sdpa.c" "$dir/build/libattention.a" -lm -o "$dir/build/bench/bench_sdpa"
