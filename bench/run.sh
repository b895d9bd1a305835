#!/bin/sh
# `make bench`: this engine (WASM f32 with SIMD and with relaxed SIMD, WASM
# f64, native f32 and f64) against onnxruntime-web, tfjs-backend-wasm,
# onnxruntime-node and plain JS, each in its own process, with the float32
# peaks of this machine (bench/bench.mjs); the engine's WASM float32 kernels
# in the browsers (bench/browser-kernels.mjs), and side by side with the two
# WASM peers in one page of each (bench/browser-side-by-side.mjs); training;
# the page; the Python package against numpy's own computation of the
# same results, in one process (bench/python_numpy.py); and build/attn end
# to end against json.dumps of its result (bench/cli_json.py).
# The peers are devDependencies: `npm ci` first. Figures only.
set -eu
cd "$(dirname "$0")/.."

./bench/build.sh .
NODE_PATH="${NODE_PATH:-/usr/share/nodejs}" emcc -std=c11 -O2 -msimd128 \
    bench/peak_wasm.c --no-entry -sSTANDALONE_WASM -sEXPORTED_FUNCTIONS=_peak \
    -o build/bench/peak.wasm
NODE_PATH="${NODE_PATH:-/usr/share/nodejs}" emcc -std=c11 -O2 -msimd128 -mrelaxed-simd \
    bench/peak_wasm.c --no-entry -sSTANDALONE_WASM -sEXPORTED_FUNCTIONS=_peak \
    -o build/bench/peak-relaxed.wasm
node scripts/relaxed-simd.mjs build/bench/peak-relaxed.wasm

node bench/bench.mjs
ATTENTION_EXPLAINER_LIBRARY="$PWD/build/libattention.so" PYTHONPATH=python \
    "${PYTHON:-/usr/bin/python3}" bench/python_numpy.py
"${PYTHON:-/usr/bin/python3}" bench/cli_json.py
node bench/browser-kernels.mjs
node bench/browser-side-by-side.mjs
node bench/train.mjs
node bench/page.mjs
