// Every integer argument of the JS API is checked as the number it is, before
// it reaches the engine's 32-bit int (where 2^32 + 1 would be 1 and 1e20
// 1661992960): each is given 2^31, 2^32 + 1, 2^53 and 1e20 and must refuse
// it with an AttentionError that names the argument and quotes that number,
// never answer for a wrapped one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadAttention } from '../../web/lib/attention-node.js';

const HUGE = [2 ** 31, 2 ** 32 + 1, 2 ** 53, 1e20];
const SDPA = { kind: 'scaledDotProduct', q: [[1, 0], [0, 1]], k: [[1, 0], [0, 1]], v: [[1], [2]] };
const I2 = [[1, 0], [0, 1]];
const flat = (sizes) => ({
  q: new Float64Array(4), k: new Float64Array(4), v: new Float64Array(2), nQ: 2, nK: 2, dK: 2, dV: 1, ...sizes,
});

/** [argument, call(n)]: each call passes n where an integer goes. */
function integerArguments(attn) {
  const trainer = attn.createTrainer({ task: 'copy', steps: 1 });
  return [
    ['trainer.predict tokens', (n) => trainer.predict([1, n])],
    ['trainer.head tokens', (n) => trainer.head(0, 0, [n])],
    ['trainer.head layer', (n) => trainer.head(n, 0, [1])],
    ['trainer.head head', (n) => trainer.head(0, n, [1])],
    ['trainer.attention layer', (n) => trainer.attention(n, 0)],
    ['trainer.attention head', (n) => trainer.attention(0, n)],
    ['trainer.attention example', (n) => trainer.attention(0, 0, n)],
    ['trainer.example index', (n) => trainer.example(n)],
    ['trainer.step n', (n) => trainer.step(n)],
    ['createTrainer seqLength', (n) => attn.createTrainer({ task: 'copy', seqLength: n })],
    ['createTrainer vocab', (n) => attn.createTrainer({ task: 'copy', vocab: n })],
    ['stepEquations step', (n) => attn.stepEquations(SDPA, n)],
    ['format headingLevel', (n) => attn.format(SDPA, 'text', { headingLevel: n })],
    ['check decimals', (n) => attn.check(SDPA, { weights: [[0.5, 0.5], [0.5, 0.5]] }, { decimals: n })],
    ['sdpaFlat nQ', (n) => attn.sdpaFlat(flat({ nQ: n }))],
    ['sdpaFlat nK', (n) => attn.sdpaFlat(flat({ nK: n }))],
    ['sdpaFlat dK', (n) => attn.sdpaFlat(flat({ dK: n }))],
    ['sdpaFlat dV', (n) => attn.sdpaFlat(flat({ dV: n }))],
    ['sdpaFlat batch', (n) => attn.sdpaFlat(flat({ batch: n }))],
    ['sdpaFlat window', (n) => attn.sdpaFlat(flat({ window: n }))],
    ['sdpaFlat stride', (n) => attn.sdpaFlat(flat({ stride: n }))],
    ['sdpaFlat keyLength', (n) => attn.sdpaFlat(flat({ keyLength: [n] }))],
    ['a problem field numHeads', (n) => attn.run({ kind: 'multiHead', x: [[1, 0]], wq: I2, wk: I2, wv: I2, wo: I2, numHeads: n })],
  ];
}

test('every integer argument refuses 2^31, 2^32 + 1, 2^53 and 1e20 as themselves, never wrapped to 32 bits', async () => {
  const attn = await loadAttention();
  for (const [argument, call] of integerArguments(attn)) {
    for (const n of HUGE) {
      let thrown;
      try {
        call(n);
      } catch (error) {
        thrown = error;
      }
      assert.ok(thrown, `${argument} = ${n}: accepted`);
      assert.equal(thrown.name, 'AttentionError', `${argument} = ${n}: ${thrown}`);
      // The number as given, in any of the forms a message writes it.
      const forms = [String(n), n.toExponential().replace('e+', 'e'), n.toExponential(), String(BigInt(n))];
      assert.ok(forms.some((form) => thrown.message.includes(form)),
                `${argument} = ${n}: the message does not quote it: ${thrown.message}`);
    }
  }
});

test('a trainer seed is any whole number below 2^53, kept as given, and 2^53 and 1e20 are refused', async () => {
  const attn = await loadAttention();
  for (const seed of [2 ** 31, 2 ** 32 + 1, 2 ** 53 - 1]) {
    assert.equal(attn.createTrainer({ task: 'copy', seed }).config.seed, seed);
  }
  for (const [seed, quoted] of [[2 ** 53, '9007199254740992'], [1e20, '1e+20']]) {
    assert.throws(() => attn.createTrainer({ task: 'copy', seed }),
                  { name: 'AttentionError', message: `seed: must be a whole number from 0 to 9007199254740991, got ${quoted}` });
  }
});

test('loadAttention refuses a maxBytes past 2^32 - 1 instead of wrapping it', async () => {
  for (const n of [2 ** 32, 2 ** 53, 1e20]) {
    await assert.rejects(loadAttention({ maxBytes: n }), { name: 'AttentionError', message: new RegExp(String(n)) });
  }
});
