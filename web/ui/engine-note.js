// A line for the sections that lean on the engine's speed (long sequences,
// training) where this browser runs the engine's scalar build (WebAssembly
// without SIMD, as Safari before 16.4): the same numbers, more slowly.
//
//   const note = scalarEngineNote(doc, 'Training');  // a <p>, or null where SIMD runs

import { builder } from './dom.js';
import { wasmSupport } from '../lib/attention.js';

export function scalarEngineNote(doc, what) {
  if (wasmSupport() !== 'scalar') return null;
  return builder(doc)('p', 'aw-small aw-engine-note', `${what} runs slower in this browser: it has WebAssembly without SIMD, so the engine uses its `
    + 'build without vector instructions (the same numbers, computed one at a time). A current browser runs it several times faster.');
}
