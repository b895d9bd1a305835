// facts.js: what the JS API shares with the C library, written from the
// library's own tables by scripts/gen-facts.c (`make facts`); do not edit.
// tests/wasm/facts.test.mjs fails when it differs from what that writes.

/** attn_status codes by name (src/attention.h); their numbers never change. */
export const STATUS = {
  ATTN_OK: 0,
  ATTN_ERR_NULL: 1,
  ATTN_ERR_SIZE: 2,
  ATTN_ERR_SIZE_OVERFLOW: 3,
  ATTN_ERR_HEADS: 4,
  ATTN_ERR_OPTION: 5,
  ATTN_ERR_RANGE: 6,
  ATTN_ERR_NOT_FINITE: 7,
  ATTN_ERR_OVERFLOW_VALUE: 8,
  ATTN_ERR_NOMEM: 9,
  ATTN_ERR_INPUT: 10,
  ATTN_ERR_STATE: 11,
  ATTN_ERR_TOO_LARGE: 12,
  ATTN_ERR_KV_HEADS: 13,
  ATTN_ERR_HEAD_DIM: 14,
  ATTN_ERR_POSITION: 15,
  ATTN_ERR_CACHE_FULL: 16,
  ATTN_ERR_TOKEN: 17,
  ATTN_ERR_FORMAT: 18,
};

/** attn_status_text of each code, by number. */
export const STATUS_TEXT = [
  'ok',
  'a required pointer is NULL',
  'a size is zero or negative',
  'a product of sizes does not fit in size_t',
  'num_heads does not divide d_model',
  'an option has an unknown value',
  'a parameter is outside its range',
  'an input holds NaN or an infinity',
  'a computed value overflowed',
  'an allocation failed',
  'a problem field is missing, unknown or misshapen',
  'call out of order',
  'the call would need more bytes than its limit',
  'num_key_value_heads does not divide num_attention_heads',
  'rotary position embeddings need an even head_dim',
  'a position is negative or not below max_position_embeddings',
  'the key/value cache has no room for the new tokens',
  'a token id is negative or not below vocab_size',
  'a model file is malformed or disagrees with its sizes',
];

/** The problem kinds (attn_problem_kind), in the library's order. */
export const KINDS = [
  'scaledDotProduct',
  'weightedSum',
  'multiHead',
  'additive',
  'luong',
  'linear',
  'softmax',
  'transformerBlock',
  'onlineSoftmax',
];

/** Each kind's fields (src/problem/problem.c) and the types a field takes. */
export const KIND_FIELDS = {
  scaledDotProduct: {
    q: ['tensor'],
    k: ['tensor'],
    v: ['tensor'],
    scores: ['tensor'],
    dk: ['number'],
    gradOutput: ['tensor'],
    target: ['tensor'],
    mask: ['tensor', 'string'],
    keyLength: ['tensor', 'number'],
    window: ['number'],
    stride: ['number'],
    scale: ['number', 'boolean'],
    dropout: ['number'],
    seed: ['number'],
    tokens: ['strings'],
    queryTokens: ['strings'],
    keyTokens: ['strings'],
  },
  weightedSum: {
    weights: ['tensor'],
    v: ['tensor'],
    tokens: ['strings'],
    queryTokens: ['strings'],
    keyTokens: ['strings'],
  },
  multiHead: {
    x: ['tensor'],
    xkv: ['tensor'],
    numHeads: ['number'],
    wq: ['tensor'],
    wk: ['tensor'],
    wv: ['tensor'],
    wo: ['tensor'],
    bq: ['tensor'],
    bk: ['tensor'],
    bv: ['tensor'],
    bo: ['tensor'],
    gradOutput: ['tensor'],
    mask: ['tensor', 'string'],
    keyLength: ['tensor', 'number'],
    window: ['number'],
    stride: ['number'],
    scale: ['number', 'boolean'],
    dropout: ['number'],
    seed: ['number'],
    tokens: ['strings'],
    queryTokens: ['strings'],
    keyTokens: ['strings'],
  },
  additive: {
    query: ['tensor'],
    keys: ['tensor'],
    ws: ['tensor'],
    wh: ['tensor'],
    v: ['tensor'],
    b: ['tensor'],
    tokens: ['strings'],
    gradContext: ['tensor'],
  },
  luong: {
    query: ['tensor'],
    keys: ['tensor'],
    method: ['string'],
    w: ['tensor'],
    v: ['tensor'],
    b: ['tensor'],
    tokens: ['strings'],
    gradContext: ['tensor'],
  },
  linear: {
    q: ['tensor'],
    k: ['tensor'],
    v: ['tensor'],
    causal: ['boolean'],
    tokens: ['strings'],
    queryTokens: ['strings'],
    keyTokens: ['strings'],
    gradOutput: ['tensor'],
  },
  softmax: {
    x: ['tensor'],
    scale: ['number'],
    mask: ['tensor'],
    queryTokens: ['strings'],
    keyTokens: ['strings'],
  },
  transformerBlock: {
    x: ['tensor'],
    numHeads: ['number'],
    wq: ['tensor'],
    wk: ['tensor'],
    wv: ['tensor'],
    wo: ['tensor'],
    bq: ['tensor'],
    bk: ['tensor'],
    bv: ['tensor'],
    bo: ['tensor'],
    gamma1: ['tensor'],
    beta1: ['tensor'],
    w1: ['tensor'],
    b1: ['tensor'],
    w2: ['tensor'],
    b2: ['tensor'],
    gamma2: ['tensor'],
    beta2: ['tensor'],
    norm: ['string'],
    gradOutput: ['tensor'],
    mask: ['tensor', 'string'],
    keyLength: ['tensor', 'number'],
    window: ['number'],
    stride: ['number'],
    scale: ['number', 'boolean'],
    dropout: ['number'],
    seed: ['number'],
    tokens: ['strings'],
    queryTokens: ['strings'],
    keyTokens: ['strings'],
  },
  onlineSoftmax: {
    q: ['tensor'],
    k: ['tensor'],
    v: ['tensor'],
    tile: ['number'],
    tokens: ['strings'],
    queryTokens: ['strings'],
    keyTokens: ['strings'],
  },
};

