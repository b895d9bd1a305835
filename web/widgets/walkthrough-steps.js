// The walkthrough's data: a model of one problem with every number taken
// from the engine, and the list of steps that animate it. A step is
// { id, title, produces, enter(view), leave(view) }; `produces` names the
// result cells it computes, so that errata can be shown on the step that
// computes them.

import { arithmeticLine, formatNumber, vectorParts } from '../ui/format.js';

export const KIND_OF_MODE = {
  projections: 'multiHead',
  qkv: 'scaledDotProduct',
  scores: 'scaledDotProduct',
  softmax: 'softmax',
  weightedSum: 'weightedSum',
};

// Score cells get one step each up to this many; larger problems get a step per row.
const MAX_CELL_STEPS = 36;
// Sums with more terms than this are shown with the middle elided.
const MAX_TERMS_SHOWN = 8;

const TITLES = {
  x: 'X (embeddings)', wq: 'W_Q', wk: 'W_K', wv: 'W_V', q: 'Q (queries)', k: 'K (keys)',
  v: 'V (values)', scores: 'Scores QK\u1d40', scaled: 'Scaled scores', weights: 'Weights',
  output: 'Output', exp: 'exp(x \u2212 max)', input: 'Input x',
};

const isIdentity = (matrix) => matrix.length === matrix[0].length
  && matrix.every((row, i) => row.every((x, j) => x === (i === j ? 1 : 0)));

export function identity(n) {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
}

/** The object handed to the engine for a problem (token labels stay on the page). */
export function engineInput(problem) {
  const input = { kind: KIND_OF_MODE[problem.mode], ...problem.fields };
  if (problem.mode === 'projections') {
    input.numHeads = 1;
    input.wo ??= identity(problem.fields.wq[0].length);
  }
  if (problem.mode === 'softmax' && problem.vector) {
    input.x = problem.fields.x[0];
    if (Array.isArray(input.mask)) input.mask = input.mask[0];
  }
  return input;
}

const numbered = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
const asMatrix = (value) => (Array.isArray(value) && !Array.isArray(value[0]) ? [value] : value);

function scaleOf(fields, dk) {
  if (fields.scale === false) return { kind: 'none' };
  if (typeof fields.scale === 'number') return { kind: 'factor', value: fields.scale };
  return { kind: 'sqrt', dk };
}

function maskTextOf(fields) {
  const parts = [];
  if (fields.mask === 'causal') parts.push('causal: a token may not look at later tokens');
  else if (Array.isArray(fields.mask)) parts.push('a custom mask');
  if (fields.keyLength !== undefined) parts.push('key padding: keys past the real length are ignored');
  if (fields.window !== undefined) parts.push(`a local window of ${fields.window}`);
  if (fields.stride !== undefined) parts.push(`a strided pattern with stride ${fields.stride}`);
  return parts.join('; ');
}

/**
 * Runs the problem through the engine and gathers what the steps show.
 * Throws the engine's Error (its message names the field) on bad input.
 */
