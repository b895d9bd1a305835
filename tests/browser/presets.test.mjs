// web/presets.json against the engine, in Node: every preset is well formed
// and runs; the tutorial's printed values have the shapes of the results
// they stand for; the errata rule of the page finds exactly the errata of
// tests/vectors; the page's own examples do what their notes say; and the
// file is what scripts/make-presets.mjs makes from the vectors.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { loadAttention } from '../../web/lib/attention-node.js';
import { generateFields, presetInput, seededRandom } from '../../web/presets.js';
import { PRESETS_PATH, VECTORS_PATH, presetsText } from '../../scripts/make-presets.mjs';

const MODES = ['qkv', 'projections', 'scores', 'softmax', 'weightedSum'];
const ROW_KEY = /^([a-z]+)_row(\d+)$/;

let engine;
let presets;
let vectors;
let claims;
const results = new Map();

before(async () => {
  engine = await loadAttention();
  presets = JSON.parse(await readFile(PRESETS_PATH, 'utf8'));
  vectors = JSON.parse(await readFile(VECTORS_PATH, 'utf8'));
  claims = JSON.parse(await readFile(new URL('../vectors/claims.json', import.meta.url), 'utf8'));
});

const resultOf = (preset) => {
  if (!results.has(preset.id)) results.set(preset.id, engine.run(presetInput(preset)));
  return results.get(preset.id);
};
const byId = (id) => presets.presets.find((preset) => preset.id === id);
const vectorOf = (preset) => vectors.find((vector) => vector.id === preset.vector);

function shapeOf(value) {
  const shape = [];
  for (let node = value; Array.isArray(node); node = node[0]) shape.push(node.length);
  return shape;
}

function assertRectangular(value, where) {
  if (!Array.isArray(value)) return;
  const inner = shapeOf(value[0]).join('x');
  for (const item of value) {
    assert.equal(shapeOf(item).join('x'), inner, `${where}: ragged array`);
    assertRectangular(item, where);
  }
}

// Every printed number that stands for an engine result, as
// { field, path, printed, exact, decimals }: `field` is the printed key as
// tests/vectors names it (`weights`, `heads.0.scores`, `output_row2`).
function printedCells(preset, result) {
  const cells = [];
  const decimalsFor = (field) => {
    const d = preset.printedDecimals;
    return typeof d === 'number' ? d : d?.[field];
  };
  const walk = (field, printed, exact, decimals, path) => {
    if (Array.isArray(printed)) {
      assert.ok(Array.isArray(exact) && exact.length === printed.length,
        `${preset.id}: printed ${field} has shape ${shapeOf(printed)} where the result has ${shapeOf(exact)}`);
      printed.forEach((item, i) => walk(field, item, exact[i], Array.isArray(decimals) ? decimals[i] : decimals,
          [...path, i]));
      return;
    }
    assert.ok(!Array.isArray(exact), `${preset.id}: printed ${field}[${path}] is a number where the result has an array`);
    assert.equal(typeof decimals, 'number', `${preset.id}: decimals of ${field}[${path}]`);
    cells.push({ field, path, printed, exact, decimals });
  };
  for (const [key, printed] of Object.entries(preset.printed ?? {})) {
    if (key === 'heads') {
      printed.forEach((head, h) => {
        for (const [name, values] of Object.entries(head)) {
          const field = `heads.${h}.${name}`;
          walk(field, values, result.heads[h][name], decimalsFor(field), []);
        }
      });
    } else if (Array.isArray(result[key]) || typeof result[key] === 'number') {
      walk(key, printed, result[key], decimalsFor(key), []);
    } else {
      const row = ROW_KEY.exec(key);
      if (row && Array.isArray(result[row[1]])) walk(key, printed, result[row[1]][Number(row[2])], decimalsFor(key),
          []);
    }
  }
  return cells;
}

const isErratum = ({ printed, exact, decimals }) => Math.abs(printed - exact) > 0.5 * 10 ** -decimals + 1e-12;

test('presets.json is what scripts/make-presets.mjs makes from the vectors', async () => {
  assert.equal(await readFile(PRESETS_PATH, 'utf8'), await presetsText(),
    'run node scripts/make-presets.mjs');
});

test('every claim of tests/vectors/claims.json is shown, as checked there, in a section or on an example of the walkthrough', () => {
  const sections = new Set(['masks', 'scaling', 'multihead', 'cross-attention', 'alignment', 'efficient']);
  const walkthroughIds = new Set(presets.presets.filter((preset) => !preset.inputGenerator).map((preset) => preset.id));
  assert.deepEqual(presets.claims.map((claim) => claim.id), claims.map((claim) => claim.id));
  for (const claim of presets.claims) {
    const source = claims.find((item) => item.id === claim.id);
    assert.equal(claim.holds, source.holds, `${claim.id}: verdict`);
    assert.equal(claim.note ?? '', source.note ?? '', `${claim.id}: note`);
    const place = claim.shownIn;
    assert.ok(sections.has(place) || (place.startsWith('preset:') && walkthroughIds.has(place.slice(7))), `${claim.id}: shown in ${place}`);
  }
});

