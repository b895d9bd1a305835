// The Web Worker that measures long sequences on one core
// (web/widgets/efficient-long.js sends { type: 'measure', sizes } for each
// size in turn and terminates it to stop): the page stays responsive
// however long a call takes. Every measurement gets a new instance of the
// page's engine module.

import { measurePageEngine } from './long-sequences.js';

self.addEventListener('message', (event) => {
  if (event.data?.type === 'measure') measurePageEngine({ sizes: event.data.sizes, post: (reply) => self.postMessage(reply) });
});
