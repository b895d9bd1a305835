// The C engine's numbers and names that the JS API must agree with, copied
// by hand from src/attention.h (and the kind list from the C JSON adapter,
// src/cli/problem_json.c): each in this one place, imported from here by
// every module of the API.

/** The default limit in bytes of one problem or one *Flat call (ATTN_PROBLEM_DEFAULT_MAX_BYTES). */
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
/** The largest block one call may ask the wasm32 malloc for. */
export const MAX_BLOCK_BYTES = 2 ** 31 - 1;

// attn_format
export const FORMATS = { json: 0, text: 1, markdown: 2, latex: 3, steps: 4 };

// attn_status
export const ATTN_ERR_SIZE = 2;
export const ATTN_ERR_OPTION = 5;
export const ATTN_ERR_RANGE = 6;
export const ATTN_ERR_NOMEM = 9;
export const ATTN_ERR_INPUT = 10;
export const ATTN_ERR_STATE = 11;
export const ATTN_ERR_TOO_LARGE = 12;

// As the C JSON adapter lists them in its messages.
export const KIND_NAMES = '"scaledDotProduct", "multiHead", "additive", "luong", ' +
                          '"linear", "softmax", "weightedSum"';

// The most levels of nesting a problem's tensor has (attn_problem_set_tensor).
export const MAX_RANK = 3;

// wasm32 layout of attn_options (attention.h), for sdpaFlat only:
// scale_kind i32 @0, scale_factor f64 @8, mask.kinds u32 @16,
// mask.key_length ptr @20, mask.allowed ptr @24, mask.window i32 @28,
// mask.stride i32 @32, dropout f64 @40, seed u64 @48.
export const OPTIONS_BYTES = 56;
export const OPTIONS_SCALE_KIND = 0;
export const OPTIONS_SCALE_FACTOR = 8;
export const OPTIONS_MASK_KINDS = 16;
export const OPTIONS_MASK_KEY_LENGTH = 20;
export const OPTIONS_MASK_ALLOWED = 24;
export const OPTIONS_MASK_WINDOW = 28;
export const OPTIONS_MASK_STRIDE = 32;
export const OPTIONS_DROPOUT = 40;
export const OPTIONS_SEED = 48;
// attn_scale_kind, and the ATTN_MASK_* kinds of attn_mask
export const ATTN_SCALE_INV_SQRT_DK = 0;
export const ATTN_SCALE_NONE = 1;
export const ATTN_SCALE_FACTOR = 2;
export const ATTN_MASK_CAUSAL = 1;
export const ATTN_MASK_KEY_PADDING = 1 << 1;
export const ATTN_MASK_CUSTOM = 1 << 2;
export const ATTN_MASK_LOCAL = 1 << 3;
export const ATTN_MASK_STRIDED = 1 << 4;

// The trainer's tasks and settings (attention.h, "Training"), and the
// number of its held-out examples.
export const TRAINER_TASKS = ['copy', 'reverse', 'sort', 'previousToken', 'induction', 'lookup'];
export const TRAINER_SETTINGS = ['seed', 'layers', 'heads', 'dModel', 'dFF', 'seqLength', 'vocab', 'batchSize',
                                 'learningRate', 'scale', 'causal', 'steps'];
export const ATTN_TRAINER_HELD_OUT = 256;
