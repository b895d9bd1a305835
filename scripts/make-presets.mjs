#!/usr/bin/env node
// Writes web/presets.json: every worked example of the tutorials, taken from
// tests/vectors/tutorials.json (inputs and printed numbers copied as they
// are, never retyped), plus the page's own examples defined below, and the
// tutorials' other claims checked in tests/vectors/claims.json, each with
// the place on the page that shows it.
//
//   node scripts/make-presets.mjs            rewrite web/presets.json
//   node scripts/make-presets.mjs --check    exit 1 if it is out of date
//
// Our own examples say so: "tutorial": null, and their numbers are ours.

import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const repo = new URL('../', import.meta.url);
export const VECTORS_PATH = fileURLToPath(new URL('tests/vectors/tutorials.json', repo));
export const CLAIMS_PATH = fileURLToPath(new URL('tests/vectors/claims.json', repo));
export const PRESETS_PATH = fileURLToPath(new URL('web/presets.json', repo));

const DEFAULT_PRESET = 'cat-sat-mat';

// One entry per test vector, in the order the page lists them.
const FROM_VECTORS = [
  {
    vector: 't000-three-tokens-dk2', id: 'three-tokens', mode: 'qkv',
    title: 'Three tokens, d_k = 2 (tutorial 000)',
    notes: 'Q, K and V of three tokens with d_k = 2 and d_v = 3. The tutorial rounds its '
      + 'weights and output loosely: most of its printed numbers differ from the exact ones.',
  },
  {
    vector: 't001-cat-sat-mat', id: 'cat-sat-mat', mode: 'qkv',
    title: '"cat sat mat": Q = K = V = X (tutorial 001)',
    notes: 'Three words with 4-dimensional embeddings used directly as queries, keys and values. '
      + 'Two of the printed scores are wrong (0.65 for 0.55), and the error runs on through the '
      + 'weights and the output.',
  },
  {
    vector: 't001-cat-sat-mat-multihead', id: 'cat-sat-mat-projections', mode: 'projections',
    title: '"cat sat mat" from X through W_Q, W_K, W_V (tutorial 001)',
    notes: 'The same example starting one step earlier: X times identity projection matrices '
      + 'gives Q, K and V, then attention runs as before.',
  },
  {
    vector: 't001-causal-row-position-2', id: 'causal-row', mode: 'softmax',
    title: 'A causal row: position 2 cannot see position 3 (tutorial 001)',
    notes: 'The scores of position 2 with its future key masked to minus infinity; the softmax '
      + 'gives that key a weight of exactly 0 and shares 1 among the other three.',
  },
  {
    vector: 't002-causal-scores-4x4', id: 'causal-scores', mode: 'scores',
    title: 'A 4 × 4 causal score matrix and its softmax (tutorial 002)',
    notes: 'Scores entered directly (no scaling), a causal mask, then the four value rows of the '
      + 'next example. Row 0 sees only itself, so its weight is 1.',
  },
  {
    vector: 't002-weighted-sum-row-2', id: 'weighted-values', mode: 'weightedSum',
    title: 'Weights [0.17, 0.23, 0.60, 0] times four value rows (tutorial 002)',
    notes: 'One output row as a weighted sum of value rows, term by term.',
  },
  {
    vector: 't002-practical-example-rows-0-1', id: 'practical-rows', mode: 'scores',
    title: 'Two score rows with d_k = 8 and a causal mask (tutorial 002)',
    notes: 'The two rows of printed scores of the tutorial\u2019s practical example, divided by '
      + '\u221a8 and masked causally.',
  },
  {
    vector: 't002-causal-renormalisation', id: 'renormalise', mode: 'softmax',
    title: 'Masking renormalises each row (tutorial 002)',
    notes: 'Each row holds the logarithms of the tutorial\u2019s weights before masking, so the '
      + 'softmax with a causal mask shows how the allowed weights are rescaled to sum to 1.',
  },
  {
    vector: 't001-softmax-large-gap', id: 'saturation-100-1', mode: 'softmax',
    title: 'softmax([100, 1, 1, 1]): saturated (tutorial 001)',
    notes: 'One score far above the others takes practically all the weight.',
  },
  {
    vector: 't001-softmax-small-gap', id: 'saturation-2-05', mode: 'softmax',
    title: 'softmax([2, 0.5, 0.5, 0.5]): spread out (tutorial 001)',
    notes: 'The same shape of scores with small gaps gives a softer distribution.',
  },
  {
    vector: 't002-softmax-1-2-3', id: 'softmax-1-2-3', mode: 'softmax',
    title: 'softmax([1, 2, 3]) (tutorial 002)',
    notes: 'Small scores: every entry keeps a share of the weight.',
  },
  {
    vector: 't002-softmax-10-20-30', id: 'softmax-10-20-30', mode: 'softmax',
    title: 'softmax([10, 20, 30]) (tutorial 002)',
    notes: 'The same scores times ten: the largest takes almost everything.',
  },
  {
    vector: 't002-dk64-unscaled', id: 'dk64-unscaled', mode: 'softmax',
    title: 'd_k = 64, unscaled scores (tutorial 002)',
    notes: 'A row of raw dot products for d_k = 64: the softmax is nearly one-hot.',
  },
  {
    vector: 't002-dk64-scaled', id: 'dk64-scaled', mode: 'softmax',
    title: 'd_k = 64, scores divided by \u221a64 = 8 (tutorial 002)',
    notes: 'The same row multiplied by 1/8 before the softmax: the weights spread out again.',
  },
  {
    vector: 't003-softmax-unscaled', id: 'softmax-100-95', mode: 'softmax',
    title: 'softmax([100, 95, 5, 3]) unscaled (tutorial 003)',
    notes: 'A gap of 5 between the two largest scores is already enough for a lopsided result; '
      + 'the tutorial\u2019s 0.88 and 0.12 are far from the exact values.',
  },
  {
    vector: 't003-softmax-scaled-sqrt64', id: 'scaled-100-95', mode: 'softmax',
    title: 'softmax([100, 95, 5, 3] / \u221a64) (tutorial 003)',
    notes: 'The same scores divided by 8 before the softmax.',
  },
  {
    vector: 't001-visualization-softmax', id: 'diagram-softmax', mode: 'softmax',
    title: 'The 3 × 3 softmax drawn in a diagram (tutorial 001)',
    notes: 'The scaled scores of the information-flow diagram and their row softmax.',
  },
];

