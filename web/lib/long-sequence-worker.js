// The Web Worker that measures long sequences (web/widgets/efficient.js
// starts it with { type: 'measure' } and terminates it to stop): the page
// stays responsive however long a call takes. Every measurement gets a new
// instance of the page's engine module, compiled once.

import { engineFile, loadAttention } from './attention.js';
import { measureLongSequences } from './long-sequences.js';

const MODULE = new URL(`./${engineFile('attention-page')}`, import.meta.url);

self.addEventListener('message', async (event) => {
  if (event.data?.type !== 'measure') return;
  const post = (reply) => self.postMessage(reply);
  let wasmBinary;
  try {
    const response = await fetch(MODULE);
    if (!response.ok) throw new Error(`${MODULE.href}: HTTP ${response.status}`);
    wasmBinary = await response.arrayBuffer();
  } catch (error) {
    post({ type: 'error', message: `The engine could not load: ${error.message}` });
    return;
  }
  await measureLongSequences({ newEngine: () => loadAttention({ wasmBinary }), post });
});
