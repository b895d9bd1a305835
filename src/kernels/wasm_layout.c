/* wasm_layout.c: the compiler's check of wasm_layout.h, in the WebAssembly
 * build only (Emscripten); natively this file declares nothing of its own. */
#include "attention.h"
#include "kernels/wasm_layout.h"

#if defined(__EMSCRIPTEN__)
#include <malloc.h>
#include <stddef.h>

#define PINNED(type, js, member, offset, size)                             \
    _Static_assert(offsetof(type, member) == (offset) &&                   \
                       sizeof(((type *)0)->member) == (size),              \
                   #type "." #member " moved: change wasm_layout.h, then " \
                         "`make facts`");
#define PINNED_OPTIONS(js, member, offset, size) \
    PINNED(attn_options, js, member, offset, size)
#define PINNED_MALLINFO(js, member, offset, size) \
    PINNED(struct mallinfo, js, member, offset, size)
#define PINNED_DECODER_CONFIG(js, member, offset, size) \
    PINNED(attn_decoder_config, js, member, offset, size)

ATTN__WASM_OPTIONS_FIELDS(PINNED_OPTIONS)
_Static_assert(sizeof(attn_options) == ATTN__WASM_OPTIONS_BYTES,
               "attn_options changed size: change wasm_layout.h, then "
               "`make facts`");
ATTN__WASM_MALLINFO_FIELDS(PINNED_MALLINFO)
_Static_assert(sizeof(struct mallinfo) == ATTN__WASM_MALLINFO_BYTES,
               "struct mallinfo changed size: change wasm_layout.h, "
               "then `make facts`");
ATTN__WASM_DECODER_CONFIG_FIELDS(PINNED_DECODER_CONFIG)
_Static_assert(sizeof(attn_decoder_config) == ATTN__WASM_DECODER_CONFIG_BYTES,
               "attn_decoder_config changed size: change wasm_layout.h, "
               "then `make facts`");
#endif
