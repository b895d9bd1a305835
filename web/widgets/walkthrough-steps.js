// The walkthrough's data: a model of one problem with every number and
// every step from the engine (attn.walkthrough: its results and its step
// list), and the page's view of those steps. Nothing here computes or
// phrases arithmetic: titles, sentences, formulas and equations are the
// engine's, rendered by ui/equation.js; this module only decides what the
// figure shows for each step (the tensors its regions name, marked as read
// or produced, and no cell before the step that computes it).
//
// A page step is { id, title, text, formula, equations, picture, produces,
// enter(view, { pending }), reveal(view, through), leave(view) }; `produces` lists the result cells it
// computes, so that errata can be shown on the step that computes them;
// `picture` is what the first and last steps, which have no equations, draw.
//
// The engine writes the step list without its equations (they are most of
// its bytes: an edit at the editor's largest size would write and parse
// them all again), and a step's equations when they are first needed: the
// step on screen, or the step that computes a cell being hovered.

import { equationElement, equationText } from '../ui/equation.js';
import { repeatsOf } from '../ui/step-figure.js';

export const KIND_OF_MODE = {
  projections: 'multiHead',
  qkv: 'scaledDotProduct',
  scores: 'scaledDotProduct',
  softmax: 'softmax',
  weightedSum: 'weightedSum',
};

const TITLES = {
  x: 'X (embeddings)', wq: 'W_Q', wk: 'W_K', wv: 'W_V', q: 'Q (queries)', k: 'K (keys)',
  v: 'V (values)', scores: 'Scores QK\u1d40', scaled: 'Scaled scores', weights: 'Weights',
  output: 'Output', exp: 'exp(x \u2212 max)',
  target: 'Target (each token\u2019s own V row)', gradOutput: 'dO = output \u2212 target', gradV: 'dV', gradWeights: 'dP (gradient of the weights)',
  gradScaled: 'dS (gradient of the scaled scores)', gradQ: 'dQ', gradK: 'dK',
};

/** Whether the backward pass can be shown: Q, K, V given, one per token. */
export function canShowBackward(problem) {
  return problem.mode === 'qkv' && problem.self && !problem.vector;
}

export function identity(n) {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
}

/** The object handed to the engine for a problem, token labels included. */
export function engineInput(problem) {
  const input = { kind: KIND_OF_MODE[problem.mode], ...problem.fields };
  if (problem.self && problem.mode !== 'softmax') input.tokens = problem.qTokens;
  else Object.assign(input, { queryTokens: problem.qTokens, keyTokens: problem.kTokens });
  if (problem.mode === 'projections') {
    input.numHeads = 1;
    input.wo ??= identity(problem.fields.wq[0].length);
  }
  // The default loss asks each token's output to be its own value row.
  if (problem.backward && canShowBackward(problem)) input.target = problem.fields.v;
  if (problem.mode === 'softmax' && problem.vector) {
    input.x = problem.fields.x[0];
    if (Array.isArray(input.mask)) input.mask = input.mask[0];
  }
  return input;
}

const numbered = (n) => Array.from({ length: n }, (_, i) => String(i + 1));
const asMatrix = (value) => (Array.isArray(value) && !Array.isArray(value[0]) ? [value] : value);
// The page's name of a tensor the engine names: the one head of the
// projections mode is the page's scores, weights, ...; the softmax's x is
// its "input".
const pageNames = (mode) => (name) => (mode === 'softmax' && name === 'x' ? 'input' : name.replace(/^heads\.0\./, ''));

/**
 * Runs the problem through the engine and gathers what the steps show.
 * Throws the engine's Error (its message names the field) on bad input.
 */
