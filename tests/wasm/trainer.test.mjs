// attn.createTrainer in WebAssembly: the resolved settings, learning
// "reverse" to 99% within its budget, the attention and predictions it
// reports, the same losses as build/attn train for the same seed, errors
// that name the setting, memory that stays flat across create/dispose, the
// byte limit, and trainers freed when they are dropped. Then the page's
// training session (web/lib/trainer-session.js): its pacing rule as data
// (steps and wait for a measured change), its waits added up rather than
// waited (the pace of each speed), the bounded record, and a replayed step
// that is exactly a second trainer's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AttentionError, loadAttention } from '../../web/lib/attention-node.js';
import { haveNativeCli, loadEngine, nativeCli, wasmPath } from './support.mjs';
import { changeOf, createTrainerSession, MAX_RECORDED, pace, SHOWN_EXAMPLE, SPEEDS } from '../../web/lib/trainer-session.js';

test('a trainer resolves every setting from its task\u2019s defaults and the ones given', async () => {
  const attn = await loadEngine();
  const trainer = attn.createTrainer({ task: 'previousToken', seed: 7, heads: 4, scale: false });
  assert.deepEqual(trainer.config, {
    task: 'previousToken', seed: 7, layers: 1, heads: 4, dModel: 32, dFF: 0, seqLength: 8, vocab: 10,
    batchSize: 64, learningRate: 0.01, scale: false, causal: true, steps: 150,
  });
  trainer.dispose();
});

test('reverse reaches 99% held-out accuracy within its budget, and a head attends along the anti-diagonal', async () => {
  const attn = await loadEngine();
  const trainer = attn.createTrainer({ task: 'reverse', seed: 3 });
  assert.ok(trainer.evaluate().accuracy < 0.3, 'chance is 1 in 10');
  const { step } = trainer.step(trainer.config.steps);
  assert.equal(step, trainer.config.steps);
  assert.ok(trainer.evaluate().accuracy >= 0.99);
  const { tokens, targets } = trainer.example(17);
  const { predicted, attention } = trainer.predict(tokens);
  assert.deepEqual(predicted, targets);
  assert.deepEqual(targets, [...tokens].reverse());
  const n = tokens.length;
  const onMirror = attention[0].map((head) => head.reduce((sum, row, i) => sum + row[n - 1 - i], 0) / n);
  assert.ok(Math.max(...onMirror) > 0.9, `a head puts over 0.9 of its rows on the mirrored position on average: ${onMirror}`);
  for (const row of attention[0].flat()) {
    assert.ok(row.every((w) => w >= 0), 'weights are not negative');
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12, 'each row sums to 1');
  }
  assert.deepEqual(trainer.attention(0, 1, 17), attention[0][1]);
  trainer.dispose();
});

test('the same seed gives the same losses as build/attn train, to rounding', { skip: !haveNativeCli() && 'build/attn is not built' }, async () => {
  const attn = await loadEngine();
  const trainer = attn.createTrainer({ task: 'sort', seed: 5, steps: 20 });
  const ours = [10, 20].map(() => ({ ...trainer.step(10), ...trainer.evaluate() }));
  trainer.dispose();
  const lines = execFileSync(nativeCli, ['train', '--task', 'sort', '--seed', '5', '--steps', '20', '--log-every', '10'], { encoding: 'utf8' })
    .trim().split('\n').slice(0, 2).map((line) => JSON.parse(line));
  lines.forEach((native, k) => {
    assert.equal(ours[k].step, native.step);
    // libm's exp differs between the builds in the last bits only.
    assert.ok(Math.abs(ours[k].accuracy - native.accuracy) <= 1 / 2048, `step ${native.step}: accuracy`);
    assert.ok(Math.abs(ours[k].loss - native.heldOutLoss) < 1e-9 * Math.max(1, native.heldOutLoss), `step ${native.step}: held-out loss`);
  });
});

