// The JS API in Node (the package's "node" condition, and what Node's own
// tests import): attention.js, whose loadAttention here also reads a file:
// URL, as the engine beside this file is by default; Node's fetch reads no
// file: URL. Only this file imports a Node built-in, so that a browser
// bundle of attention.js has none.

import { readFile } from 'node:fs/promises';
import { AttentionError } from './api/errors.js';
import { load } from './api/load.js';

export * from './attention.js';

/** loadAttention of attention.js, reading file: URLs from disk. */
export function loadAttention(options = {}) {
  return load(options, readFile);
}

// import attention from 'attention-explainer': the same two names.
export default Object.freeze({ loadAttention, AttentionError });
