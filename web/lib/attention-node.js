// The JS API in Node (the package's "node" condition, and what Node's own
// tests import): attention.js, whose loadAttention here also reads a file:
// URL, as the engine beside this file is by default (Node's fetch reads no
// file: URL), and attn.model(folder) reads a model's folder. Only this file
// imports a Node built-in, so that a browser bundle of attention.js has
// none.

import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { AttentionError } from './api/errors.js';
import { load } from './api/load.js';

export * from './attention.js';

const files = Object.freeze({ readFile, folder: { size: (path) => statSync(path).size, read: readFileSync } });

/** loadAttention of attention.js, reading file: URLs and model folders from disk. */
export function loadAttention(options = {}) {
  return load(options, files);
}

// import attention from 'attention-explainer': the same two names.
export default Object.freeze({ loadAttention, AttentionError });