/** The formats a user names (attn_format_name), each at its number. */
export const FORMAT_NAMES = [
  'json',
  'text',
  'markdown',
  'latex',
  'steps',
];

/** The trainer's tasks (attn_trainer_task). */
export const TASKS = [
  'copy',
  'reverse',
  'sort',
  'previousToken',
  'induction',
  'lookup',
];

/** The trainer's settings (attn_trainer_setting). */
export const TRAINER_SETTINGS = [
  'seed',
  'layers',
  'heads',
  'dModel',
  'dFF',
  'seqLength',
  'vocab',
  'batchSize',
  'learningRate',
  'scale',
  'causal',
  'steps',
];

/** Limits (attention.h). */
export const LIMITS = {
  ATTN_PROBLEM_DEFAULT_MAX_BYTES: 268435456,
  ATTN_TRAINER_HELD_OUT: 256,
};

/** attn_scale_kind. */
export const SCALE = {
  ATTN_SCALE_INV_SQRT_DK: 0,
  ATTN_SCALE_NONE: 1,
  ATTN_SCALE_FACTOR: 2,
};

/** attn_format. */
export const FORMAT = {
  ATTN_FORMAT_JSON: 0,
  ATTN_FORMAT_TEXT: 1,
  ATTN_FORMAT_MARKDOWN: 2,
  ATTN_FORMAT_LATEX: 3,
  ATTN_FORMAT_STEPS: 4,
  ATTN_FORMAT_STEP_OUTLINE: 5,
};

/** The ATTN_MASK_* bits of attn_mask.kinds. */
export const MASK = {
  ATTN_MASK_CAUSAL: 1,
  ATTN_MASK_KEY_PADDING: 2,
  ATTN_MASK_CUSTOM: 4,
  ATTN_MASK_LOCAL: 8,
  ATTN_MASK_STRIDED: 16,
};

/** Byte sizes and field offsets in wasm32 memory (src/kernels/wasm_layout.h,
 * checked by the compiler in every WebAssembly build). */
export const OPTIONS_LAYOUT = {
  bytes: 56,
  scaleKind: 0,
  scaleFactor: 8,
  maskKinds: 16,
  maskKeyLength: 20,
  maskAllowed: 24,
  maskWindow: 28,
  maskStride: 32,
  dropout: 40,
  seed: 48,
};
export const MALLINFO_LAYOUT = {
  bytes: 40,
  uordblks: 28,
};
export const DECODER_CONFIG_LAYOUT = {
  bytes: 56,
  vocab_size: 0,
  hidden_size: 4,
  intermediate_size: 8,
  num_hidden_layers: 12,
  num_attention_heads: 16,
  num_key_value_heads: 20,
  max_position_embeddings: 24,
  rope_theta: 32,
  rms_norm_eps: 40,
  tie_word_embeddings: 48,
};