export function buildModel(engine, problem) {
  const result = engine.run(engineInput(problem));
  const f = problem.fields;
  const mats = {};
  const { qTokens, kTokens } = problem;
  const cols = (n, prefix = '') => numbered(prefix, n);
  const add = (name, values, rowLabels, colLabels, input = false) => {
    mats[name] = { name, title: TITLES[name], values, rowLabels, colLabels, input };
  };
  const model = { mode: problem.mode, engine, mats, qTokens, kTokens, softmax: null };

  if (problem.mode === 'projections') {
    const head = result.heads[0];
    const din = f.x[0].length;
    add('x', f.x, qTokens, cols(din), true);
    for (const w of ['wq', 'wk', 'wv']) add(w, f[w], cols(din), cols(f[w][0].length), true);
    add('q', result.q, qTokens, cols(result.q[0].length));
    add('k', result.k, kTokens, cols(result.k[0].length));
    add('v', result.v, kTokens, cols(result.v[0].length));
    add('scores', head.scores, qTokens, kTokens);
    add('scaled', head.scaled, qTokens, kTokens);
    add('weights', head.weights, qTokens, kTokens);
    add('output', head.output, qTokens, cols(head.output[0].length));
  } else if (problem.mode === 'qkv') {
    add('q', f.q, qTokens, cols(f.q[0].length), true);
    add('k', f.k, kTokens, cols(f.k[0].length), true);
    add('v', f.v, kTokens, cols(f.v[0].length), true);
    add('scores', result.scores, qTokens, kTokens);
    add('scaled', result.scaled, qTokens, kTokens);
    add('weights', result.weights, qTokens, kTokens);
    add('output', result.output, qTokens, cols(f.v[0].length));
  } else if (problem.mode === 'scores') {
    add('scores', f.scores, qTokens, kTokens, true);
    if (f.v) add('v', f.v, kTokens, cols(f.v[0].length), true);
    add('scaled', result.scaled, qTokens, kTokens);
    add('weights', result.weights, qTokens, kTokens);
    if (result.output) add('output', result.output, qTokens, cols(f.v[0].length));
  } else if (problem.mode === 'softmax') {
    add('input', asMatrix(f.x), qTokens, kTokens, true);
    add('scaled', asMatrix(result.scaled), qTokens, kTokens);
    mats.scaled.title = f.scale === undefined ? 'Softmax input' : 'Scaled input';
    add('exp', asMatrix(result.exp), qTokens, kTokens);
    add('weights', asMatrix(result.weights), qTokens, kTokens);
    model.softmax = { max: [].concat(result.max), exp: asMatrix(result.exp), sum: [].concat(result.sum) };
  } else if (problem.mode === 'weightedSum') {
    add('weights', f.weights, qTokens, kTokens, true);
    add('v', f.v, kTokens, cols(f.v[0].length), true);
    add('output', result.output, qTokens, cols(f.v[0].length));
  }

  const dk = mats.q ? mats.q.values[0].length : (f.dk ?? mats.scaled?.values[0].length);
  model.scale = scaleOf(f, dk);
  model.maskText = maskTextOf(f);
  model.hasMasked = Boolean(mats.scaled?.values.flat().some((x) => x === -Infinity));

  if (!model.softmax && mats.scaled) model.softmax = softmaxDetail(engine, mats.scaled.values);
  const termCache = new Map();
  // output row i as separate terms w_ij·v_j, each computed by the engine.
  model.terms = (i) => {
    if (!termCache.has(i)) {
      const w = mats.weights.values[i];
      const diagonal = w.map((wij, j) => w.map((_, k) => (j === k ? wij : 0)));
      termCache.set(i, engine.weightedSum({ weights: diagonal, v: mats.v.values }).output);
    }
    return termCache.get(i);
  };
  return model;
}

// Row maxima, exponentials and sums for the softmax of the scaled scores,
// from the engine's softmax on the same numbers (masked entries as its mask).
function softmaxDetail(engine, scaled) {
  const allowed = scaled.map((row) => row.map((x) => x !== -Infinity));
  const x = scaled.map((row) => row.map((value) => (value === -Infinity ? 0 : value)));
  const mask = allowed.flat().every(Boolean) ? undefined : allowed;
  const r = engine.softmax({ x, mask }); // the softmax kind does not scale by default
  return { max: r.max, exp: r.exp, sum: r.sum };
}

// ---- Steps ----

