/*
 * wasm_layout.h: where web/lib/attention.js finds the fields of the C
 * structs it writes or reads in WebAssembly (wasm32) memory. The one place
 * these numbers are written: scripts/gen-facts.c copies them into
 * web/lib/facts.js, and wasm_layout.c checks them with _Static_assert when
 * the engine is compiled to WebAssembly, so a field that moves breaks that
 * build instead of the JS API. (Natively pointers are 8 bytes and the
 * layouts differ; nothing reads them there.)
 *
 * X(js name, C member, offset, size in bytes)
 */
#ifndef ATTN_KERNELS_WASM_LAYOUT_H
#define ATTN_KERNELS_WASM_LAYOUT_H

/* attn_options, which sdpaFlat fills field by field. */
#define ATTN__WASM_OPTIONS_BYTES 56
#define ATTN__WASM_OPTIONS_FIELDS(X)         \
    X(scaleKind, scale_kind, 0, 4)           \
    X(scaleFactor, scale_factor, 8, 8)       \
    X(maskKinds, mask.kinds, 16, 4)          \
    X(maskKeyLength, mask.key_length, 20, 4) \
    X(maskAllowed, mask.allowed, 24, 4)      \
    X(maskWindow, mask.window, 28, 4)        \
    X(maskStride, mask.stride, 32, 4)        \
    X(dropout, dropout, 40, 8)               \
    X(seed, seed, 48, 8)

/* Emscripten's struct mallinfo (its malloc.h), which memoryStats reads. */
#define ATTN__WASM_MALLINFO_BYTES 40
#define ATTN__WASM_MALLINFO_FIELDS(X) X(uordblks, uordblks, 28, 4)

/* attn_decoder_config, which a model's config is read from (LlamaConfig's
 * names in JS too). */
#define ATTN__WASM_DECODER_CONFIG_BYTES 56
#define ATTN__WASM_DECODER_CONFIG_FIELDS(X)                    \
    X(vocab_size, vocab_size, 0, 4)                            \
    X(hidden_size, hidden_size, 4, 4)                          \
    X(intermediate_size, intermediate_size, 8, 4)              \
    X(num_hidden_layers, num_hidden_layers, 12, 4)             \
    X(num_attention_heads, num_attention_heads, 16, 4)         \
    X(num_key_value_heads, num_key_value_heads, 20, 4)         \
    X(max_position_embeddings, max_position_embeddings, 24, 4) \
    X(rope_theta, rope_theta, 32, 8)                           \
    X(rms_norm_eps, rms_norm_eps, 40, 8)                       \
    X(tie_word_embeddings, tie_word_embeddings, 48, 4)

#endif /* ATTN_KERNELS_WASM_LAYOUT_H */
