// The one error type of the JS API (exported by web/lib/attention.js).

import { ATTN_ERR_INPUT } from './engine-constants.js';

/**
 * What every call on the engine throws: an Error with the attn_status code
 * (attention.h) in `status`, so `error instanceof AttentionError` holds.
 * One made from an exception the caller's own code threw while the call
 * read its input (a getter) has that exception as its `cause`.
 */
export class AttentionError extends Error {
  constructor(message, status, options) {
    super(message, options);
    this.name = 'AttentionError';
    this.status = status;
  }
}

/** An input the engine cannot take (ATTN_ERR_INPUT). */
export function inputError(message) {
  return new AttentionError(message, ATTN_ERR_INPUT);
}