const FORMULAS = {
  projections: 'Q = XW_Q,\\quad K = XW_K,\\quad V = XW_V',
  score: 's_{ij} = q_i \\cdot k_j = \\sum_{t=1}^{d_k} q_{it}\\,k_{jt}',
  scaleSqrt: '\\tilde s_{ij} = \\frac{s_{ij}}{\\sqrt{d_k}}',
  scaleFactor: '\\tilde s_{ij} = c\\, s_{ij}',
  mask: '\\tilde s_{ij} = -\\infty \\text{ where query } i \\text{ may not see key } j',
  softmax: 'w_{ij} = \\frac{e^{\\tilde s_{ij} - m_i}}{\\sum_{k} e^{\\tilde s_{ik} - m_i}},\\quad m_i = \\max_k \\tilde s_{ik}',
  output: 'o_i = \\sum_j w_{ij}\\, v_j',
  done: '\\operatorname{Attention}(Q, K, V) = \\operatorname{softmax}\\!\\left(\\frac{QK^{\\top}}{\\sqrt{d_k}}\\right) V',
  softmaxOnly: '\\operatorname{softmax}(x)_j = \\frac{e^{x_j - m}}{\\sum_k e^{x_k - m}},\\quad m = \\max_k x_k',
};

const range = (n) => Array.from({ length: n }, (_, i) => i);
const cellsOfRow = (i, n) => range(n).map((j) => [i, j]);
const allCells = (rows, cols) => range(rows).flatMap((i) => cellsOfRow(i, cols));
const marks = (entries) => new Map(entries);

/** Keeps long sums readable: the first and last terms with an ellipsis between. */
function elide(items) {
  if (items.length <= MAX_TERMS_SHOWN) return items;
  return [...items.slice(0, MAX_TERMS_SHOWN - 2), '\u2026', ...items.slice(-2)];
}

function joined(items, separator) {
  const parts = [];
  items.forEach((item, index) => {
    if (index > 0 && item !== '\u2026' && items[index - 1] !== '\u2026') parts.push(separator);
    else if (index > 0) parts.push(' ');
    parts.push(...(Array.isArray(item) ? item : [item]));
  });
  return parts;
}

function scaleParts(model) {
  if (model.scale.kind === 'sqrt') return [' \u00f7 \u221a', String(model.scale.dk)];
  if (model.scale.kind === 'factor') return [' \u00d7 ', { value: model.scale.value, input: true }];
  return [];
}

/** Text describing how one cell of a matrix was computed (for hover and focus). */
export function describeCell(model, name, i, j) {
  const m = model.mats;
  const q = model.qTokens[i];
  const k = model.kTokens[j];
  const n = formatNumber;
  if (name === 'scaled' && model.mode !== 'softmax') {
    if (m.scaled.values[i][j] === -Infinity) return `masked: ${q} may not attend to ${k}, so the score is \u2212\u221e`;
    const s = m.scores.values[i][j];
    const dot = m.q
      ? `q${q} \u00b7 k${k} = ${m.q.values[i].map((x, t) => `${n(x)}\u00d7${n(m.k.values[j][t])}`).join(' + ')} = ${n(s)}; `
      : '';
    if (model.scale.kind === 'sqrt') return `${dot}score ${n(s)} \u00f7 \u221a${model.scale.dk}`;
    if (model.scale.kind === 'factor') return `${dot}score ${n(s)} \u00d7 ${n(model.scale.value)}`;
    return `${dot}the score ${n(s)}, not scaled`;
  }
  if (name === 'weights' && model.softmax) {
    const { max, exp, sum } = model.softmax;
    if (exp[i][j] === 0 && m.weights.values[i][j] === 0) return `exp of \u2212\u221e is 0, so the weight is 0`;
    return `exp(${n(m.scaled.values[i][j])} \u2212 ${n(max[i])}) = ${n(exp[i][j])}, divided by the row sum ${n(sum[i])}`;
  }
  if (name === 'weights') return `given weight of ${k} in ${q}'s output`;
  return '';
}

function scoreLine(doc, model, i, j) {
  const { q, k, scores } = model.mats;
  const terms = q.values[i].map((qv, t) => [{ value: qv, input: q.input }, ' \u00d7 ', { value: k.values[j][t], input: k.input }]);
  return arithmeticLine(doc, [
    'q', { token: model.qTokens[i] }, ' \u00b7 k', { token: model.kTokens[j] }, ' = ',
    ...joined(elide(terms), ' + '), ' = ', scores.values[i][j],
  ]);
}

