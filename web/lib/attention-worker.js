// The Web Worker of parallel.js's pool: one instance of the engine, loaded
// from the bytes the pool sends, answering its block of each call.

import { loadAttention } from './attention.js';
import { serveAttention } from './parallel.js';

serveAttention(self, (wasmBinary) => loadAttention({ wasmBinary }));