test('bad settings throw errors that name the setting', async () => {
  const attn = await loadEngine();
  const cases = [
    [{ task: 'juggle' }, 'task: expected one of copy, reverse, sort, previousToken, induction, lookup, got a string', 5],
    [{ task: 'reverse', heads: 3 }, 'heads: must divide dModel (32), got 3', 4],
    [{ task: 'reverse', layers: 3 }, 'layers: must be a whole number from 1 to 2, got 3', 6],
    [{ task: 'reverse', learningRate: Number.NaN }, 'learningRate: must be a number from 1e-06 to 1, got NaN', 6],
    [{ task: 'reverse', dModel: '32' }, 'dModel: expected a number, got a string', 10],
    [{ task: 'reverse', depth: 2 }, 'depth: unknown setting (settings: seed, layers, heads, dModel, dFF, seqLength, vocab, batchSize, learningRate, scale, causal, steps)', 10],
    [{ task: 'induction', seqLength: 9 }, 'seqLength: induction repeats a sequence, so it must be even and at least 4, got 9', 6],
  ];
  for (const [settings, message, status] of cases) {
    assert.throws(() => attn.createTrainer(settings), (error) => error.message === message && error.status === status,
        JSON.stringify(settings));
  }
  const trainer = attn.createTrainer({ task: 'copy' });
  assert.throws(() => trainer.predict([1, 2, 99]), /tokens\[2\]: must be from 0 to vocab - 1 = 9, got 99/);
  assert.throws(() => trainer.predict('1 2 3'), /trainer.predict: tokens: expected a list of 1 to 8 whole numbers/);
  assert.throws(() => trainer.step(0), /trainer.step: n must be a whole number from 1 to 1000000, got 0/);
  trainer.dispose();
  assert.throws(() => trainer.evaluate(), /trainer.evaluate: this trainer was disposed/);
});

test('creating, training and disposing 30 trainers leaves the heap as it was', async () => {
  const attn = await loadEngine();
  attn.createTrainer({ task: 'sort' }).dispose(); // the first may size the heap once
  const before = attn.memoryStats();
  for (let i = 0; i < 30; i++) {
    const trainer = attn.createTrainer({ task: i % 2 ? 'sort' : 'lookup', seed: i });
    trainer.step(1);
    trainer.dispose();
    assert.throws(() => attn.createTrainer({ task: 'sort', heads: 3 }));
  }
  assert.deepEqual(attn.memoryStats(), before);
});

test('a head\u2019s queries, keys and values, through scaledDotProduct, give exactly the weights the trainer reports', async () => {
  const attn = await loadEngine();
  for (const [task, heads] of [['previousToken', 2], ['sort', 2], ['induction', 2]]) {
    const trainer = attn.createTrainer({ task, seed: 2 });
    trainer.step(10);
    const { tokens } = trainer.example(3);
    for (let layer = 0; layer < trainer.config.layers; layer++) {
      for (let h = 0; h < heads; h++) {
        const { q, k, v } = trainer.head(layer, h, tokens);
        assert.equal(q[0].length, trainer.config.dModel / trainer.config.heads);
        const { weights } = attn.scaledDotProduct({ q, k, v, mask: trainer.config.causal ? 'causal' : 'none' });
        assert.deepEqual(weights, trainer.attention(layer, h, 3), `${task}: layer ${layer + 1}, head ${h + 1}`);
      }
    }
    assert.throws(() => trainer.head(trainer.config.layers, 0, tokens), /trainer.head: layer must be a whole number from 0 to/);
    trainer.dispose();
  }
});