test('every preset is well formed, with a unique id and a known default', () => {
  const ids = presets.presets.map((preset) => preset.id);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
  assert.ok(ids.includes(presets.default), `the default ${presets.default} is a preset`);
  const tutorials = new Set([...vectors, ...claims].map((item) => item.tutorial));
  for (const preset of presets.presets) {
    assert.match(preset.id, /^[a-z0-9]+(-[a-z0-9]+)*$/, `${preset.id}: a short kebab-case id`);
    assert.ok(preset.title && typeof preset.title === 'string', `${preset.id}: title`);
    assert.ok(MODES.includes(preset.mode), `${preset.id}: mode ${preset.mode}`);
    assert.ok(preset.notes && typeof preset.notes === 'string', `${preset.id}: notes`);
    assert.equal(typeof preset.input?.kind, 'string', `${preset.id}: input.kind`);
    for (const source of [preset.tutorial, preset.basedOn]) {
      if (source != null) assert.ok(tutorials.has(source), `${preset.id}: unknown tutorial ${source}`);
    }
    if (preset.tutorial === null) assert.match(preset.title, /\bour\b/, `${preset.id}: our own numbers say so in the title`);
    for (const value of Object.values(preset.input)) assertRectangular(value, `${preset.id}: input`);
  }
});

test('every preset runs through the engine', () => {
  for (const preset of presets.presets) {
    const result = resultOf(preset);
    const weights = result.weights ?? result.heads?.[0]?.weights;
    if (weights) {
      for (const row of Array.isArray(weights[0]) ? weights : [weights]) {
        const sum = row.reduce((a, b) => a + b, 0);
        assert.ok(sum === 0 || Math.abs(sum - 1) < 1e-12, `${preset.id}: a weights row sums to ${sum}`);
      }
    }
    assert.ok(result.output || result.weights, `${preset.id}: the engine returns output or weights`);
  }
});

test('each tutorial preset carries its vector\u2019s input and printed numbers unchanged', () => {
  const fromVectors = presets.presets.filter((preset) => preset.vector);
  assert.equal(fromVectors.length, vectors.length, 'one preset per vector');
  for (const preset of fromVectors) {
    const vector = vectorOf(preset);
    assert.ok(vector, `${preset.id}: vector ${preset.vector}`);
    assert.equal(preset.tutorial, vector.tutorial);
    assert.deepEqual(preset.input, vector.input, `${preset.id}: input`);
    assert.deepEqual(preset.printed, vector.printed, `${preset.id}: printed`);
    assert.deepEqual(preset.printedDecimals, vector.printedDecimals, `${preset.id}: printedDecimals`);
  }
});

test('printed values have the shapes of the results they stand for, with decimals for each', () => {
  for (const preset of presets.presets.filter((p) => p.printed)) {
    const cells = printedCells(preset, resultOf(preset));
    if (preset.vector) assert.ok(cells.length > 0, `${preset.id}: some printed value is an engine result`);
    for (const key of Object.keys(preset.printedDecimals ?? {})) {
      const base = key.startsWith('heads.') ? 'heads' : key;
      assert.ok(base in preset.printed, `${preset.id}: decimals for ${key}, which is not printed`);
    }
    for (const { field, path, printed, exact } of cells) {
      if (printed === null) {
        assert.equal(exact, -Infinity, `${preset.id}: printed ${field}[${path}] is masked (null) but the engine has ${exact}`);
      } else {
        assert.equal(typeof printed, 'number', `${preset.id}: ${field}[${path}]`);
      }
    }
  }
});

test('the page\u2019s errata rule finds exactly the errata of the vectors', () => {
  for (const preset of presets.presets.filter((p) => p.vector)) {
    const cells = printedCells(preset, resultOf(preset)).filter((cell) => cell.printed !== null);
    const fields = new Set(cells.map((cell) => cell.field));
    const found = cells.filter(isErratum).map((cell) => `${cell.field}[${cell.path}]`).sort();
    const listed = vectorOf(preset).errata.filter((erratum) => fields.has(erratum.field))
      .map((erratum) => `${erratum.field}[${erratum.index}]`).sort();
    assert.deepEqual(found, listed, `${preset.id}: errata`);
  }
});

test('the illustrative "it" row of tutorial 004 is kept as data and never checked', () => {
  const preset = byId('it-animal');
  assert.equal(preset.tutorial, null);
  assert.equal(printedCells(preset, resultOf(preset)).length, 0, 'no printed key names a result');
  const row = preset.printed.illustrativeItRow;
  assert.equal(row.length, preset.input.tokens.length);
  assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-9);
});