// ---- The page's own examples: our numbers, chosen to illustrate ----

const T004 = '004_ad55b564bf9e6848.txt';
const T003 = '003_276ef66dffc1cb2c.txt';
const T002 = '002_78f5ec663b52750d.txt';
const T001 = '001_172e048406e4f37c.txt';

const IT_TOKENS = ['The', 'animal', "didn't", 'cross', 'the', 'street', 'because', 'it', 'was', 'too', 'tired'];
// Features of the keys: [a thing, animate, a pronoun looking for its noun, an action or state].
const IT_KEYS = [
  [0.2, 0, 0, 0], [1.5, 1.5, 0, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0.2, 0, 0, 0], [1.5, -1, 0, 0],
  [0, 0, 0, 0.3], [0.5, 0.5, 1.5, 0], [0, 0, 0, 0.8], [0, 0, 0, 0.3], [0, 0.5, 0, 1],
];
const IT_QUERIES = [
  [1, 0, 0, 0], [0, 0, 0, 1.5], [1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1],
  [0, 0, 0, 1], [1.5, 2, 1.8, 0], [1, 1.5, 1, 0], [0, 0, 0, 1], [0.5, 1, 1, 0],
];
// Features of the values: [a noun, animate, tired, moving].
const IT_VALUES = [
  [0, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0],
  [0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0],
];

const ENCODER_TOKENS = ['The', 'cat', 'sat', 'on', 'the', 'mat'];
const DECODER_TOKENS = ['Le', 'chat', "s'est", 'assis', 'sur', 'le', 'tapis'];
// Encoder states, used as keys and values: [an article, cat, sitting, a place].
const ENCODER_STATES = [
  [2, 1, 0, 0], [0, 2, 0, 0], [0, 0, 2, -0.5], [-0.5, 0, 1, 1], [2, 0, -0.5, 0.5], [0, 0, -0.5, 2],
];
// Decoder queries, each asking for the source word it translates.
const DECODER_QUERIES = [
  [2, 1, 0, -0.5], [0, 2, 0, 0], [0, 0.5, 1.5, 0], [0, 0, 2, 0], [0, 0, 2, 2], [2, -0.5, 0, 1], [0, 0, 0, 2],
];

// Uniform in ±√(3/d_model): entries of variance 1/d_model, so that
// projections keep the scale of X.
const weightRange = (dModel) => Number(Math.sqrt(3 / dModel).toPrecision(6));

function shapesPreset({ id, dModel, numHeads, seed, tutorial, section, title, notes }) {
  const tokens = ['tok 1', 'tok 2', 'tok 3', 'tok 4'];
  const range = weightRange(dModel);
  return {
    id, title, tutorial: null, basedOn: tutorial, section, mode: 'projections',
    input: { kind: 'multiHead', numHeads, tokens },
    inputGenerator: {
      type: 'seededRandom',
      seed,
      shapes: { x: [4, dModel], wq: [dModel, dModel], wk: [dModel, dModel], wv: [dModel, dModel],
          wo: [dModel, dModel] },
      range: { x: 1, wq: range, wk: range, wv: range, wo: range },
    },
    notes,
  };
}