test('a trainer above maxBytes is refused with ATTN_ERR_TOO_LARGE before its model is allocated', async () => {
  const wasmBinary = await readFile(wasmPath);
  const attn = await loadAttention({ wasmBinary, maxBytes: 1e6 });
  // The largest settings: some 380 MiB.
  const largest = { task: 'reverse', batchSize: 512, seqLength: 32, dModel: 64, dFF: 256, layers: 2, heads: 4, vocab: 64 };
  const before = attn.memoryStats();
  let needed;
  assert.throws(() => attn.createTrainer(largest), (error) => {
    assert.ok(error instanceof AttentionError, String(error));
    assert.equal(error.status, 12);
    needed = Number(/^the trainer needs (\d+) bytes/.exec(error.message)?.[1]);
    assert.equal(error.message, `the trainer needs ${needed} bytes for its model, batches and working memory, `
      + 'more than its limit of 1000000 bytes; use a smaller batchSize, dModel, dFF or seqLength, or raise the limit '
      + '(maxBytes in the JS API, --max-bytes in attn train)');
    return true;
  });
  assert.deepEqual(attn.memoryStats(), before);
  assert.ok(needed > 370 * 2 ** 20 && needed < 390 * 2 ** 20, `${needed} bytes`);
  // The bytes named are what the trainer then holds (malloc adds a few
  // bytes to each of its two blocks), and exactly the limit at which it is made.
  const exact = await loadAttention({ wasmBinary, maxBytes: needed });
  const empty = exact.memoryStats().allocatedBytes;
  const trainer = exact.createTrainer(largest);
  const held = exact.memoryStats().allocatedBytes - empty;
  assert.ok(held >= needed && held <= needed + 64, `holds ${held} bytes for ${needed} named`);
  trainer.dispose();
  const short = await loadAttention({ wasmBinary, maxBytes: needed - 1 });
  assert.throws(() => short.createTrainer(largest), { status: 12 });
  // The default limit (256 MiB) refuses it too, and takes every task's defaults.
  const engine = await loadEngine();
  assert.throws(() => engine.createTrainer(largest), { status: 12 });
  for (const task of ['copy', 'reverse', 'sort', 'previousToken', 'induction', 'lookup']) engine.createTrainer({ task }).dispose();
});

test('trainers dropped without dispose() are freed once collected; one held by a method of it stays usable', () => {
  // node --test gives a test file no gc(): the fixture runs with --expose-gc.
  const fixture = fileURLToPath(new URL('./fixtures/dropped-trainers.mjs', import.meta.url));
  const report = JSON.parse(execFileSync(process.execPath, ['--expose-gc', fixture], { encoding: 'utf8' }));
  assert.ok(report.held > 100 * 5e6, `100 sort trainers held ${report.held} bytes`);
  assert.equal(report.afterDropped, report.one, 'collected, the 100 dropped trainers are freed, and only they');
  assert.equal(report.stepped, 2, 'the trainer a method still refers to steps on');
  assert.equal(report.afterAll, 0, 'once the method is dropped too, the heap is as it was');
});

test('the change a step makes is the largest move of any head\u2019s weight or of the held-out accuracy, per step', () => {
  const snapshot = (accuracy, attention) => ({ heldOut: { accuracy, loss: 1 }, attention });
  const from = snapshot(0.1, [[[[0.5, 0.5], [0.5, 0.5]]], [[[1, 0], [0.25, 0.75]]]]);
  const to = snapshot(0.2, [[[[0.6, 0.4], [0.5, 0.5]]], [[[1, 0], [0.65, 0.35]]]]);
  assert.equal(changeOf(from, to, 1), 0.4, 'layer 2\u2019s weight [1][0], 0.25 to 0.65');
  assert.equal(changeOf(from, to, 4), 0.1, 'over four steps, a quarter of it each');
  assert.equal(changeOf(from, snapshot(0.9, from.attention), 2), 0.4, 'the accuracy, 0.1 to 0.9 in two steps');
});

