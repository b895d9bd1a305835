#!/usr/bin/env node
// Training speed (part of `make bench`; figures, not a test): each task's
// default model trained by this engine natively (build/attn train) and in
// WASM (attn.createTrainer, one thread), and the same model built from
// @tensorflow/tfjs-core ops on its WASM backend (SIMD, one thread, float32):
// milliseconds per training step (forward, backward, Adam) and, for the
// tasks whose data this file can make too, the steps and the wall time to
// 99% held-out accuracy, side by side in one run.
//
// The tfjs model is the engine's attention-only model (dFF 0: embedding +
// learned positions, each layer x + MHA(x), unembedding, cross-entropy,
// Adam), so the tasks with a feed-forward network (sort) have no tfjs row;
// the plain-JS peer (bench/train_plain.mjs) is the same model again.
// tfjs has no gradient clipping in core; the engine clips to norm 1.
//
//   node bench/train.mjs     (after `make` and `./build.sh`; npm ci for tfjs)

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadAttention } from '../web/lib/attention-node.js';
import { seededRandom } from '../web/presets.js';
import { plainModel } from './train_plain.mjs';

const ATTN = fileURLToPath(new URL('../build/attn', import.meta.url));
const TASKS = ['copy', 'reverse', 'previousToken', 'induction', 'lookup', 'sort'];
const TIMED_STEPS = 40;
const CHECK_EVERY = 5;

const now = () => performance.now();

// Two runs, of TIMED_STEPS and twice as many: their difference leaves out
// the process's start, the held-out set and the final evaluation.
function nativeMsPerStep(task) {
  const run = (steps) => {
    const start = now();
    execFileSync(ATTN, ['train', '--task', task, '--steps', String(steps), '--log-every', String(steps)]);
    return now() - start;
  };
  return (run(2 * TIMED_STEPS) - run(TIMED_STEPS)) / TIMED_STEPS;
}

/** Steps and wall time (training and the checks) until held-out accuracy ≥ 0.99. */
function toTarget(stepFive, accuracy, budget) {
  const start = now();
  for (let step = CHECK_EVERY; step <= budget; step += CHECK_EVERY) {
    stepFive();
    if (accuracy() >= 0.99) return { steps: step, ms: now() - start };
  }
  return null;
}

async function ours(attn, task) {
  const timing = attn.createTrainer({ task, seed: 1 });
  timing.step(2); // warm up
  const start = now();
  timing.step(TIMED_STEPS);
  const msPerStep = (now() - start) / TIMED_STEPS;
  timing.dispose();
  const trainer = attn.createTrainer({ task, seed: 1 });
  const reached = toTarget(() => trainer.step(CHECK_EVERY), () => trainer.evaluate().accuracy, trainer.config.steps);
  const { config } = trainer;
  const heldOut = Array.from({ length: 256 }, (_, i) => trainer.example(i));
  trainer.dispose();
  return { msPerStep, reached, config, heldOut };
}

// ---- The same model in tfjs ----

// Batches of the tasks whose examples are one line each.
const MAKERS = {
  copy: (tokens) => tokens.slice(),
  reverse: (tokens) => tokens.slice().reverse(),
  previousToken: (tokens) => tokens.map((_, i) => tokens[Math.max(0, i - 1)]),
};

function tfjsModel(tf, config) {
  const { vocab: V, seqLength: T, dModel: d, heads: H, layers: L } = config;
  const dh = d / H;
  let seed = 1;
  const normal = (shape, sd) => tf.variable(tf.randomNormal(shape, 0, sd, 'float32', seed++));
  const zeros = (shape) => tf.variable(tf.zeros(shape));
  const params = {
    embed: normal([V, d], 1), position: normal([T, d], 1),
    layers: Array.from({ length: L }, () => ({
      wq: normal([d, d], 1 / Math.sqrt(d)), wk: normal([d, d], 1 / Math.sqrt(d)),
      wv: normal([d, d], 1 / Math.sqrt(d)), wo: normal([d, d], 1 / Math.sqrt(d)),
      bq: zeros([d]), bk: zeros([d]), bv: zeros([d]), bo: zeros([d]),
    })),
    unembed: normal([d, V], 1 / Math.sqrt(d)), bias: zeros([V]),
  };
  const masked = config.causal ? tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([T, T]), -1, 0)), -1e9) : null;
  const heads = (x, w, b, B) => tf.transpose(tf.reshape(tf.add(tf.matMul(x, w), b), [B, T, H, dh]), [0, 2, 1, 3]);

  function logits(tokens, B) {
    let h = tf.add(tf.reshape(tf.matMul(tf.cast(tf.oneHot(tokens, V), 'float32'), params.embed), [B, T, d]), params.position);
    for (const layer of params.layers) {
      const x = tf.reshape(h, [B * T, d]);
      const [q, k, v] = [['wq', 'bq'], ['wk', 'bk'], ['wv', 'bv']].map(([w, b]) => heads(x, layer[w], layer[b], B));
      let scores = tf.matMul(q, tf.transpose(k, [0, 1, 3, 2]));
      if (config.scale) scores = tf.mul(scores, 1 / Math.sqrt(dh));
      if (masked) scores = tf.add(scores, masked);
      const mixed = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), v), [0, 2, 1, 3]), [B * T, d]);
      h = tf.add(h, tf.reshape(tf.add(tf.matMul(mixed, layer.wo), layer.bo), [B, T, d]));
    }
    return tf.add(tf.matMul(tf.reshape(h, [B * T, d]), params.unembed), params.bias);
  }

  const variables = [params.embed, params.position, params.unembed, params.bias,
    ...params.layers.flatMap((layer) => Object.values(layer))];
  const optimizer = tf.train.adam(config.learningRate, 0.9, 0.999, 1e-8);
  return {
    step(tokens, targets, B) {
      const tokenTensor = tf.tensor1d(tokens, 'int32');
      const targetTensor = tf.oneHot(tf.tensor1d(targets, 'int32'), V);
      optimizer.minimize(() => tf.losses.softmaxCrossEntropy(targetTensor, logits(tokenTensor, B)), false, variables);
      tf.dispose([tokenTensor, targetTensor]);
    },
    accuracy(examples) {
      return tf.tidy(() => {
        const tokens = tf.tensor1d(examples.flatMap((e) => e.tokens), 'int32');
        const predicted = tf.argMax(logits(tokens, examples.length), 1).dataSync();
        const targets = examples.flatMap((e) => e.targets);
        const counted = examples.flatMap((e) => e.counted);
        let right = 0;
        let total = 0;
        counted.forEach((c, i) => { if (c) { total += 1; right += predicted[i] === targets[i] ? 1 : 0; } });
        return right / total;
      });
    },
  };
}

