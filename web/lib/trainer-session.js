// A training session: one engine trainer (attn.createTrainer) driven by
// messages, the same whether it runs in a Web Worker (trainer-worker.js)
// or, where a worker cannot start (a page opened from disk, a bundle), on
// the page between frames. It paces training (SPEEDS: so many steps, then a
// wait) and records it: for every recorded step, the batch loss, the
// held-out loss and accuracy, and the model's predictions and every head's
// weights on the example shown, so that any recorded step can be shown
// again. The page sends:
//   { type: 'create', settings }    a new trainer (the old one disposed)
//   { type: 'play' } / { type: 'pause' } / { type: 'step' } (one batch)
//   { type: 'speed', speed }        a key of SPEEDS
//   { type: 'replay', step, request }  the recorded step at or before `step`
//   { type: 'predict', tokens }     the model on the learner's own input
//   { type: 'head', layer, head, tokens }  what that head attends with
// and hears back:
//   { type: 'created', config, example }      the held-out example shown
//   { type: 'progress', ...snapshot, playing, handled, timeline }  after every
//       report: the latest snapshot, whether it plays, how many messages it
//       had handled (so the page can tell a report sent before its latest
//       Train or Pause) and every recorded step's { step, loss, heldOut }
//   { type: 'recorded', request, ...snapshot }  the answer to 'replay'
//   { type: 'prediction', tokens, predicted, attention }
//   { type: 'head', layer, head, tokens, q, k, v, causal, scale }
//   { type: 'error', message }                the engine's message
// A snapshot is { step, loss (the last batch's; null at step 0),
// heldOut: { loss, accuracy }, predicted, attention [layer][head][query][key] }.
//
//   const handle = createTrainerSession(engine, post, schedule);
//   handle(message);   post(reply) is called for every reply

export const SHOWN_EXAMPLE = 0;

// How fast training goes. After each report the session measures how far
// one step moved what the page shows (changeOf: the largest change of any
// head's weight on the example shown, or of the held-out accuracy) and
// paces the next report by it (pace): a step that moves much is shown alone
// and held for `perChange` ms per unit of change (at most `maxWait`); steps
// that move little go by several a report (at most `maxSteps`) every
// `minWait` ms. So a head forming is slow enough to watch, and the long
// tail where nothing changes passes quickly. Full speed takes `maxSteps` a
// report and never waits.
export const SPEEDS = {
  slow: { label: 'Slow', perChange: 14000, minWait: 200, maxWait: 3000, maxSteps: 1 },
  normal: { label: 'Normal', perChange: 7000, minWait: 100, maxWait: 1500, maxSteps: 4 },
  fast: { label: 'Fast', perChange: 1750, minWait: 50, maxWait: 400, maxSteps: 8 },
  full: { label: 'Full speed', perChange: 0, minWait: 0, maxWait: 0, maxSteps: 5 },
};
export const DEFAULT_SPEED = 'normal';

// The record keeps at most this many snapshots: when it would hold more, every
// other one goes (the recorded steps stay evenly spaced, twice as far apart),
// so a session that trains for hours holds as much as one of a few minutes.
export const MAX_RECORDED = 256;

/**
 * How far one step moved what the page shows, from snapshot `from` to
 * snapshot `to`, `steps` steps later: the largest change of any head's
 * weight on the example shown, or of the held-out accuracy, per step.
 */
export function changeOf(from, to, steps) {
  let largest = Math.abs(to.heldOut.accuracy - from.heldOut.accuracy);
  to.attention.forEach((layer, l) => layer.forEach((head, h) => head.forEach((row, i) => row.forEach((w, j) => {
    largest = Math.max(largest, Math.abs(w - from.attention[l][h][i][j]));
  }))));
  return largest / steps;
}

/**
 * The next report's pace at `speed` (a value of SPEEDS) after steps that
 * each moved `change` (changeOf): { steps, wait } (ms).
 */