const PAGE_ONLY = [
  {
    id: 'it-animal', title: '"it" attends to "animal" (our numbers, sentence from tutorial 004)',
    tutorial: null, basedOn: T004, section: 'Self-Attention: Attending to Yourself', mode: 'qkv',
    input: { kind: 'scaledDotProduct', q: IT_QUERIES, k: IT_KEYS, v: IT_VALUES, tokens: IT_TOKENS },
    printed: {
      illustrativeItRow: [0.02, 0.45, 0.03, 0.02, 0.01, 0.08, 0.03, 0.30, 0.02, 0.02, 0.02],
      notes: 'illustrativeItRow is the row of weights tutorial 004 draws for "it". It is an '
        + 'illustration, not computed from any numbers, so it is shown beside ours and never '
        + 'checked as an erratum.',
    },
    printedDecimals: { illustrativeItRow: 2 },
    // Your turn asks about "it" (row 7) and "animal" (column 1), the pair the example is about.
    exercises: 'scores:7:1,weights:7:1,output:7:0',
    notes: 'Our own Q, K and V with d_k = 4, made up so that the query of "it" matches the key of '
      + '"animal" best and its own key second, as the tutorial describes. The tutorial draws '
      + 'about 0.45 on "animal" and 0.30 on "it" as an illustration; our numbers give a similar row.',
  },
  {
    id: 'cross-attention', title: 'Cross-attention: "Le chat s\u2019est assis sur le tapis" reads "The cat sat on the mat" (our numbers)',
    tutorial: null, basedOn: T003, section: 'Cross-Attention (Encoder-Decoder)', mode: 'qkv',
    input: {
      kind: 'scaledDotProduct', q: DECODER_QUERIES, k: ENCODER_STATES, v: ENCODER_STATES,
      queryTokens: DECODER_TOKENS, keyTokens: ENCODER_TOKENS,
    },
    notes: 'Queries come from the French decoder, keys and values are the English encoder states '
      + '(K = V, as in the tutorial). Our own 4-dimensional states, chosen so that each French '
      + 'word finds the English word it translates: the weights form a rough diagonal.',
  },
  {
    id: 'encoder-self', title: 'Self-attention in the encoder: "The cat sat on the mat" (our numbers)',
    tutorial: null, basedOn: T003, section: 'Encoder Self-Attention', mode: 'qkv',
    input: { kind: 'scaledDotProduct', q: ENCODER_STATES, k: ENCODER_STATES, v: ENCODER_STATES, tokens: ENCODER_TOKENS },
    notes: 'The encoder states of the cross-attention example attending to each other: queries, '
      + 'keys and values all come from the same sentence.',
  },
  {
    id: 'padding-hello-world', title: 'A padding mask: "Hello world <pad> <pad>" (our numbers, tutorial 002)',
    tutorial: null, basedOn: T002, section: 'Padding Masking', mode: 'qkv',
    input: {
      kind: 'scaledDotProduct',
      q: [[1, 0], [0, 1], [0.5, 0.5], [0.5, 0.5]],
      k: [[1, 0], [0, 1], [1, 1], [1, 1]],
      v: [[1, 0], [0, 1], [9, 9], [9, 9]],
      keyLength: 2,
      tokens: ['Hello', 'world', '<pad>', '<pad>'],
    },
    notes: 'Only the first two keys are real words (key length 2); the two padding keys get '
      + 'weight 0 in every row, whatever their scores, so their values (our 9s) never reach the output.',
  },
  shapesPreset({
    id: 'shapes-512-8', dModel: 512, numHeads: 8, seed: 512, tutorial: T004,
    section: 'Matrix Dimensions with Multi-Head',
    title: 'Multi-head shapes: 4 tokens, d_model 512, 8 heads of 64 (tutorial 004, our random numbers)',
    notes: 'The shapes of tutorial 004: X (4, 512), W_Q, W_K, W_V (512, 512) split into 8 heads of '
      + 'd_k = 64, concatenated back to (4, 512) and projected by W_O (512, 512). The numbers are '
      + 'seeded random (generated when the page loads); only the shapes come from the tutorial.',
  }),
  shapesPreset({
    id: 'shapes-128-4', dModel: 128, numHeads: 4, seed: 128, tutorial: T001,
    section: 'Multi-Head Attention',
    title: 'Multi-head shapes: embed 128, 4 heads of 32 (tutorial 001, our random numbers)',
    notes: 'The shapes of tutorial 001\u2019s multi-head example for 4 tokens: embed_dim 128 split '
      + 'into 4 heads of 32 and concatenated back. Seeded random numbers; only the shapes come '
      + 'from the tutorial.',
  }),
];

// ---- Where each claim of tests/vectors/claims.json is shown ----
// A section's name, or "preset:<id>" for the walkthrough of that example.