function projectionLine(doc, model, source, target, i, c) {
  const x = model.mats.x.values[i];
  const w = model.mats[source].values;
  const terms = x.map((xv, t) => [{ value: xv, input: true }, ' \u00d7 ', { value: w[t][c], input: true }]);
  return arithmeticLine(doc, [
    `${target.toUpperCase()}[`, { token: model.qTokens[i] }, `][${c + 1}] = `,
    ...joined(elide(terms), ' + '), ' = ', model.mats[target].values[i][c],
  ]);
}

function softmaxLines(doc, model, i, { rowName = 'row', source = 'scaled' } = {}) {
  const scaled = model.mats[source === 'input' ? 'scaled' : source].values[i];
  const weights = model.mats.weights.values[i];
  const { max, exp, sum } = model.softmax;
  const allMasked = scaled.every((x) => x === -Infinity);
  if (allMasked) {
    return [arithmeticLine(doc, ['Every entry of ', { token: rowName }, ' is \u2212\u221e: no key is allowed, so every weight is 0 (the engine never divides 0 by 0).'])];
  }
  const exps = scaled.map((s, j) => (s === -Infinity
    ? ['e^(\u2212\u221e) = 0']
    : ['e^(', s, ' \u2212 ', max[i], ') = ', exp[i][j]]));
  const sums = exp[i].map((e) => [e]);
  const divisions = weights.map((w, j) => (scaled[j] === -Infinity ? ['0'] : [exp[i][j], ' \u00f7 ', sum[i], ' = ', w]));
  return [
    arithmeticLine(doc, ['largest entry m = ', max[i]]),
    arithmeticLine(doc, ['exp: ', ...joined(elide(exps), ', ')]),
    arithmeticLine(doc, ['sum = ', ...joined(elide(sums), ' + '), ' = ', sum[i]]),
    arithmeticLine(doc, ['weights: ', ...joined(elide(divisions), ', ')]),
  ];
}

function outputLines(doc, model, i) {
  const { weights, v, output } = model.mats;
  const terms = weights.values[i].map((w, j) => [{ value: w, input: weights.input }, ' \u00d7 ', ...vectorParts(v.values[j], { input: v.input })]);
  const products = model.terms(i).map((row) => vectorParts(row));
  return [
    arithmeticLine(doc, ['output', { token: model.qTokens[i] }, ' = ', ...joined(elide(terms), ' + ')]),
    arithmeticLine(doc, ['= ', ...joined(elide(products), ' + ')]),
    arithmeticLine(doc, ['= ', ...vectorParts(output.values[i])]),
  ];
}

// Output row i and its terms w_ij·v_j (entry c of term j is [i, j, c]).
function outputProduces(m, i) {
  const width = m.output.values[0].length;
  const terms = range(m.v.values.length).flatMap((j) => range(width).map((c) => [i, j, c]));
  return [{ field: 'terms', cells: terms }, { field: 'output', cells: cellsOfRow(i, width) }];
}

/**
 * The step that computes output row i: the value rows whose weight
 * contributes(w) are marked, and text explains the mix.
 */
function outputStep(model, i, { text, contributes }) {
  const m = model.mats;
  const nk = model.kTokens.length;
  return {
    id: `output-${i}`, title: `Output for ${model.qTokens[i]}`,
    produces: outputProduces(m, i),
    enter(view) {
      view.show(['weights', 'v', 'output'], {
        weights: { rows: marks([[i, 'aw-in']]) },
        v: { rows: marks(range(nk).filter((j) => contributes(m.weights.values[i][j])).map((j) => [j, 'aw-in'])) },
        output: { rows: marks([[i, 'aw-out']]), hidden: (row) => row > i },
      });
      view.heat({ weights: cellsOfRow(i, nk) });
      view.explain({ text, formula: FORMULAS.output, lines: (doc) => outputLines(doc, model, i) });
    },
  };
}

