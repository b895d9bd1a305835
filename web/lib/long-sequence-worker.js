// The Web Worker that measures long sequences (web/widgets/efficient-long.js
// starts it with { type: 'measure' } and terminates it to stop): the page
// stays responsive however long a call takes. Every measurement gets a new
// instance of the page's engine module, compiled once.

import { measurePageEngine } from './long-sequences.js';

self.addEventListener('message', (event) => {
  if (event.data?.type === 'measure') measurePageEngine({ post: (reply) => self.postMessage(reply) });
});
