// Presets as the engine takes them. A preset in presets.json may leave some
// of its input to be generated at load time (inputs too large to ship as
// JSON, such as the d_model = 512 weights of the multi-head shapes demo):
//
//   "inputGenerator": {
//     "type": "seededRandom",
//     "seed": 512,                       // any integer; same seed, same numbers
//     "shapes": { "x": [4, 512], "wq": [512, 512], ... },
//     "range": { "x": 1, "wq": 0.0765 }  // optional, per field; default 1
//   }
//
// Each field in `shapes` becomes a matrix of numbers drawn uniformly from
// [-range, range], filled row by row, fields in the order `shapes` lists
// them, from one mulberry32 stream seeded with `seed`. The numbers are the
// same in every browser and in Node. Fields already in `input` win.
// This module only makes inputs; every result comes from the engine.

// The tutorials in ../shared/seeds/ by file, with their own titles.
const TUTORIAL_TITLES = {
  '000_b7d974f2dfb97227.txt': 'Attention Mechanism',
  '001_172e048406e4f37c.txt': 'Attention: The Heart of Transformers',
  '002_78f5ec663b52750d.txt': 'Attention Mechanism: Theory and Implementation',
  '003_276ef66dffc1cb2c.txt': 'Attention Mechanisms',
  '004_ad55b564bf9e6848.txt': 'Attention Intuition: What Problem Does It Solve?',
};

/** "tutorial 001, “Attention: The Heart of Transformers”" for a tutorial's file. */
export function tutorialName(file) {
  const title = TUTORIAL_TITLES[file];
  return `tutorial ${file.slice(0, 3)}${title ? `, \u201c${title}\u201d` : ''}`;
}

/** mulberry32: a small seeded generator of numbers in [0, 1). */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform draws in [-range, range]. */
export function uniformDraws(random, range = 1) {
  return () => (random() * 2 - 1) * range;
}

/**
 * A rows x cols matrix of draws, filled row by row. decimals rounds each
 * entry so that an input reads well on screen (null keeps the full double).
 */
export function randomMatrix(draw, rows, cols, decimals = 1) {
  const round = decimals === null ? (x) => x : (x) => Number(x.toFixed(decimals)) + 0;
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => round(draw())));
}

function checkShape(name, shape) {
  const ok = Array.isArray(shape) && shape.length === 2
    && shape.every((size) => Number.isInteger(size) && size >= 1);
  if (!ok) throw new Error(`inputGenerator.shapes.${name}: expected [rows, columns] of positive integers`);
}

/** The fields an inputGenerator describes: { name: matrix [rows][columns] }. */
export function generateFields(generator) {
  if (!generator || generator.type !== 'seededRandom') {
    throw new Error(`inputGenerator.type: expected "seededRandom", got ${JSON.stringify(generator?.type)}`);
  }
  if (!Number.isInteger(generator.seed)) throw new Error('inputGenerator.seed: expected an integer');
  const shapes = generator.shapes ?? {};
  const random = seededRandom(generator.seed);
  const fields = {};
  for (const [name, shape] of Object.entries(shapes)) {
    checkShape(name, shape);
    const range = generator.range?.[name] ?? 1;
    if (typeof range !== 'number' || !(range > 0)) throw new Error(`inputGenerator.range.${name}: expected a positive number`);
    const [rows, columns] = shape;
    fields[name] = randomMatrix(uniformDraws(random, range), rows, columns, null);
  }
  return fields;
}

/** The complete engine input of a preset: its `input` plus any generated fields. */
export function presetInput(preset) {
  const input = structuredClone(preset.input);
  if (!preset.inputGenerator) return input;
  for (const [name, matrix] of Object.entries(generateFields(preset.inputGenerator))) {
    if (!(name in input)) input[name] = matrix;
  }
  return input;
}

/** The presets the multi-head section shows and the walkthrough does not: multi-head with more than one head. */
export function isMultiHeadPreset(preset) {
  return preset?.input?.kind === 'multiHead' && preset.input.numHeads > 1;
}