export function buildModel(engine, problem) {
  const input = engineInput(problem);
  const { result, steps } = engine.walkthrough(input, { equations: false });
  const f = problem.fields;
  const { qTokens, kTokens } = problem;
  const mats = {};
  const add = (name, values, rowLabels, colLabels, input = false) => {
    mats[name] = { name, title: TITLES[name], values: asMatrix(values), rowLabels, colLabels, input };
  };
  const head = result.heads?.[0] ?? result;
  if (problem.mode === 'projections') {
    const din = f.x[0].length;
    add('x', f.x, qTokens, numbered(din), true);
    for (const w of ['wq', 'wk', 'wv']) add(w, f[w], numbered(din), numbered(f[w][0].length), true);
    for (const name of ['q', 'k', 'v']) add(name, result[name], name === 'q' ? qTokens : kTokens, numbered(result[name][0].length));
  } else if (problem.mode === 'qkv') {
    for (const name of ['q', 'k', 'v']) add(name, f[name], name === 'q' ? qTokens : kTokens, numbered(f[name][0].length), true);
  } else if (problem.mode === 'scores') {
    add('scores', f.scores, qTokens, kTokens, true);
    if (f.v) add('v', f.v, kTokens, numbered(f.v[0].length), true);
  } else if (problem.mode === 'softmax') {
    add('input', f.x, qTokens, kTokens, true);
    mats.input.title = 'Input x';
    add('scaled', result.scaled, qTokens, kTokens);
    mats.scaled.title = f.scale === undefined ? 'Softmax input' : 'Scaled input';
    add('exp', result.exp, qTokens, kTokens);
  } else {
    add('weights', f.weights, qTokens, kTokens, true);
    add('v', f.v, kTokens, numbered(f.v[0].length), true);
  }
  if (head.scores && !mats.scores) add('scores', head.scores, qTokens, kTokens);
  if (head.scaled && !mats.scaled) add('scaled', head.scaled, qTokens, kTokens);
  if (head.weights && !mats.weights) add('weights', head.weights, qTokens, kTokens);
  if (head.output && !mats.output) add('output', head.output, qTokens, numbered(asMatrix(head.output)[0].length));

  // The loss's target (V itself): no step computes it, so it shows from the first.
  if (input.target) add('target', input.target, qTokens, numbered(input.target[0].length));
  const gradLabels = { gradOutput: [qTokens, 'v'], gradV: [kTokens, 'v'], gradWeights: [qTokens, kTokens], gradScaled: [qTokens, kTokens], gradQ: [qTokens, 'q'], gradK: [kTokens, 'k'] };
  for (const [name, [rows, cols]] of Object.entries(gradLabels)) {
    if (result[name]) add(name, result[name], rows, Array.isArray(cols) ? cols : numbered(f[cols][0].length));
  }
  const pageName = pageNames(problem.mode);
  const model = { mode: problem.mode, engine, mats, qTokens, kTokens, list: steps, vector: problem.vector, pageName };
  // A vector problem's results lose the row axis; the page shows them as row 0.
  model.refOf = (ref) => (problem.vector
    ? [pageName(ref[0]), 0, ...ref.slice(1)]
    : [pageName(ref[0]), ...ref.slice(1)]);
  // Step `index`'s equations, from the engine when first asked for.
  const equations = new Map();
  model.equationsOf = (index) => {
    if (!equations.has(index)) equations.set(index,
        steps.steps[index].equationCount ? engine.stepEquations(input, index + 1) : []);
    return equations.get(index);
  };
  // "name,i,j" -> the equation whose result it is: in the step whose
  // regions say it produces the cell (gathered when a cell is first asked
  // about); a quantity no figure shows (a row's max, sum, exponentials) is
  // asked for as a source of such a cell, so it is in a step already asked for.
  let producedIn;
  const producedBy = (index, key) => equations.get(index)
    .findLast((equation) => resultRefs(equation.chain.at(-1)).some((ref) => model.refOf(ref).join(',') === key));
  model.producerOf = (key) => {
    producedIn ??= producingSteps(model);
    const index = producedIn.get(key);
    if (index !== undefined) {
      model.equationsOf(index);
      return producedBy(index, key);
    }
    const asked = [...equations.keys()].sort((a, b) => b - a);
    return asked.map((at) => producedBy(at, key)).find(Boolean);
  };
  // Where in step `index` the cell "name,i,j" is computed: the repeat
  // ({ index, title }) its equation belongs to, or null outside a repeat.
  model.repeatOf = (index, key) => {
    const produced = model.equationsOf(index).length ? producedBy(index, key) : undefined;
    if (!produced) return null;
    const repeats = repeatsOf(equations.get(index));
    const at = repeats.findIndex((repeat) => repeat.equations.includes(produced));
    return repeats[at].title ? { index: at, title: repeats[at].title } : null;
  };
  model.barScale = barScale(model);
  model.isInput = (ref) => Boolean(ref) && mats[pageName(ref[0])]?.input === true;
  model.hasMasked = Boolean(mats.scaled?.values.flat().some((x) => x === -Infinity));
  return model;
}

