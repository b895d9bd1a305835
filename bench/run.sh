#!/bin/sh
# Times scaled dot-product attention natively (bench/bench_sdpa.c over
# build/libattention.a), as WebAssembly in Node (attn.sdpaFlat) and as plain
# JS, and prints one table side by side. Figures only: nothing is asserted.
set -eu
cd "$(dirname "$0")/.."

make --no-print-directory lib
./build.sh

mkdir -p build/bench
# The same optimisation as the library; never -ffast-math.
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -Isrc \
    bench/bench_sdpa.c build/libattention.a -lm -o build/bench/bench_sdpa

echo "bench: timing native attn_sdpa ..." >&2
./build/bench/bench_sdpa > build/bench/native.txt
node bench/bench.mjs build/bench/native.txt
