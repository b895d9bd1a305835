// The C engine's numbers and names that the JS API must agree with, named
// for the API's modules, each taken from facts.js (which scripts/gen-facts.c
// writes from the library's own tables), imported from here by every module
// of the API. Only MAX_BLOCK_BYTES is the API's own.
import {
  DECODER_CONFIG_LAYOUT, FORMAT, FORMAT_NAMES, KINDS, LIMITS, MALLINFO_LAYOUT, MASK, OPTIONS_LAYOUT, SCALE, STATUS,
  TASKS, TRAINER_SETTINGS as SETTINGS,
} from '../facts.js';

/** The default limit in bytes of one problem or one *Flat call (ATTN_PROBLEM_DEFAULT_MAX_BYTES). */
export const DEFAULT_MAX_BYTES = LIMITS.ATTN_PROBLEM_DEFAULT_MAX_BYTES;
/** The largest block one call may ask the wasm32 malloc for. */
export const MAX_BLOCK_BYTES = 2 ** 31 - 1;

// The formats a user names, name -> number (attn_format_name), and the steps
// without equations for walkthrough(input, { equations: false }).
export const FORMATS = Object.fromEntries(FORMAT_NAMES.map((name, format) => [name, format]));
export const FORMAT_STEP_OUTLINE = FORMAT.ATTN_FORMAT_STEP_OUTLINE;
// The same names as a message lists them: '"json", "text", … or "steps"';
// a check's report is written in any but "steps".
const choices = (names) => names.map((name) => `"${name}"`).join(', ').replace(/, ([^,]*)$/, ' or $1');
export const FORMAT_CHOICES = choices(FORMAT_NAMES);
export const REPORT_FORMAT_CHOICES = choices(FORMAT_NAMES.filter((name) => name !== 'steps'));

export const { ATTN_ERR_SIZE, ATTN_ERR_OPTION, ATTN_ERR_RANGE, ATTN_ERR_NOMEM, ATTN_ERR_INPUT, ATTN_ERR_STATE,
  ATTN_ERR_TOO_LARGE } = STATUS;

// Every kind, as the C JSON adapter lists them in its messages.
export const KIND_NAMES = KINDS.map((name) => `"${name}"`).join(', ');

// The most levels of nesting a problem's tensor has (attn_problem_set_tensor).
export const MAX_RANK = 3;

// wasm32 layout of attn_options (attention.h), for sdpaFlat only: scale_kind
// i32, scale_factor f64, mask.kinds u32, mask.key_length and mask.allowed
// pointers, mask.window and mask.stride i32, dropout f64, seed u64.
export const {
  bytes: OPTIONS_BYTES, scaleKind: OPTIONS_SCALE_KIND, scaleFactor: OPTIONS_SCALE_FACTOR,
  maskKinds: OPTIONS_MASK_KINDS, maskKeyLength: OPTIONS_MASK_KEY_LENGTH, maskAllowed: OPTIONS_MASK_ALLOWED,
  maskWindow: OPTIONS_MASK_WINDOW, maskStride: OPTIONS_MASK_STRIDE, dropout: OPTIONS_DROPOUT, seed: OPTIONS_SEED,
} = OPTIONS_LAYOUT;
// Emscripten's struct mallinfo: its size and where uordblks (bytes in use) is.
export const { bytes: MALLINFO_BYTES, uordblks: MALLINFO_UORDBLKS } = MALLINFO_LAYOUT;
// attn_decoder_config: where each of its fields (LlamaConfig's names) is,
// and which are doubles (the others are ints).
export const DECODER_CONFIG_OFFSETS = Object.fromEntries(Object.entries(DECODER_CONFIG_LAYOUT)
  .filter(([name]) => name !== 'bytes'));
export const DECODER_CONFIG_DOUBLES = ['rope_theta', 'rms_norm_eps'];
// attn_scale_kind, and the ATTN_MASK_* kinds of attn_mask
export const { ATTN_SCALE_INV_SQRT_DK, ATTN_SCALE_NONE, ATTN_SCALE_FACTOR } = SCALE;
export const { ATTN_MASK_CAUSAL, ATTN_MASK_KEY_PADDING, ATTN_MASK_CUSTOM, ATTN_MASK_LOCAL, ATTN_MASK_STRIDED } = MASK;

// The trainer's tasks and settings (attention.h, "Training"), and the
// number of its held-out examples.
export const TRAINER_TASKS = TASKS;
export const TRAINER_SETTINGS = SETTINGS;
export const { ATTN_TRAINER_HELD_OUT } = LIMITS;