/**
 * The one scale of the walkthrough's figures: the largest value any of them
 * draws as a bar, whichever step it is on. They draw what the steps compute
 * (sums, scaled scores, exponentials and weights, at most 1, outputs,
 * gradients) and the value rows an output adds up; not the inputs of a
 * softmax, which no figure draws (the inputs' picture has its own).
 */
function barScale({ mode, mats }) {
  const drawn = Object.values(mats).filter((mat) => (mat.input ? mat.name === 'v'
    : !(mode === 'softmax' && mat.name === 'scaled')));
  const values = drawn.flatMap((mat) => mat.values.flat()).filter(Number.isFinite).map(Math.abs);
  return Math.max(mats.weights && mode !== 'weightedSum' ? 1 : 1e-300, ...values);
}

// "name,i,j" -> the index of the last step with equations whose regions produce the cell.
function producingSteps(model) {
  const steps = new Map();
  model.list.steps.forEach((step, index) => {
    if (!step.equationCount) return;
    for (const region of step.regions ?? []) {
      if (!region.produces) continue;
      const name = model.pageName(region.name);
      for (const cell of regionCells(model, region)) steps.set([name, ...cell].join(','), index);
    }
  });
  return steps;
}

// The cells an equation's last expression names: a leaf, or a vector's entries.
function resultRefs(node) {
  if (node.ref) return [node.ref];
  return node.op === 'vec' ? node.args.filter((arg) => arg.ref).map((arg) => arg.ref) : [];
}

/** How one cell of a matrix was computed (for hover and focus), from the engine's equation. */
export function describeCell(model, name, i, j) {
  const equation = model.producerOf(`${name},${i},${j}`);
  return equation ? equationText(equation, { isInput: model.isInput }) : '';
}

/**
 * The cells a result cell was computed from, [name, i, j] in the page's
 * names: the leaves of the engine's equation that produced it. For an entry
 * of a vector result (an output row) only that entry of each vector counts.
 */
export function sourcesOf(model, name, ...at) {
  const key = [name, ...at].join(',');
  const equation = model.producerOf(key);
  if (!equation) return [];
  const last = equation.chain[equation.chain.length - 1];
  const entry = last.op === 'vec' ? last.args.findIndex((arg) => arg.ref && model.refOf(arg.ref).join(',') === key) : -1;
  const sources = [];
  const walk = (node) => {
    if (!node.op) {
      if (node.ref) sources.push(model.refOf(node.ref));
      return;
    }
    if (node.op === 'vec' && entry >= 0) walk(node.args[entry]);
    else for (const arg of node.args) walk(arg);
  };
  walk(equation.chain[0]);
  return sources;
}

/** A short name of a cell for figures: "q[sat, 2]"; part 'row' gives "q[sat]", 'col' the column's label. */
export function cellName(model, ref, part = 'cell') {
  const [name, i, j] = model.refOf(ref);
  const mat = model.mats[name];
  const rowLabel = mat?.rowLabels[i] ?? model.qTokens[i] ?? String(i + 1);
  const colLabel = j === undefined ? undefined : mat?.colLabels[j] ?? model.kTokens[j] ?? String(j + 1);
  if (part === 'col') return colLabel ?? rowLabel;
  if (part === 'row' || colLabel === undefined) return `${name}[${rowLabel}]`;
  return `${name}[${rowLabel}, ${colLabel}]`;
}

