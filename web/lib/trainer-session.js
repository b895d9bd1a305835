// A training session: one engine trainer (attn.createTrainer) driven by
// messages, the same whether it runs in a Web Worker (trainer-worker.js)
// or, where a worker cannot start (a page opened from disk, a bundle), on
// the page between frames. The page sends:
//   { type: 'create', settings }    a new trainer (the old one disposed)
//   { type: 'play' } / { type: 'pause' } / { type: 'step' } (one batch)
//   { type: 'speed', steps }        batches between two reports
//   { type: 'predict', tokens }     the model on the learner's own input
//   { type: 'head', layer, head, tokens }  what that head attends with
// and hears back:
//   { type: 'created', config, example }      the held-out example shown
//   { type: 'progress', step, loss, heldOut: { loss, accuracy },
//     predicted, attention, playing }         after every report
//   { type: 'prediction', tokens, predicted, attention }
//   { type: 'head', layer, head, tokens, q, k, v, causal, scale }
//   { type: 'error', message }                the engine's message
//
//   const handle = createTrainerSession(engine, post, schedule);
//   handle(message);   post(reply) is called for every reply

export const SHOWN_EXAMPLE = 0;

/**
 * engine: the loaded attention API; post(reply); schedule(callback) runs
 * callback later (a task: the worker or the page stays responsive).
 */
export function createTrainerSession(engine, post, schedule = (callback) => setTimeout(callback, 0)) {
  let trainer = null;
  let example = null;
  let playing = false;
  let stepsPerReport = 5;
  let pending = false;
  let lastStep = 0;
  let lastLoss = null; // the last batch's loss; null before any step

  const fail = (error) => {
    playing = false;
    post({ type: 'error', message: error.message });
  };

  function report() {
    const heldOut = trainer.evaluate();
    const { predicted, attention } = trainer.predict(example.tokens);
    post({ type: 'progress', step: lastStep, loss: lastLoss, heldOut, predicted, attention, playing });
  }

  function train(count) {
    const done = trainer.step(count);
    lastStep = done.step;
    lastLoss = done.loss;
    // The documented budget reached: pause there; Train goes on from it.
    if (playing && lastStep % trainer.config.steps === 0) playing = false;
  }

  function tick() {
    pending = false;
    if (!playing || !trainer) return;
    try {
      const toBudget = trainer.config.steps - (lastStep % trainer.config.steps);
      train(Math.min(stepsPerReport, toBudget));
      report();
    } catch (error) {
      fail(error);
      return;
    }
    if (playing) later();
  }

  function later() {
    if (pending) return;
    pending = true;
    schedule(tick);
  }

  const handlers = {
    create({ settings }) {
      trainer?.dispose();
      trainer = null;
      playing = false;
      trainer = engine.createTrainer(settings);
      example = trainer.example(SHOWN_EXAMPLE);
      lastStep = 0;
      lastLoss = null;
      post({ type: 'created', config: trainer.config, example });
      report();
    },
    play() {
      playing = true;
      later();
    },
    pause() {
      playing = false;
      report();
    },
    step() {
      playing = false;
      train(1);
      report();
    },
    speed({ steps }) {
      stepsPerReport = steps;
    },
    predict({ tokens }) {
      const { predicted, attention } = trainer.predict(tokens);
      post({ type: 'prediction', tokens, predicted, attention });
    },
    head({ layer, head, tokens }) {
      const { causal, scale } = trainer.config;
      post({ type: 'head', layer, head, tokens, ...trainer.head(layer, head, tokens), causal, scale });
    },
  };

  return function handle(message) {
    const handler = handlers[message?.type];
    if (!handler) {
      post({ type: 'error', message: `trainer session: unknown message ${JSON.stringify(message?.type)}` });
      return;
    }
    if (message.type !== 'create' && !trainer) {
      post({ type: 'error', message: 'trainer session: no trainer yet (send create first)' });
      return;
    }
    try {
      handler(message);
    } catch (error) {
      fail(error);
    }
  };
}