test('the pace holds a step that moves much alone, for longer the more it moves, and takes steps that move little several at a time', () => {
  const { normal, slow, fast, full } = SPEEDS;
  // Normal: 7 s per unit of change, from 0.1 s to 1.5 s, up to 4 steps a report.
  assert.deepEqual(pace(normal, Infinity), { steps: 1, wait: 1500 }, 'before any step: as if much moves');
  assert.deepEqual(pace(normal, 0.5), { steps: 1, wait: 1500 });
  assert.deepEqual(pace(normal, 0.2), { steps: 1, wait: 1400 });
  assert.deepEqual(pace(normal, 0.05), { steps: 1, wait: 350 });
  assert.deepEqual(pace(normal, 0.01), { steps: 1, wait: 100 });
  assert.deepEqual(pace(normal, 0.005), { steps: 2, wait: 100 });
  assert.deepEqual(pace(normal, 0.001), { steps: 4, wait: 100 });
  assert.deepEqual(pace(normal, 0), { steps: 4, wait: 100 });
  assert.deepEqual(pace(slow, 0.2), { steps: 1, wait: 2800 });
  assert.deepEqual(pace(slow, 0), { steps: 1, wait: 200 }, 'Slow always shows every step');
  assert.deepEqual(pace(fast, 0.2), { steps: 1, wait: 350 });
  assert.deepEqual(pace(fast, 0), { steps: 8, wait: 50 });
  assert.deepEqual(pace(full, 0.2), { steps: 5, wait: 0 });
  assert.deepEqual(pace(full, 0), { steps: 5, wait: 0 });
  // At every speed, more change never waits less nor takes more steps.
  const changes = [0, 1e-4, 1e-3, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, Infinity];
  for (const [name, speed] of Object.entries(SPEEDS)) {
    changes.slice(1).forEach((change, k) => {
      const [before, after] = [pace(speed, changes[k]), pace(speed, change)];
      assert.ok(after.wait >= before.wait && after.steps <= before.steps, `${name}: ${changes[k]} then ${change}`);
    });
  }
});

/**
 * A session whose ticks run one at a time when the test says (tick), the
 * waits they asked for listed in `waits` and added up in `waited` instead
 * of waited.
 */
function drivenSession(attn) {
  const driven = { replies: [], waiting: [], waits: [], waited: 0 };
  driven.handle = createTrainerSession(attn, (reply) => driven.replies.push(reply), (callback, wait) => {
    driven.waiting.push({ callback, wait });
    driven.waits.push(wait);
  });
  driven.tick = () => {
    const { callback, wait } = driven.waiting.shift();
    driven.waited += wait;
    callback();
  };
  driven.progress = () => driven.replies.filter((reply) => reply.type === 'progress');
  return driven;
}

test('at the default pace "reverse" takes at least 15 seconds from chance to 99% held-out accuracy, one step a report, then hurries; full speed waits for nothing', async () => {
  const attn = await loadEngine();
  const paced = drivenSession(attn);
  paced.handle({ type: 'create', settings: { task: 'reverse', seed: 1 } });
  paced.handle({ type: 'play' });
  while (paced.progress().at(-1).heldOut.accuracy < 0.99) paced.tick();
  const steps = paced.progress().map((reply) => reply.step);
  assert.deepEqual(steps, steps.map((_, k) => k), 'step 0 on creating, then one step a report');
  const learning = paced.waited;
  assert.ok(learning >= 15000 && learning <= 30000, `${learning} ms of waits to reach 99% at step ${steps.at(-1)}`);
  // Each wait is the pace of the change its report measured (the first comes at once).
  const reports = paced.progress();
  assert.equal(paced.waits[0], 0);
  reports.slice(1).forEach((report, k) => {
    assert.equal(paced.waits[k + 1], pace(SPEEDS.normal, changeOf(reports[k], report, 1)).wait, `after step ${report.step}`);
  });
  // The rest of the budget, where the heads barely move, passes in less time than learning took.
  while (paced.waiting.length > 0) paced.tick();
  assert.equal(paced.progress().at(-1).step, 150);
  assert.ok(paced.waited - learning < learning, `${paced.waited - learning} ms for steps ${steps.at(-1)} to 150`);
  assert.ok(paced.progress().some((reply, k, all) => k > 0 && reply.step - all[k - 1].step > 1), 'several steps a report');

  const full = drivenSession(attn);
  full.handle({ type: 'create', settings: { task: 'reverse', seed: 1 } });
  full.handle({ type: 'speed', speed: 'full' });
  full.handle({ type: 'play' });
  while (full.waiting.length > 0) full.tick();
  assert.equal(full.waited, 0);
  assert.deepEqual(full.progress().map((reply) => reply.step), Array.from({ length: 31 }, (_, k) => 5 * k), 'five steps a report, pausing at the budget of 150');
  assert.equal(full.progress().at(-1).playing, false);
  full.handle({ type: 'speed', speed: 'warp' });
  assert.equal(full.replies.at(-1).message, 'trainer session: speed must be one of slow, normal, fast, full, got "warp"');
});