export function pace(speed, change) {
  const deserved = change * speed.perChange; // ms one such step deserves
  if (speed.perChange === 0) return { steps: speed.maxSteps, wait: 0 };
  if (deserved >= speed.minWait) return { steps: 1, wait: Math.round(Math.min(deserved, speed.maxWait)) };
  // Little moves: as many steps as make up minWait's worth, each a report's.
  const steps = Math.min(speed.maxSteps, Math.max(1, Math.floor(speed.minWait / Math.max(deserved, 1e-9))));
  return { steps, wait: speed.minWait };
}

/**
 * engine: the loaded attention API; post(reply); schedule(callback, wait)
 * runs callback after `wait` ms (a task: the worker or the page stays
 * responsive).
 */
export function createTrainerSession(engine, post, schedule = (callback, wait) => setTimeout(callback, wait)) {
  let trainer = null;
  let example = null;
  let playing = false;
  let speed = SPEEDS[DEFAULT_SPEED];
  let change = Infinity; // per step, as last measured; unknown before a step: as if much
  let pending = false;
  let lastStep = 0;
  let lastLoss = null; // the last batch's loss; null before any step
  let record = [];     // snapshots, oldest first; the last is the latest step
  let stride = 1;      // the steps kept are the multiples of stride (and the latest)
  let handled = 0;     // messages handled, the one being handled included

  const fail = (error) => {
    playing = false;
    post({ type: 'error', message: error.message });
  };

  function snapshot() {
    const heldOut = trainer.evaluate();
    const { predicted, attention } = trainer.predict(example.tokens);
    return { step: lastStep, loss: lastLoss, heldOut, predicted, attention };
  }

  /** Records the current step; the previous latest goes if it was kept only for being the latest. */
  function keep() {
    if (record.length > 0 && record.at(-1).step % stride !== 0) record.pop();
    record.push(snapshot());
    if (record.length > MAX_RECORDED) {
      stride *= 2;
      record = record.filter((kept, k) => kept.step % stride === 0 || k === record.length - 1);
    }
  }

  function report() {
    const timeline = record.map(({ step, loss, heldOut }) => ({ step, loss, heldOut }));
    post({ type: 'progress', ...record.at(-1), playing, handled, timeline });
  }

  function train(count) {
    for (let k = 0; k < count; k++) {
      const done = trainer.step(1);
      lastStep = done.step;
      lastLoss = done.loss;
      // Between reports only the steps the record keeps are measured.
      if (lastStep % stride === 0 || k === count - 1) keep();
    }
    // The documented budget reached: pause there; Train goes on from it.
    if (playing && lastStep % trainer.config.steps === 0) playing = false;
  }

  function tick() {
    pending = false;
    if (!playing || !trainer) return;
    try {
      const before = record.at(-1);
      const toBudget = trainer.config.steps - (lastStep % trainer.config.steps);
      train(Math.min(pace(speed, change).steps, toBudget));
      change = changeOf(before, record.at(-1), lastStep - before.step);
      report();
    } catch (error) {
      fail(error);
      return;
    }
    if (playing) later(pace(speed, change).wait);
  }

  function later(wait) {
    if (pending) return;
    pending = true;
    schedule(tick, wait);
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
      change = Infinity;
      record = [];
      stride = 1;
      post({ type: 'created', config: trainer.config, example });
      keep();
      report();
    },
    play() {
      playing = true;
      later(0); // the first steps at once: Train answers without a wait
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
    speed({ speed: name }) {
      if (!Object.hasOwn(SPEEDS, name)) throw new Error(`trainer session: speed must be one of ${Object.keys(SPEEDS).join(', ')}, got ${JSON.stringify(name)}`);
      speed = SPEEDS[name];
    },
    replay({ step, request }) {
      // The latest snapshot at or before `step` (the step asked for may have
      // been thinned out since the page last heard the timeline).
      const found = record.findLast((kept) => kept.step <= step) ?? record[0];
      post({ type: 'recorded', request, ...found });
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
    handled += 1;
    const handler = handlers[message?.type];
    if (!handler) {
      post({ type: 'error', message: `trainer session: unknown message ${JSON.stringify(message?.type)}` });
      return;
    }
    if (message.type !== 'create' && message.type !== 'speed' && !trainer) {
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