/** Builds the steps for a model. */
export function buildSteps(model) {
  const m = model.mats;
  const steps = [];
  const nq = model.qTokens.length;
  const nk = model.kTokens.length;
  const hasMasked = model.hasMasked;
  const revealRows = (upTo) => (i) => i > upTo;

  const add = (step) => steps.push({ produces: [], leave: (view) => view.reset(), ...step });

  if (model.mode === 'softmax') return softmaxSteps(model, add, steps);
  if (model.mode === 'weightedSum') return weightedSumSteps(model, add, steps);

  // Inputs
  if (model.mode === 'projections') {
    add({
      id: 'inputs', title: 'Start from the token embeddings',
      enter(view) {
        view.show(['x', 'wq', 'wk', 'wv']);
        view.explain({
          text: `Each token arrives as a row of numbers, its embedding (X). Three weight matrices turn every row into a query, a key and a value. ${['wq', 'wk', 'wv'].every((w) => isIdentity(m[w].values))
            ? 'Here all three are the identity, so Q, K and V will equal X; edit them below to see what changes.'
            : 'Each weight matrix mixes the embedding\u2019s columns in its own way, so Q, K and V differ.'}`,
          formula: FORMULAS.projections,
        });
      },
    });
    for (const [w, target, role] of [['wq', 'q', 'query'], ['wk', 'k', 'key'], ['wv', 'v', 'value']]) {
      add({
        id: `project-${target}`, title: `Project to ${target.toUpperCase()}`,
        produces: [{ field: target, cells: allCells(m[target].values.length, m[target].values[0].length) }],
        enter(view) {
          view.show(['x', w, target], {
            x: { rows: marks([[0, 'aw-in']]) }, [target]: { rows: marks([[0, 'aw-out']]) },
          });
          view.explain({
            text: `Every row of X times ${w === 'wq' ? 'W_Q' : w === 'wk' ? 'W_K' : 'W_V'} gives that token's ${role} vector: entry c is the sum of the row's numbers each multiplied by column c of the weight matrix. The first row in full (focus or hover any cell for the others):`,
            formula: FORMULAS.projections,
            lines: (doc) => range(m[target].values[0].length).map((c) => projectionLine(doc, model, w, target, 0, c)),
          });
        },
      });
    }
  } else if (model.mode === 'qkv') {
    add({
      id: 'inputs', title: 'Queries, keys and values',
      enter(view) {
        view.show(['q', 'k', 'v']);
        view.explain({
          text: 'Every token has three vectors. Its query describes what it is looking for, its key describes what it can offer, and its value is what it passes on when another token picks it. Here they are given directly.',
          formula: FORMULAS.done,
        });
      },
    });
  } else {
    add({
      id: 'inputs', title: 'Start from the scores',
      enter(view) {
        view.show(m.v ? ['scores', 'v'] : ['scores']);
        view.explain({
          text: 'This example starts after the dot products: each entry already says how well a query matches a key. What is left is scaling, masking, the softmax and, when values are given, the weighted sum.',
        });
      },
    });
  }

  // Scores, cell by cell (or row by row for large problems)
  if (m.q) {
    const byCell = nq * nk <= MAX_CELL_STEPS;
    const units = byCell ? allCells(nq, nk) : range(nq).map((i) => [i, null]);
    units.forEach(([i, j], index) => {
      const done = (a, b) => {
        const [ui, uj] = units[index];
        return byCell ? (a < ui || (a === ui && b <= uj)) : a <= ui;
      };
      const cells = j === null ? cellsOfRow(i, nk) : [[i, j]];
      add({
        id: j === null ? `score-${i}` : `score-${i}-${j}`,
        title: j === null ? `Scores of ${model.qTokens[i]}` : `Score of ${model.qTokens[i]} against ${model.kTokens[j]}`,
        produces: [{ field: 'scores', cells }],
        enter(view) {
          view.show(['q', 'k', 'scores'], {
            q: { rows: marks([[i, 'aw-in']]) },
            k: { rows: marks(j === null ? [] : [[j, 'aw-in']]) },
            scores: { cells: marks(cells.map(([a, b]) => [`${a},${b}`, 'aw-out'])), hidden: (a, b) => !done(a, b) },
          });
          view.heat({ scaled: cells });
          view.explain({
            text: j === null
              ? `Token \u201c${model.qTokens[i]}\u201d compares its query with every key: multiply entry by entry and add up. A larger dot product means a better match.`
              : `How well does \u201c${model.qTokens[i]}\u201d match \u201c${model.kTokens[j]}\u201d? Multiply its query with that key entry by entry and add the products: the dot product. The larger it is, the better the match.`,
            formula: FORMULAS.score,
            lines: (doc) => cells.map(([a, b]) => scoreLine(doc, model, a, b)),
          });
        },
      });
    });
  }

  // Scaling
  if (model.scale.kind !== 'none') {
    add({
      id: 'scale', title: model.scale.kind === 'sqrt' ? `Divide by \u221ad_k = \u221a${model.scale.dk}` : 'Scale the scores',
      produces: [{ field: 'scaled', cells: allCells(nq, nk).filter(([i, j]) => m.scaled.values[i][j] !== -Infinity) }],
      enter(view) {
        view.show(['scores', 'scaled'], {
          scaled: { hidden: (i, j) => m.scaled.values[i][j] === -Infinity, cells: marks(allCells(nq, nk).map(([i, j]) => [`${i},${j}`, 'aw-out'])) },
        });
        view.heat({ scaled: allCells(nq, nk) });
        view.explain({
          text: model.scale.kind === 'sqrt'
            ? `Dot products of longer vectors tend to be larger, and large inputs push the softmax towards giving one key everything. Dividing every score by \u221ad_k (d_k = ${model.scale.dk}) keeps their spread about the same whatever the width.`
            : 'Every score is multiplied by the same factor before the softmax.',
          formula: model.scale.kind === 'sqrt' ? FORMULAS.scaleSqrt : FORMULAS.scaleFactor,
          lines: (doc) => range(nq).map((i) => arithmeticLine(doc, [
            { token: model.qTokens[i] }, ': ',
            ...joined(elide(range(nk).map((j) => (m.scaled.values[i][j] === -Infinity
              ? ['(masked)']
              : [m.scores.values[i][j], ...scaleParts(model), ' = ', m.scaled.values[i][j]]))), ', '),
          ])),
        });
      },
    });
  } else {
    add({
      id: 'scale', title: 'No scaling here',
      enter(view) {
        view.show(['scores', 'scaled'], { scaled: { hidden: (i, j) => m.scaled.values[i][j] === -Infinity } });
        view.explain({ text: 'This example feeds the scores to the softmax as they are, without dividing by \u221ad_k. Large scores will make the weights very uneven.' });
      },
    });
  }

  // Masking
  if (hasMasked || model.maskText) {
    const masked = allCells(nq, nk).filter(([i, j]) => m.scaled.values[i][j] === -Infinity);
    add({
      id: 'mask', title: 'Mask: forbidden pairs become \u2212\u221e',
      produces: [{ field: 'scaled', cells: masked }],
      enter(view) {
        view.show(['scaled'], { scaled: { cells: marks(masked.map(([i, j]) => [`${i},${j}`, 'aw-out'])) } });
        view.heat({ scaled: masked });
        view.explain({
          text: `Some query\u2013key pairs are not allowed (${model.maskText || 'a mask'}). Their scores are replaced by \u2212\u221e, so the softmax gives them exactly zero weight and the other weights in the row share the whole 1.`,
          formula: FORMULAS.mask,
          lines: (doc) => [arithmeticLine(doc, [`${masked.length} of ${nq * nk} entries masked.`])],
        });
      },
    });
  }

  // Softmax, row by row
  range(nq).forEach((i) => {
    add({
      id: `softmax-${i}`, title: `Softmax of the row of ${model.qTokens[i]}`,
      produces: [{ field: 'weights', cells: cellsOfRow(i, nk) }],
      enter(view) {
        view.show(['scaled', 'weights'], {
          scaled: { rows: marks([[i, 'aw-in']]) },
          weights: { rows: marks([[i, 'aw-out']]), hidden: revealRows(i) },
        });
        view.heat({ scaled: cellsOfRow(i, nk), weights: cellsOfRow(i, nk) });
        view.explain({
          text: `The softmax turns the row of scores of \u201c${model.qTokens[i]}\u201d into weights that are positive and add up to 1. Subtracting the row's largest entry first changes no weight but keeps exp from overflowing; then take exp of each entry, add them up, and divide each by the sum.`,
          formula: FORMULAS.softmax,
          lines: (doc) => softmaxLines(doc, model, i, { rowName: model.qTokens[i] }),
        });
      },
    });
  });

  // Weighted sum of values, row by row
  if (m.output) {
    range(nq).forEach((i) => add(outputStep(model, i, {
      text: `The output for \u201c${model.qTokens[i]}\u201d is a mix of all value rows, each multiplied by how much attention \u201c${model.qTokens[i]}\u201d pays to that token. A weight of 0 leaves that value out entirely.`,
      contributes: (w) => w > 0,
    })));
  }

  add({
    id: 'done', title: 'The whole computation',
    enter(view) {
      view.show(m.output ? ['weights', 'output'] : ['weights']);
      view.explain({
        text: 'That is all of it. Hover or focus any heatmap cell to see how it was computed, and change any number, label or size in the editor: every value follows.',
        formula: FORMULAS.done,
      });
    },
  });
  return steps;
}

