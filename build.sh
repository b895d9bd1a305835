#!/bin/sh
# Compiles the library (src/*.c, not the CLI in src/cli/) to
# web/lib/attention.wasm, a standalone module that web/lib/attention.js
# instantiates itself (Debian's emscripten 3.1.6 emits ES6 glue that Node
# cannot run). Does nothing when the module is newer than every input.
set -eu
cd "$(dirname "$0")"

# Debian's emcc finds its node packages only through NODE_PATH.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"

out=web/lib/attention.wasm
# src itself changes when a file is added or removed there.
inputs="build.sh src $(ls src/*.c src/*.h)"

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

# Everything the JS API calls, plus the rest of the public C API so that
# callers of the raw module can reach every mechanism.
exports="_malloc,_free,_mallinfo,\
_attn_status_text,\
_attn_problem_create,_attn_problem_destroy,\
_attn_problem_set_tensor,_attn_problem_set_number,_attn_problem_set_bool,\
_attn_problem_set_string,_attn_problem_set_strings,\
_attn_problem_run,_attn_problem_error,_attn_problem_result,_attn_problem_format,\
_attn_options_init,_attn_scale_value,_attn_dropout_keeps,\
_attn_softmax_rows,_attn_mask_check,_attn_mask_allows,\
_attn_sdpa,_attn_sdpa_work_size,_attn_sdpa_from_scores,_attn_weighted_sum,\
_attn_multihead,_attn_multihead_work_size,\
_attn_additive,_attn_additive_work_size,\
_attn_luong,_attn_luong_work_size,\
_attn_linear,_attn_linear_work_size"

mkdir -p web/lib
# emcc can leave a fresh but broken output when it fails late: build beside
# the target and move it into place only on success.
tmp="$out.tmp.$$.wasm"
trap 'rm -f "$tmp"' EXIT
# Never -ffast-math: it lets the compiler delete isinf/isnan guards.
set -x
emcc -std=c11 -O2 -Wall -Wextra -Isrc src/*.c \
    --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 \
    -sEXPORTED_FUNCTIONS="$exports" \
    -o "$tmp"
mv "$tmp" "$out"
