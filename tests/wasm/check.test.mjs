// attn.check: the printed numbers of a worked example against the exact
// ones, through WebAssembly. The same report as build/attn check (the
// native CLI, byte for byte as JSON), for every tutorial vector and every
// worked example of tests/fixtures/check (printed by an independent
// script with each slip); decimals given per number override what a
// number's shortest form says; bad printed input names its key.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadEngine, nativeCli, haveNativeCli, repoRoot } from './support.mjs';

const attn = await loadEngine();
const vectors = JSON.parse(await readFile(join(repoRoot, 'tests/vectors/tutorials.json'), 'utf8'));
const cases = JSON.parse(await readFile(join(repoRoot, 'tests/fixtures/check/cases.json'), 'utf8'));

/** build/attn check's JSON for the same input, with its exit status. */
function nativeCheck(input) {
  try {
    return { status: 0, text: execFileSync(nativeCli, ['check', '-'], { input: JSON.stringify(input) }).toString() };
  } catch (error) {
    return { status: error.status, text: error.stdout.toString() };
  }
}

const examples = [
  ...vectors.filter((v) => v.printed).map((v) => ({
    name: v.id, input: v.input, printed: v.printed, decimals: v.printedDecimals,
  })),
  ...cases.map(({ name, input: { printed, printedDecimals, ...input } }) => ({
    name, input, printed, decimals: printedDecimals,
  })),
];

test('every worked example gets the report build/attn check prints for it', { skip: !haveNativeCli() && 'make build/attn first' }, () => {
  for (const { name, input, printed, decimals } of examples) {
    const report = attn.check(input, printed, { decimals });
    const native = nativeCheck({ ...input, printed, ...(decimals !== undefined && { printedDecimals: decimals }) });
    assert.equal(native.status, report.errata.length > 0 ? 1 : 0, `${name}: exit status`);
    const revived = JSON.parse(native.text, (key, value) => (
      (key === 'printed' || key === 'exact') && value === null ? -Infinity : value));
    // build/attn reads each number's decimals from the JSON text; numbers
    // that arrive as floats without decimals are read to their table's
    // most, said so, and give the same errata.
    const { decimalsInferred, ...rest } = report;
    const { decimalsInferred: nativeInferred, ...nativeRest } = revived;
    assert.deepEqual(nativeInferred, {}, `${name}: the CLI infers nothing`);
    assert.deepEqual(rest, nativeRest, name);
    assert.equal(Object.keys(decimalsInferred).length > 0, decimals === undefined && report.checked > 0, `${name}: inferred`);
  }
});

test('the tutorials\u2019 errata are the check\u2019s errata, each in a group with its sentence', () => {
  for (const vector of vectors.filter((v) => v.errata?.length)) {
    const report = attn.check(vector.input, vector.printed, { decimals: vector.printedDecimals });
    const listed = new Set(report.errata.map((e) => `${e.field}${JSON.stringify(e.index)}`));
    const expected = vector.errata.filter((e) => !report.unchecked.includes(e.field));
    assert.equal(listed.size, expected.length, vector.id);
    for (const erratum of expected) {
      assert.ok(listed.has(`${erratum.field}${JSON.stringify(erratum.index)}`), `${vector.id}: ${erratum.field}${erratum.index}`);
    }
    for (const erratum of report.errata) {
      assert.ok(report.groups[erratum.group].explanation.length > 40, `${vector.id}: explained`);
    }
  }
});

test('a misprinted score is the root of the weights and output computed from it', () => {
  const { input: { printed, printedDecimals, ...input } } = cases.find((c) => c.expect.root);
  const report = attn.check(input, printed, { decimals: printedDecimals });
  const misprint = report.groups.find((g) => g.cause === 'misprint');
  assert.deepEqual(misprint.root, { field: 'scores', index: [0, 1] });
  assert.deepEqual(misprint.carried.map((c) => `${c.field}${c.index}`).sort(),
                   ['output0,0', 'output0,1', 'output0,2', 'scaled0,1', 'weights0,0', 'weights0,1', 'weights0,2']);
  assert.match(misprint.explanation, /^scores\[q1\]\[k2\] is printed 1\.01, but the numbers before it give 0\.61/);
});

test('decimals given per number count trailing zeros the number itself cannot show', () => {
  const input = { kind: 'softmax', x: [1, 2, 3] }; // weights 0.0900, 0.2447, 0.6652
  assert.equal(attn.check(input, { weights: [0.09, 0.24, 0.67] }).errata.length, 0, '2 decimals read from the numbers');
  const strict = attn.check(input, { weights: [0.09, 0.24, 0.67] }, { decimals: { weights: [3, 2, 2] } });
  assert.deepEqual(strict.errata.map((e) => e.index), [], '0.090 holds: 0.0900 rounds to it');
  const wrong = attn.check(input, { weights: [0.091, 0.24, 0.67] }, { decimals: 3 });
  assert.deepEqual(wrong.errata.map((e) => [e.index[0], e.decimals]), [[0, 3], [1, 3], [2, 3]]);
});