test('the record keeps at most MAX_RECORDED steps however long it trains: evenly spaced, from step 0 to the latest', async () => {
  const attn = await loadEngine();
  const driven = drivenSession(attn);
  // A small model, so that a thousand steps are quick.
  driven.handle({ type: 'create', settings: { task: 'copy', seed: 4, dModel: 8, seqLength: 4, batchSize: 4, steps: 5000 } });
  driven.handle({ type: 'speed', speed: 'full' });
  driven.handle({ type: 'play' });
  while (driven.progress().at(-1).step < 1003) driven.tick();
  driven.handle({ type: 'pause' });
  const { timeline, step } = driven.progress().at(-1);
  assert.equal(step, 1005);
  assert.ok(timeline.length <= MAX_RECORDED, `${timeline.length} recorded`);
  // 1005 steps: thinned twice (near steps 256 and 510), every 4th step is kept, and the latest.
  const kept = timeline.map((point) => point.step);
  assert.deepEqual(kept, [...Array.from({ length: 252 }, (_, k) => 4 * k), 1005]);
  for (const point of timeline) {
    assert.ok(Number.isFinite(point.loss) || point.step === 0, `step ${point.step}: the batch loss`);
    assert.ok(point.heldOut.accuracy >= 0 && point.heldOut.accuracy <= 1);
  }
  assert.equal(timeline[0].loss, null, 'no batch before step 0');
});

test('a replayed step shows exactly the predictions, weights and held-out figures of a second trainer run with the same seed to that step', async () => {
  const attn = await loadEngine();
  const driven = drivenSession(attn);
  const settings = { task: 'reverse', seed: 1 };
  driven.handle({ type: 'create', settings });
  driven.handle({ type: 'speed', speed: 'fast' });
  driven.handle({ type: 'play' });
  while (driven.progress().at(-1).step < 40) driven.tick();
  const played = driven.progress().at(-1).step;
  driven.handle({ type: 'step' }); // stepping pauses, one batch more
  const latest = driven.progress().at(-1).step;
  assert.equal(latest, played + 1);
  for (const step of [0, 1, 17, latest]) {
    driven.handle({ type: 'replay', step, request: step });
    const recorded = driven.replies.at(-1);
    assert.equal(recorded.type, 'recorded');
    assert.equal(recorded.request, step);
    assert.equal(recorded.step, step);
    const again = attn.createTrainer(settings);
    if (step > 0) assert.equal(again.step(step).loss, recorded.loss, `step ${step}: the batch loss`);
    const { tokens } = again.example(SHOWN_EXAMPLE);
    const { predicted, attention } = again.predict(tokens);
    assert.deepEqual(recorded.attention, attention, `step ${step}: every head's weights`);
    assert.deepEqual(recorded.predicted, predicted, `step ${step}: the predictions`);
    assert.deepEqual(recorded.heldOut, again.evaluate(), `step ${step}: held-out loss and accuracy`);
    again.dispose();
  }
  // A step between recorded ones (none here) or past the latest gives the one before it.
  driven.handle({ type: 'replay', step: 1000, request: 9 });
  assert.equal(driven.replies.at(-1).step, latest);
});