// tfjs-core's Node bundle registers no gradients, and its ES module
// sources import without file extensions, which Node refuses: esbuild
// bundles register_all_gradients for Node. It registers into tfjs's global
// registry, which the Node bundle shares.
async function registerGradients() {
  const esbuild = await import('esbuild');
  const entry = fileURLToPath(new URL('../node_modules/@tensorflow/tfjs-core/dist/register_all_gradients.js', import.meta.url));
  const { outputFiles } = await esbuild.build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'node', write: false, logLevel: 'silent' });
  await import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].text).toString('base64')}`);
}

async function tfjsPeer() {
  const tf = await import('@tensorflow/tfjs-core');
  await registerGradients();
  const wasmBackend = await import('@tensorflow/tfjs-backend-wasm');
  wasmBackend.setWasmPaths(fileURLToPath(new URL('../node_modules/@tensorflow/tfjs-backend-wasm/dist/', import.meta.url)));
  wasmBackend.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();
  return tf;
}

/** A peer's model (makeModel() -> { step, accuracy }) timed, then raced to 99% from fresh. */
function peerRun(makeModel, config, heldOut) {
  const model = makeModel();
  const random = seededRandom(1);
  const B = config.batchSize;
  const maker = MAKERS[config.task];
  const batch = () => {
    const tokens = [];
    const targets = [];
    for (let e = 0; e < B; e++) {
      const line = Array.from({ length: config.seqLength }, () => Math.floor(random() * config.vocab));
      tokens.push(...line);
      targets.push(...(maker ? maker(line) : line));
    }
    return [tokens, targets];
  };
  model.step(...batch(), B); // warm up
  const start = now();
  for (let s = 0; s < TIMED_STEPS; s++) model.step(...batch(), B);
  const msPerStep = (now() - start) / TIMED_STEPS;
  // A fresh model for the race to 99%.
  const racer = makeModel();
  const reached = maker
    ? toTarget(() => { for (let s = 0; s < CHECK_EVERY; s++) racer.step(...batch(), B); },
        () => racer.accuracy(heldOut), 4 * config.steps)
    : null;
  return { msPerStep, reached };
}

const attn = await loadAttention();
const tf = await tfjsPeer().catch((error) => {
  console.log(`(tfjs-wasm not available: ${error.message}; npm ci installs it)`);
  return null;
});
const fmt = (value, digits = 2) => (value === null || value === undefined ? '\u2014' : value.toFixed(digits));
const target = (reached) => (reached ? `${reached.steps} steps, ${(reached.ms / 1000).toFixed(2)} s` : '\u2014');

console.log(`Training: ms per step (forward, backward, Adam; batch 64) and the time to 99% held-out accuracy:`);
console.log(`  ${'task'.padEnd(14)} ${'native'.padStart(7)} ${'WASM'.padStart(7)} ${'tfjs-wasm'.padStart(9)} ${'tfjs÷WASM'.padStart(9)} `
  + `${'plain JS'.padStart(8)}   ${'ours to 99% (WASM)'.padEnd(22)} ${'tfjs to 99%'.padEnd(22)} plain JS to 99%`);
for (const task of TASKS) {
  const native = nativeMsPerStep(task);
  const mine = await ours(attn, task);
  const attentionOnly = mine.config.dFF === 0;
  const peer = tf && attentionOnly ? peerRun(() => tfjsModel(tf, mine.config), mine.config, mine.heldOut) : null;
  const plain = attentionOnly ? peerRun(() => plainModel(mine.config, seededRandom(7)), mine.config,
      mine.heldOut) : null;
  console.log(`  ${task.padEnd(14)} ${fmt(native).padStart(7)} ${fmt(mine.msPerStep).padStart(7)} ${fmt(peer?.msPerStep).padStart(9)} `
    + `${(peer ? `${fmt(peer.msPerStep / mine.msPerStep, 1)}\u00d7` : '\u2014').padStart(9)} ${fmt(plain?.msPerStep).padStart(8)}   `
    + `${target(mine.reached).padEnd(22)} ${(peer ? target(peer.reached) : '\u2014').padEnd(22)} ${plain ? target(plain.reached) : '\u2014'}`);
}