test('a masked -Infinity is printed as null or -Infinity and holds', () => {
  const input = { kind: 'softmax', x: [[1, 2], [3, 4]], mask: [[true, false], [true, true]] };
  const report = attn.check(input, { scaled: [[1, null], [3, -Infinity]], weights: [[1, 0], [0.27, 0.73]] });
  assert.deepEqual(report.errata.map((e) => [e.field, e.index, e.printed, e.exact]), [['scaled', [1, 1], -Infinity, 4]]);
});

test('the report as text, Markdown and LaTeX counts from 1', () => {
  const input = { kind: 'softmax', x: [1, 2, 3] };
  // Without decimals, 0.2 beside 0.24 is read as 0.20, and the report says so.
  const text = attn.check(input, { weights: [0.2, 0.24, 0.67] }, { format: 'text' });
  assert.match(text, /weights\[1\]: printed 0\.20, exact 0\.09/);
  assert.match(text, /Decimals inferred \(none were given; .*\): weights 2\./);
  assert.match(attn.check(input, { weights: [0.2, 0.24, 0.67] }, { format: 'markdown' }), /^## Check of the printed numbers/);
  assert.match(attn.check(input, { weights: [0.2, 0.24, 0.67] }, { format: 'latex' }), /^\\subsection\*\{Check of the printed numbers\}/);
});

test('bad printed input throws an AttentionError naming the key, and the engine stays usable', () => {
  const input = { kind: 'softmax', x: [1, 2, 3] };
  assert.throws(() => attn.check(input, { weights: [0.5, 0.5] }),
                { name: 'AttentionError', status: 10, message: 'printed.weights: expected 3 (as weights), got 2' });
  assert.throws(() => attn.check(input, { weights: [0.5, 'a', 0.2] }),
                { status: 10, message: 'printed.weights[1]: expected a number, got a string' });
  assert.throws(() => attn.check(input, { weights: [0.5, 0.2, 0.3] }, { decimals: { weights: [2, 2] } }),
                { status: 10, message: 'printedDecimals.weights: expected one number or 3 (one per printed number), got 2' });
  assert.throws(() => attn.check(input, []), { status: 10, message: 'printed: expected an object of printed tables by result name, got an array' });
  assert.throws(() => attn.check(input, {}, { format: 'steps' }), { status: 5 });
  assert.deepEqual(attn.check(input, { weights: [0.09, 0.24, 0.67], sqrt_dk: 2 }).unchecked, ['sqrt_dk']);
});

test('a typo never passes a check: a key one slip from a result, decimals for no table, and a report with nothing checked', () => {
  const input = { kind: 'softmax', x: [1, 2, 3] };
  assert.throws(() => attn.check(input, { weight: [0.09, 0.24, 0.67] }),
                { status: 10, message: 'printed.weight: this problem has no result named "weight"; did you mean "weights"?' });
  assert.throws(() => attn.check(input, { Weights: [0.09, 0.24, 0.67] }), { status: 10, message: /did you mean "weights"\?$/ });
  assert.throws(() => attn.check(input, { weights: [0.09, 0.24, 0.67] }, { decimals: { weigths: 2 } }),
                { status: 10, message: 'printedDecimals.weigths: no printed table is named "weigths"' });
  // A misspelt option would have left the decimals to be guessed.
  assert.throws(() => attn.check(input, { weights: [0.09, 0.24, 0.67] }, { decimal: 3 }),
                { status: 10, message: 'check: "decimal" is not one of its options (decimals, format); it would have been left out' });
  // A result's table written as text was a note, and passed unchecked.
  assert.throws(() => attn.check(input, { weights: '0.09 0.24 0.67', notes: 'a note' }),
                { status: 10, message: 'printed.weights: expected the numbers of weights (a number or a table of them), got text' });
  assert.equal(attn.check(input, { weights: [0.09, 0.24, 0.67], notes: 'a note' }).checked, 3);
  const nothing = attn.check(input, { sqrt_dk: 2 });
  assert.equal(nothing.checked, 0);
  assert.match(attn.check(input, { sqrt_dk: 2 }, { format: 'text' }), /^Check of the printed numbers\n\nNothing was checked: /);
});

test('decimals are looked up among the object\'s own keys: a printed key named constructor finds no decimals', () => {
  const problem = { kind: 'scaledDotProduct', q: [[1, 0], [0, 1]], k: [[1, 0], [0, 1]], v: [[1], [2]] };
  const printed = { weights: [[0.67, 0.33], [0.33, 0.67]], constructor: [[1]] };
  const report = attn.check(problem, printed, { decimals: { weights: 2 } });
  assert.equal(report.checked, 4);
  assert.deepEqual(report.unchecked, ['constructor']);
});