// The stage of the computation each kind of step belongs to, by the first
// word of the engine's step id ("score-1-2", "h1-softmax-0", "project-q").
const STAGE_LABELS = {
  inputs: 'Inputs', project: 'Q, K, V', score: 'Q\u00b7K\u1d40', scale: 'Scale', mask: 'Mask',
  max: 'Softmax', exp: 'Softmax', sum: 'Softmax', softmax: 'Softmax', output: 'Weights \u00b7 V',
  done: 'Result',
  // The backward pass, stage by stage.
  'grad-output': 'dO', 'grad-v': 'dV', 'grad-weights': 'dP', 'grad-scaled': 'dS', 'grad-q': 'dQ', 'grad-k': 'dK',
};

/** The stages in order, each { label, first } (the index of its first step). */
export function stagesOf(steps) {
  const stages = [];
  steps.forEach((step, index) => {
    const id = step.id.replace(/^h\d+-/, '');
    const word = id.startsWith('grad-') ? id.replace(/-others$/, '') : id.split('-')[0];
    const label = STAGE_LABELS[word] ?? step.title;
    if (stages.at(-1)?.label !== label) stages.push({ label, first: index });
  });
  return stages;
}

// ---- Regions: which cells a step reads or produces ----

const range = (first, last) => Array.from({ length: last - first + 1 }, (_, k) => first + k);

/** The shape of a tensor the steps name: [rows, cols], or [rows] for per-row numbers. */
function shapeOf(model, name) {
  const mat = model.mats[name];
  if (mat) return [mat.values.length, mat.values[0].length];
  const rows = model.qTokens.length;
  if (name === 'max' || name === 'sum') return [rows];
  if (name === 'terms') return [rows, model.kTokens.length, model.mats.v?.values[0].length ?? 0];
  if (name === 'exp') return [rows, model.kTokens.length];
  return null;
}

/** Every cell [i, ...] of the region, in the page's indexing. */
function regionCells(model, region) {
  const name = model.pageName(region.name);
  const shape = shapeOf(model, name);
  if (!shape) return [];
  const rows = region.cell ? [region.cell[0]] : region.rows ? range(...region.rows) : range(0, shape[0] - 1);
  const cells = [];
  for (const i of rows) {
    if (shape.length === 1) cells.push([i]);
    else if (region.cell) cells.push([i, region.cell[1]]);
    else if (shape.length === 3) {
      for (const j of range(0, shape[1] - 1)) for (const c of range(0, shape[2] - 1)) cells.push([i, j, c]);
    }
    else for (const j of range(0, shape[1] - 1)) cells.push([i, j]);
  }
  if (region.masked === undefined || name !== 'scaled') return cells;
  const scaled = model.mats.scaled.values;
  return cells.filter(([i, j]) => (scaled[i][j] === -Infinity) === region.masked);
}

const marks = (entries) => new Map(entries);

// The pictures of the two steps without equations, from the engine's
// results: the first step's input tensors, token by token (those whose rows
// are tokens), and the last step's summary, tokens -> weights -> output.
function inputsPicture(model, regions) {
  const tokens = [model.qTokens, model.kTokens];
  const tensors = [...new Set(regions.map((r) => r.page))].map((name) => model.mats[name])
    .filter((mat) => mat && tokens.includes(mat.rowLabels))
    .map((mat) => ({ name: mat.name, title: mat.title,
        rows: mat.values.map((values, i) => ({ label: mat.rowLabels[i], values })) }));
  return tensors.length > 0 ? { kind: 'inputs', tensors } : null;
}

function summaryPicture(model) {
  const { input, weights, output } = model.mats;
  if (!weights) return null;
  // Each column of the picture: a matrix with its title and column labels.
  const column = (kind, mat, title = mat.title) => ({
    kind, name: mat.name, title, values: mat.values, labels: mat.colLabels, input: mat.input,
  });
  const columns = [];
  if (input) columns.push(column('row', input));
  columns.push(column('weights', weights, 'Weights'));
  if (output) columns.push(column('row', output, 'Output'));
  // A masked key's weight is 0 by the mask, not by its score: drawn hatched.
  const masked = model.mats.scaled?.values.map((row) => row.map((x) => x === -Infinity));
  return { kind: 'summary', queries: model.qTokens, columns, masked };
}

const PICTURES = { inputs: inputsPicture, done: summaryPicture };