export const CLAIM_PLACES = {
  'c000-printed-weights-rows-sum-to-one': 'preset:three-tokens',
  'c000-sqrt-2': 'preset:three-tokens',
  'c001-sat-lookup-weights-sum-to-one': 'cross-attention',
  'c001-sqrt-dk-4': 'preset:cat-sat-mat',
  'c001-head-dim': 'multihead',
  'c001-causal-mask-4': 'masks',
  'c001-dot-product-variance': 'scaling',
  'c002-causal-4x4-printed-rows-sum-to-one': 'preset:causal-scores',
  'c002-value-3-dominates': 'preset:weighted-values',
  'c002-before-masking-rows-sum-to-one': 'preset:renormalise',
  'c002-practical-weights-rows-sum-to-one': 'preset:practical-rows',
  'c002-padding-mask': 'masks',
  'c002-std-dk-64': 'scaling',
  'c002-score-ranges': 'scaling',
  'c002-values-often-exceed-24': 'scaling',
  'c002-memory-T1024-B32': 'efficient',
  'c002-scaling-table': 'efficient',
  'c002-attention-memory-estimate': 'efficient',
  'c002-practical-shapes': 'preset:practical-rows',
  'c003-head-dim': 'multihead',
  'c003-plot-shape': 'cross-attention',
  'c003-causal-mask-4': 'masks',
  'c003-self-attention-code-scale': 'multihead',
  'c004-it-row-sums-to-one': 'preset:it-animal',
  'c004-weights-table-rows-sum-to-one': 'multihead',
  'c004-projection-shapes': 'multihead',
  'c004-multihead-shapes': 'multihead',
};

function placedClaims(claims, presetIds) {
  const unplaced = claims.filter((claim) => !CLAIM_PLACES[claim.id]);
  if (unplaced.length > 0) {
    throw new Error(`make-presets: claims without a place on the page: ${unplaced.map((claim) => claim.id).join(', ')}`);
  }
  return claims.map(({ id, tutorial, section, claim, holds, note }) => {
    const shownIn = CLAIM_PLACES[id];
    if (shownIn.startsWith('preset:') && !presetIds.has(shownIn.slice('preset:'.length))) {
      throw new Error(`make-presets: claim ${id} is placed in an unknown preset (${shownIn})`);
    }
    return { id, tutorial, section, claim, holds, note: note || undefined, shownIn };
  });
}

// ---- Building and writing ----

export function buildPresets(vectors, claims) {
  const byId = new Map(vectors.map((vector) => [vector.id, vector]));
  const fromVectors = FROM_VECTORS.map(({ vector: vectorId, id, mode, title, notes }) => {
    const vector = byId.get(vectorId);
    if (!vector) throw new Error(`make-presets: no vector "${vectorId}" in tests/vectors/tutorials.json`);
    return {
      id, title, tutorial: vector.tutorial, section: vector.section, mode,
      vector: vectorId,
      input: vector.input,
      printed: vector.printed,
      printedDecimals: vector.printedDecimals,
      notes,
    };
  });
  const presets = [...fromVectors, ...PAGE_ONLY];
  const ids = new Set();
  for (const preset of presets) {
    if (ids.has(preset.id)) throw new Error(`make-presets: duplicate id "${preset.id}"`);
    ids.add(preset.id);
  }
  const unused = vectors.filter((vector) => !FROM_VECTORS.some((entry) => entry.vector === vector.id));
  if (unused.length > 0) {
    throw new Error(`make-presets: vectors without a preset: ${unused.map((vector) => vector.id).join(', ')}`);
  }
  return { default: DEFAULT_PRESET, presets, claims: placedClaims(claims, ids) };
}

// JSON with arrays of plain values on one line, so a matrix reads row by row.
export function formatJson(value, indent = '') {
  if (Array.isArray(value)) {
    if (value.every((item) => item === null || typeof item !== 'object')) {
      return `[${value.map((item) => JSON.stringify(item)).join(', ')}]`;
    }
    const inner = `${indent}  `;
    return `[\n${value.map((item) => inner + formatJson(item, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const inner = `${indent}  `;
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${formatJson(item, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}

export async function presetsText() {
  const vectors = JSON.parse(await readFile(VECTORS_PATH, 'utf8'));
  const claims = JSON.parse(await readFile(CLAIMS_PATH, 'utf8'));
  return `${formatJson(buildPresets(vectors, claims))}\n`;
}

async function main(argv) {
  const text = await presetsText();
  if (argv.includes('--check')) {
    const current = await readFile(PRESETS_PATH, 'utf8').catch(() => '');
    if (current !== text) {
      console.error('web/presets.json is out of date: run node scripts/make-presets.mjs');
      process.exitCode = 1;
    }
    return;
  }
  await writeFile(PRESETS_PATH, text);
  console.log(`wrote ${PRESETS_PATH}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