const argmax = (row) => row.indexOf(Math.max(...row));
const ranked = (row) => row.map((w, j) => [w, j]).sort((a, b) => b[0] - a[0]).map(([, j]) => j);

test('in our it/animal example "it" attends most to "animal", then to itself', () => {
  const preset = byId('it-animal');
  const tokens = preset.input.tokens;
  const it = tokens.indexOf('it');
  const [first, second] = ranked(resultOf(preset).weights[it]);
  assert.equal(tokens[first], 'animal');
  assert.equal(tokens[second], 'it');
  assert.ok(resultOf(preset).weights[it][first] > 0.4, 'a clear majority for "animal"');
});

test('in our cross-attention example each French word attends most to the English word it translates', () => {
  const preset = byId('cross-attention');
  const { queryTokens, keyTokens } = preset.input;
  const expected = { Le: 'The', chat: 'cat', "s'est": 'sat', assis: 'sat', sur: 'on', le: 'the', tapis: 'mat' };
  const weights = resultOf(preset).weights;
  assert.deepEqual([weights.length, weights[0].length], [queryTokens.length, keyTokens.length]);
  queryTokens.forEach((token, i) => assert.equal(keyTokens[argmax(weights[i])], expected[token], token));
});

test('in our padding example the padding keys get weight 0 in every row', () => {
  const preset = byId('padding-hello-world');
  const { weights } = resultOf(preset);
  for (const row of weights) {
    assert.deepEqual(row.slice(preset.input.keyLength), [0, 0]);
    assert.ok(row.slice(0, preset.input.keyLength).every((w) => w > 0));
  }
});

test('the seeded input generator is deterministic, in range and shaped as declared', () => {
  const generator = { type: 'seededRandom', seed: 7, shapes: { a: [2, 3], b: [4, 1] }, range: { b: 0.5 } };
  const first = generateFields(generator);
  assert.deepEqual(generateFields(generator), first, 'same seed, same numbers');
  assert.notDeepEqual(generateFields({ ...generator, seed: 8 }), first, 'another seed, other numbers');
  assert.deepEqual(shapeOf(first.a), [2, 3]);
  assert.deepEqual(shapeOf(first.b), [4, 1]);
  assert.ok(first.a.flat().every((x) => x >= -1 && x < 1));
  assert.ok(first.b.flat().every((x) => x >= -0.5 && x < 0.5));
  // mulberry32's first outputs for seed 1, so a change of generator is noticed.
  const random = seededRandom(1);
  assert.deepEqual([random(), random()].map((x) => x.toFixed(12)), ['0.627073940588', '0.002735721180']);
  assert.throws(() => generateFields({ ...generator, type: 'other' }), /inputGenerator\.type/);
  assert.throws(() => generateFields({ ...generator, shapes: { a: [0, 3] } }), /inputGenerator\.shapes\.a/);
  assert.throws(() => generateFields({ ...generator, seed: 1.5 }), /inputGenerator\.seed/);
});

test('fields given in input win over generated ones', () => {
  const preset = {
    input: { kind: 'softmax', x: [[1, 2]] },
    inputGenerator: { type: 'seededRandom', seed: 1, shapes: { x: [3, 3], y: [1, 2] } },
  };
  const input = presetInput(preset);
  assert.deepEqual(input.x, [[1, 2]]);
  assert.deepEqual(shapeOf(input.y), [1, 2]);
  assert.deepEqual(preset.input, { kind: 'softmax', x: [[1, 2]] }, 'the preset is left as it was');
});

test('the multi-head shapes presets give the shapes the tutorials print', () => {
  for (const [id, dModel, numHeads] of [['shapes-512-8', 512, 8], ['shapes-128-4', 128, 4]]) {
    const preset = byId(id);
    assert.equal(preset.inputGenerator.type, 'seededRandom');
    assert.ok(JSON.stringify(preset).length < 4000, `${id}: the numbers are generated, not stored`);
    const result = resultOf(preset);
    const dk = dModel / numHeads;
    assert.deepEqual(shapeOf(result.q), [4, dModel], `${id}: Q`);
    assert.equal(result.heads.length, numHeads, `${id}: heads`);
    for (const head of result.heads) {
      assert.deepEqual(shapeOf(head.weights), [4, 4], `${id}: head weights`);
      assert.deepEqual(shapeOf(head.output), [4, dk], `${id}: head output`);
    }
    assert.deepEqual(shapeOf(result.concat), [4, dModel], `${id}: concat`);
    assert.deepEqual(shapeOf(result.output), [4, dModel], `${id}: output`);
  }
});
