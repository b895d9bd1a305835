#!/bin/sh
# Compiles the library (the layers of src/, not the CLI in src/cli/) to two
# standalone WebAssembly modules that web/lib/attention.js instantiates itself
# (Debian's emscripten 3.1.6 emits ES6 glue that Node cannot run):
#
#   web/lib/attention.wasm       everything, at -O2: the JS API's default
#                                module (Node, the trainer's Web Worker, the
#                                custom element), exporting src/wasm/exports.txt
#   web/lib/attention-page.wasm  the page's first load (web/app.js, embed.js):
#                                no train/, lm/ or model/ layer, only the
#                                exports that the JS API calls
#                                (web/lib/attention.js and web/lib/api/; no
#                                attn_trainer_* nor attn_model_*), the
#                                float64 kernels and problem/ at -Oz (tiny
#                                problems there), the float32 kernels and the
#                                step lists' writers at -O2: two thirds of the
#                                bytes (the page trains in its worker, on the
#                                module above)
#
# and each again without WebAssembly SIMD, as attention-scalar.wasm and
# attention-page-scalar.wasm, for browsers that lack it (Safari before 16.4),
# and with relaxed SIMD, as attention-relaxed.wasm and
# attention-page-relaxed.wasm, whose float32 kernel multiplies and adds in
# one fused instruction, for browsers that have it (Chrome 114 on; Node 20
# with --experimental-wasm-relaxed-simd). web/lib/engine-file.js picks the
# build that runs. Each is rebuilt only when an input is newer; the relaxed
# builds need wabt (npm ci) for scripts/relaxed-simd.mjs.
#
#   ./build.sh
#   ATTN_WASM_OUT=x.wasm ATTN_WASM_OPT=-Oz [ATTN_WASM_LEAVE_OUT=PATTERN] ./build.sh
#                                only x.wasm: everything at that optimisation
#                                but the exports PATTERN (a grep pattern)
#                                matches (the one-file page's small module)
set -eu
cd "$(dirname "$0")"

# Debian's emcc finds its node packages only through NODE_PATH.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"

# The library's layers, as in the Makefile (ARCHITECTURE.md).
ALL_LAYERS="kernels text model problem walkthrough check lm train"
PAGE_LAYERS="kernels text problem walkthrough check"

sources_of() {
    for layer in $1; do ls src/"$layer"/*.c; done
}

# exports_of FILTER: the exported functions (src/wasm/exports.txt) whose
# names do not match FILTER, as emcc's comma-separated list.
exports_of() {
    grep -v '^#' src/wasm/exports.txt | grep -v -e "$1" | sed 's/^/_/' | paste -sd, -
}

up_to_date() { # out layers [more inputs]
    [ -f "$1" ] || return 1
    for f in build.sh src src/attention.h src/wasm/exports.txt ${3:-}; do [ "$f" -nt "$1" ] && return 1; done
    for layer in $2; do
        # A folder changes when a file is added to it or removed from it.
        for f in src/"$layer" src/"$layer"/*.[ch]; do [ "$f" -nt "$1" ] && return 1; done
    done
    return 0
}

# build OUT OPT LAYERS EXPORT_FILTER SMALL [INPUTS]: OPT for the link and
# every source but those that SMALL (a grep -E pattern; empty for none)
# matches, which are compiled for size (-Oz); the float32 kernels never
# are. INPUTS: files besides the sources whose change rebuilds OUT.
build() {
    out=$1 opt=$2 layers=$3 filter=$4 small=$5 inputs=${6:-}
    # -msimd128: WASM SIMD, for the float32 kernels (src/kernels/sdpa_f32.c);
    # a -scalar.wasm is the same without it, a -relaxed.wasm adds relaxed
    # SIMD, whose pre-standard opcodes scripts/relaxed-simd.mjs rewrites.
    case "$out" in
    *-scalar.wasm) simd='' ;;
    *-relaxed.wasm) simd='-msimd128 -mrelaxed-simd' inputs="$inputs scripts/relaxed-simd.mjs" ;;
    *) simd=-msimd128 ;;
    esac
    if up_to_date "$out" "$layers" "$inputs"; then
        echo "build.sh: $out is up to date"
        return 0
    fi
    mkdir -p "$(dirname "$out")"
    # emcc can leave a fresh but broken output when it fails late: build
    # beside the target and move it into place only on success.
    tmp="$out.tmp.$$"
    mkdir -p "$tmp"
    sources=$(sources_of "$layers")
    if [ -n "$small" ]; then
        small_sources=$(echo "$sources" | grep -E "$small" | grep -v f32)
        for f in $small_sources; do
            emcc -std=c11 -Oz $simd -Wall -Wextra -Isrc -c "$f" -o "$tmp/$(basename "$f" .c).o"
        done
        sources="$(echo "$sources" | grep -v -x -F "$small_sources") $(ls "$tmp"/*.o)"
    fi
    # Never -ffast-math: it lets the compiler delete isinf/isnan guards.
    # shellcheck disable=SC2086 # $sources is a list of paths without spaces; $simd may be empty
    emcc -std=c11 "$opt" $simd -Wall -Wextra -Isrc $sources \
        --no-entry -sSTANDALONE_WASM -sALLOW_MEMORY_GROWTH=1 \
        -sEXPORTED_FUNCTIONS="$(exports_of "$filter")" \
        -o "$tmp/out.wasm"
    case "$out" in *-relaxed.wasm) node scripts/relaxed-simd.mjs "$tmp/out.wasm" ;; esac
    mv "$tmp/out.wasm" "$out"
    rm -rf "$tmp"
    echo "build.sh: built $out"
}

# The JS API's modules (web/lib/attention.js and those of web/lib/api/).
JS_API=$(ls web/lib/attention.js web/lib/api/*.js)

# The exports the JS API never names, as a grep pattern: the page's module
# leaves them out, and with them the code only they reach.
not_called_by_page() {
    grep -v '^#' src/wasm/exports.txt | while read -r name; do
        # shellcheck disable=SC2086 # $JS_API is a list of paths without spaces
        grep -qw "$name" $JS_API || printf '^%s$\n' "$name"
    done | paste -sd'|' - | sed 's/|/\\|/g'
}

trap 'rm -rf web/lib/*.tmp.$$ "${ATTN_WASM_OUT:-.}.tmp.$$"' EXIT
if [ -n "${ATTN_WASM_OUT:-}" ]; then
    build "$ATTN_WASM_OUT" "${ATTN_WASM_OPT:--O2}" "$ALL_LAYERS" "${ATTN_WASM_LEAVE_OUT:-^\$}" ''
else
    # The two modules of each variant side by side, one per core: each
    # build is one emcc at a time, and `make test` waits on all six.
    page_filter="^attn_trainer_\\|^attn_model_\\|$(not_called_by_page)"
    for variant in '' -scalar -relaxed; do
        build "web/lib/attention$variant.wasm" -O2 "$ALL_LAYERS" '^$' '' &
        whole=$!
        build "web/lib/attention-page$variant.wasm" -O2 "$PAGE_LAYERS" "$page_filter" \
            '^src/(kernels|problem)/' "$JS_API" &
        page=$!
        status=0
        wait "$whole" || status=$?
        wait "$page" || status=$?
        [ "$status" -eq 0 ] || exit "$status"
    done
fi
