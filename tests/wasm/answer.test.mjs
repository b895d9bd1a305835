// attn.answer: a learner's typed value for one cell, graded through
// WebAssembly by the check's rule, against values computed here by hand
// for a 2 x 2 problem where each slip gives a different number; its
// input's mistakes are named.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from './support.mjs';

const attn = await loadEngine();
const problem = { kind: 'scaledDotProduct', q: [[2, 1], [-0.5, 1.5]], k: [[1, 2], [1, 3]], v: [[1, 2], [3, 4]] };
const root = Math.sqrt(2);
// softmax([a, b])[0]
const firstOfTwo = (a, b) => 1 / (1 + Math.exp(b - a));
const weight00 = firstOfTwo(4 / root, 5 / root);

test('the exact weight typed to 2 or 3 decimals is right, and the verdict names it', () => {
  for (const decimals of [2, 3]) {
    const verdict = attn.answer(problem, { result: 'weights', row: 0, col: 0, typed: weight00.toFixed(decimals) });
    assert.equal(verdict.right, true);
    assert.equal(verdict.decimals, decimals);
    assert.equal(verdict.cause, null);
    assert.equal(verdict.verdict, 'Right: the exact value is 0.3302.');
  }
});

test('a weight made with each common slip gets that slip named, with a hint', () => {
  const slips = [
    ['no-scale', firstOfTwo(4, 5)],
    ['scale-by-dk', firstOfTwo(2, 2.5)],
    ['softmax-columns', firstOfTwo(4 / root, 2.5 / root)],
  ];
  for (const [cause, value] of slips) {
    const verdict = attn.answer(problem, { result: 'weights', row: 0, col: 0, typed: value.toFixed(2) });
    assert.equal(verdict.right, false);
    assert.equal(verdict.cause, cause);
    assert.equal(verdict.rounded, '0.33');
    assert.equal(verdict.step, 4);
    assert.notEqual(verdict.hint, '');
  }
});

test('text that is no number gets an answer asking for one', () => {
  const verdict = attn.answer(problem, { result: 'weights', row: 0, col: 0, typed: 'a third' });
  assert.equal(verdict.readable, false);
  assert.equal(verdict.right, false);
  assert.match(verdict.verdict, /^Type a number/);
});

test('a cell that is not there, or a field that is not a cell, is named in the error', () => {
  assert.throws(() => attn.answer(problem, { result: 'weights', row: 0, col: 2, typed: '0.33' }),
                { message: 'answer: weights has no cell [0][2]: rows 0 to 1, columns 0 to 1 (counted from 0)' });
  assert.throws(() => attn.answer(problem, { result: 'weights', row: 0, column: 2, typed: '0.33' }),
                { message: /"column" is not one of its fields/ });
  assert.throws(() => attn.answer(problem, { result: 'weights', row: 0, col: 0, typed: 0.33 }),
                { message: 'answer: typed must be a string, got a number' });
});