/** The page's steps for a model: the engine's list, each with what the figure shows. */
export function buildSteps(model) {
  // Filled once the steps are made (one map, not a set of the cells
  // computed so far per step: at the editor's largest size those copies
  // were most of the time an edit spent here).
  let computedAt;
  const steps = model.list.steps.map((step, index) => {
    // A region's cells are listed when first needed: those a step reads only when it is shown.
    const regions = (step.regions ?? []).map((region) => {
      let cells;
      return { ...region, page: model.pageName(region.name),
          get cells() { return (cells ??= regionCells(model, region)); } };
    });
    const produces = regions.filter((r) => r.produces).map((r) => ({ field: r.page, get cells() { return r.cells; } }));
    // The cells computed by step `through` and the steps before it.
    const revealedThrough = (through) => ({ has: (key) => computedAt.get(key) <= through });
    const shown = [...new Set(regions.map((r) => r.page))].filter((name) => model.mats[name]);
    return {
      id: step.id,
      title: step.title,
      text: (step.text ?? []).join(' '),
      formula: step.formula?.tex,
      get equations() { return model.equationsOf(index); },
      picture: PICTURES[step.id]?.(model, regions) ?? null,
      produces,
      /**
       * Shows the step on the view: its explanation, and its matrices and
       * heatmaps with the cells it reads and produces marked; with
       * `pending`, what it produces still hidden until reveal(view) (its
       * figure is still moving towards them).
       */
      enter(view, { pending = false } = {}) {
        this.reveal(view, pending ? index - 1 : index);
        view.explain({
          text: this.text,
          formula: this.formula,
          count: step.equationCount ?? 0,
          lines: (doc) => this.equations.map((equation) => equationElement(doc, equation, { isInput: model.isInput })),
        });
      },
      /** Marks the step's cells, showing the values of the steps up to `through` (by default this one). */
      reveal(view, through = index) {
        const revealed = revealedThrough(through);
        const marksByName = {};
        for (const name of shown) {
          const mat = model.mats[name];
          const own = regions.filter((r) => r.page === name);
          const entry = { rows: marks([]), cells: marks([]) };
          for (const region of own) {
            const mark = region.produces ? 'aw-out' : 'aw-in';
            if (region.cell) entry.cells.set(region.cell.join(','), mark);
            else if (region.rows) for (const i of range(...region.rows)) entry.rows.set(i, mark);
            else if (region.produces) for (const [i, j] of region.cells) entry.cells.set(`${i},${j}`, mark);
          }
          if (!mat.input) entry.hidden = (i, j) => !revealed.has(`${name},${i},${j}`);
          marksByName[name] = entry;
        }
        view.show(shown, marksByName);
        const heat = {};
        for (const name of ['scaled', 'weights']) {
          heat[name] = regions.filter((r) => r.page === name && !(r.all && !r.produces)).flatMap((r) => r.cells);
        }
        // No spoilers: a heatmap shows a result's cell from the step that computes it.
        const future = {};
        for (const name of ['scaled', 'weights']) {
          if (!model.mats[name]?.input) future[name] = (i, j) => !revealed.has(`${name},${i},${j}`);
        }
        view.heat(heat, future);
      },
      leave(view) { view.reset(); },
    };
  });
  computedAt = firstComputed(model, steps);
  return steps;
}

/**
 * "name,i,j" -> the index of the first step that computes the cell, for
 * the matrices on screen (not the products an output row adds up, which
 * no figure shows). A matrix the steps read but none computes is an input
 * under another name (an unscaled softmax reads its x as the engine's
 * "scaled"): known from the first step.
 */
export function firstComputed(model, steps) {
  const first = new Map();
  steps.forEach((step, index) => {
    for (const { field, cells } of step.produces) {
      if (!model.mats[field]) continue;
      for (const cell of cells) {
        const key = `${field},${cell.join(',')}`;
        if (!first.has(key)) first.set(key, index);
      }
    }
  });
  const computed = new Set(steps.flatMap((step) => step.produces.map(({ field }) => field)));
  for (const mat of Object.values(model.mats)) {
    if (mat.input || computed.has(mat.name)) continue;
    mat.values.forEach((row, i) => row.forEach((_, j) => first.set(`${mat.name},${i},${j}`, 0)));
  }
  return first;
}
