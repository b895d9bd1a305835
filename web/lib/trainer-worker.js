// The Web Worker that trains (web/widgets/trainer.js starts it): its own
// engine, one training session (trainer-session.js), messages both ways.
// Until the engine has loaded, messages wait in order.

import { loadAttention } from './attention.js';
import { createTrainerSession } from './trainer-session.js';

const waiting = [];
let handle = (message) => waiting.push(message);

loadAttention().then((engine) => {
  handle = createTrainerSession(engine, (reply) => self.postMessage(reply));
  for (const message of waiting.splice(0)) handle(message);
}, (error) => {
  self.postMessage({ type: 'error', message: `The training engine could not start: ${error.message}` });
});

self.addEventListener('message', (event) => handle(event.data));
