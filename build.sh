#!/bin/sh
# Compiles the library (the layers of src/, not the CLI in src/cli/) to
# web/lib/attention.wasm, a standalone module that web/lib/attention.js
# instantiates itself (Debian's emscripten 3.1.6 emits ES6 glue that Node
# cannot run). It exports the functions listed in src/wasm/exports.txt.
# Does nothing when the module is newer than every input.
#
#   ./build.sh                          web/lib/attention.wasm at -O2
#   ATTN_WASM_OUT=x.wasm ATTN_WASM_OPT=-Oz ./build.sh
#                                       another file, other optimisation
#                                       (the one-file page's small module)
set -eu
cd "$(dirname "$0")"

# Debian's emcc finds its node packages only through NODE_PATH.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"

out="${ATTN_WASM_OUT:-web/lib/attention.wasm}"
opt="${ATTN_WASM_OPT:--O2}"
# The library's layers, as in the Makefile (ARCHITECTURE.md).
layers="kernels text problem walkthrough train"
sources=""
for layer in $layers; do sources="$sources $(ls src/$layer/*.c)"; done
# A folder changes when a file is added to it or removed from it.
inputs="build.sh src src/attention.h src/wasm/exports.txt"
for layer in $layers; do inputs="$inputs src/$layer $(ls src/$layer/*.[ch])"; done

up_to_date=yes
if [ ! -f "$out" ]; then
    up_to_date=no
else
    for f in $inputs; do
        if [ "$f" -nt "$out" ]; then up_to_date=no; break; fi
    done
fi
if [ "$up_to_date" = yes ]; then
    echo "build.sh: $out is up to date"
    exit 0
fi

exports=$(grep -v '^#' src/wasm/exports.txt | sed 's/^/_/' | paste -sd, -)

mkdir -p "$(dirname "$out")"
# emcc can leave a fresh but broken output when it fails late: build beside
# the target and move it into place only on success.
tmp="$out.tmp.$$.wasm"
trap 'rm -f "$tmp"' EXIT
# Never -ffast-math: it lets the compiler delete isinf/isnan guards.
# -msimd128: WASM SIMD, for the float32 kernels (src/kernels/sdpa_f32.c).
set -x
# shellcheck disable=SC2086 # $sources is a list of paths without spaces
emcc -std=c11 "$opt" -msimd128 -Wall -Wextra -Isrc $sources \
    --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 \
    -sEXPORTED_FUNCTIONS="$exports" \
    -o "$tmp"
mv "$tmp" "$out"