function softmaxSteps(model, add, steps) {
  const m = model.mats;
  const rows = model.qTokens.length;
  const cols = model.kTokens.length;
  const { max, sum } = model.softmax;
  add({
    id: 'inputs', title: 'The numbers going into the softmax',
    enter(view) {
      view.show(['input']);
      view.explain({
        text: 'The softmax turns any list of numbers into positive weights that add up to 1; larger numbers get larger weights. How uneven the weights come out depends on how far apart the inputs are.',
        formula: FORMULAS.softmaxOnly,
      });
    },
  });
  const masked = allCells(rows, cols).filter(([i, j]) => m.scaled.values[i][j] === -Infinity);
  const isMasked = (i, j) => m.scaled.values[i][j] === -Infinity;
  if (model.scale.kind !== 'none') {
    add({
      id: 'scale', title: 'Scale the inputs',
      produces: [{ field: 'scaled', cells: allCells(rows, cols).filter(([i, j]) => !isMasked(i, j)) }],
      enter(view) {
        view.show(['input', 'scaled'], { scaled: { hidden: isMasked, cells: marks(allCells(rows, cols).map(([i, j]) => [`${i},${j}`, 'aw-out'])) } });
        view.explain({
          text: 'Every input is multiplied by the same factor first; shrinking the inputs brings them closer together and evens out the weights.',
          lines: (doc) => range(rows).map((i) => arithmeticLine(doc, [
            { token: model.qTokens[i] }, ': ',
            ...joined(elide(range(cols).map((j) => (isMasked(i, j)
              ? ['(masked)']
              : [{ value: m.input.values[i][j], input: true }, ...scaleParts(model), ' = ', m.scaled.values[i][j]]))), ', '),
          ])),
        });
      },
    });
  }
  if (masked.length > 0) {
    add({
      id: 'mask', title: 'Mask: left-out entries become \u2212\u221e',
      produces: [{ field: 'scaled', cells: masked }],
      enter(view) {
        view.show(['input', 'scaled'], { scaled: { cells: marks(masked.map(([i, j]) => [`${i},${j}`, 'aw-out'])) } });
        view.explain({
          text: 'A mask leaves some entries out. They become \u2212\u221e, and since e to the power \u2212\u221e is 0 they get no weight at all: the remaining entries share the whole 1 between them.',
          formula: FORMULAS.mask,
          lines: (doc) => [arithmeticLine(doc, [`${masked.length} of ${rows * cols} entries masked.`])],
        });
      },
    });
  }
  range(rows).forEach((i) => {
    const label = model.qTokens[i];
    const row = cellsOfRow(i, cols);
    add({
      id: `max-${i}`, title: rows > 1 ? `${label}: the largest entry` : 'The largest entry',
      produces: [{ field: 'max', cells: [[i, 0]] }],
      enter(view) {
        view.show(['scaled'], { scaled: { rows: marks([[i, 'aw-in']]) } });
        view.explain({
          text: 'Find the largest entry. Subtracting it from every entry leaves the weights unchanged (it cancels in the division) but keeps every exponential at most 1, so nothing overflows.',
          formula: FORMULAS.softmaxOnly,
          lines: (doc) => [arithmeticLine(doc, ['m = max', ...vectorParts(m.scaled.values[i]), ' = ', max[i]])],
        });
      },
    });
    add({
      id: `exp-${i}`, title: rows > 1 ? `${label}: exponentials` : 'Exponentials',
      produces: [{ field: 'exp', cells: row }],
      enter(view) {
        view.show(['scaled', 'exp'], { scaled: { rows: marks([[i, 'aw-in']]) }, exp: { rows: marks([[i, 'aw-out']]), hidden: (a) => a > i } });
        view.explain({
          text: 'Take e to the power of each entry minus the maximum. The largest entry gives exactly 1; an entry far below it gives almost 0.',
          formula: FORMULAS.softmaxOnly,
          lines: (doc) => [softmaxLines(doc, model, i, { rowName: label })[1]],
        });
      },
    });
    add({
      id: `sum-${i}`, title: rows > 1 ? `${label}: sum and divide` : 'Sum and divide',
      produces: [{ field: 'sum', cells: [[i, 0]] }, { field: 'weights', cells: row }],
      enter(view) {
        view.show(['exp', 'weights'], { exp: { rows: marks([[i, 'aw-in']]) }, weights: { rows: marks([[i, 'aw-out']]), hidden: (a) => a > i } });
        view.heat({ weights: row });
        view.explain({
          text: 'Add the exponentials and divide each by the total: the results are the weights, and they add up to 1.',
          formula: FORMULAS.softmaxOnly,
          lines: (doc) => softmaxLines(doc, model, i, { rowName: label }).slice(2),
        });
      },
    });
  });
  add({
    id: 'done', title: 'The weights',
    enter(view) {
      view.show(['input', 'weights']);
      view.explain({ text: `Compare the inputs with the weights: ${sum.length > 1 ? 'rows whose inputs lie far apart give nearly all the weight to their largest entry.' : 'the larger the gaps between inputs, the closer the weights come to a single 1.'} Edit the inputs or the scale below to explore.` });
    },
  });
  return steps;
}

function weightedSumSteps(model, add, steps) {
  const nq = model.qTokens.length;
  add({
    id: 'inputs', title: 'Weights and values',
    enter(view) {
      view.show(['weights', 'v']);
      view.explain({
        text: 'The weights are already known here: row i says how much output i takes from each value row. The value rows are the information that gets mixed.',
        formula: FORMULAS.output,
      });
    },
  });
  // Edited weights may be negative: every nonzero one contributes.
  range(nq).forEach((i) => add(outputStep(model, i, {
    text: 'Multiply each value row by its weight and add the results. The row with the largest weight dominates the output.',
    contributes: (w) => w !== 0,
  })));
  add({
    id: 'done', title: 'The outputs',
    enter(view) {
      view.show(['weights', 'v', 'output']);
      view.explain({ text: 'Each output row is a blend of the value rows. Change a weight below and watch its output row move towards or away from that value.' });
    },
  });
  return steps;
}
