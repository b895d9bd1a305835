// The Bahdanau-versus-Luong section: the same decoder states and encoder
// states scored four ways (additive, dot, general, concat), each with its
// alignment heatmap (decoder states as rows, encoder states as columns),
// and one decoder state's scores side by side.
//
//   mount(element, { engine, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   onChange(state) after each change the learner makes
//   state: { params: 'hand' | 'random', seed, row }
//
// Every score, weight and context vector comes from the engine (additive, luong).

import { createHeatmap } from '../ui/heatmap.js';
import { formatNumber, numberElement } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import {
  attempt, button, choice, clampInt, normalDraws, randomMatrix, scrollBox, sectionRoot, sectionState, seededRandom,
} from './sections-common.js';
import { DECODER_TOKENS, DECODER_VECTORS, ENCODER_TOKENS, ENCODER_VECTORS } from './cross-attention.js';

const D = ENCODER_VECTORS[0].length; // d_s = d_h
const D_A = 5; // attention width of the random additive and concat parameters
const THRESHOLD = -4.5; // hand-set bias: tanh(s_i + h_i - 4.5) is high only where both carry feature i

const identity = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
const diagonal = (values) => values.map((value, i) => values.map((_, j) => (i === j ? value : 0)));

// Hand-set parameters that make each score favour shared features; concat is
// given W = [W_s; W_h] and the same v and b, which makes it the additive score.
export function handParameters() {
  const ones = Array(D).fill(1);
  const bias = Array(D).fill(THRESHOLD);
  return {
    additive: { ws: identity(D), wh: identity(D), v: ones, b: bias },
    general: { w: diagonal([1, 1, 1, 1, 1, 0.25, 0.25]) },
    concat: { w: [...identity(D), ...identity(D)], v: ones, b: bias },
  };
}

export function randomParameters(seed) {
  const draw = normalDraws(seededRandom(seed));
  const small = () => draw() * 0.5;
  return {
    additive: { ws: randomMatrix(small, D, D_A), wh: randomMatrix(small, D, D_A), v: randomMatrix(draw, 1, D_A)[0] },
    general: { w: randomMatrix(small, D, D) },
    concat: { w: randomMatrix(small, 2 * D, D_A), v: randomMatrix(draw, 1, D_A)[0] },
  };
}

const METHODS = [
  { id: 'additive', title: 'Bahdanau (additive)', tex: 'e_{tj} = v^{\\mathsf T} \\tanh(W_s s_t + W_h h_j + b)' },
  { id: 'dot', title: 'Luong dot', tex: 'e_{tj} = s_t^{\\mathsf T} h_j' },
  { id: 'general', title: 'Luong general', tex: 'e_{tj} = s_t^{\\mathsf T} W h_j' },
  { id: 'concat', title: 'Luong concat', tex: 'e_{tj} = v^{\\mathsf T} \\tanh(W [s_t ; h_j] + b)' },
];

/** Decoder state t against every encoder state: each method's score and weight, its largest weight in bold. */
function comparisonTable(make, results, t) {
  const table = make('table', 'aw-table');
  const doc = table.ownerDocument;
  const thead = make('thead');
  const top = make('tr');
  top.append(make('th', '', 'encoder state'));
  for (const method of METHODS) {
    const th = make('th', '', method.title);
    th.colSpan = 2;
    top.append(th);
  }
  const sub = make('tr');
  sub.append(make('td'));
  for (let m = 0; m < METHODS.length; m++) sub.append(make('th', '', 'score'), make('th', '', 'weight'));
  thead.append(top, sub);
  const tbody = make('tbody');
  ENCODER_TOKENS.forEach((token, j) => {
    const tr = make('tr');
    const th = make('th', '', `h${j + 1}: ${token}`);
    th.scope = 'row';
    tr.append(th);
    for (const method of METHODS) {
      const result = results[method.id];
      const best = result.weights[t].indexOf(Math.max(...result.weights[t])) === j;
      const score = make('td');
      score.append(numberElement(doc, result.scores[t][j]));
      const weight = make('td', best ? 'aw-strong' : '');
      weight.dataset.method = method.id;
      weight.dataset.key = String(j);
      weight.append(numberElement(doc, result.weights[t][j]));
      tr.append(score, weight);
    }
    tbody.append(tr);
  });
  table.append(thead, tbody);
  return table;
}

function normalise(next) {
  return {
    params: next.params === 'random' ? 'random' : 'hand',
    seed: clampInt(next.seed, 0, 2 ** 31, 11),
    row: clampInt(next.row, 0, DECODER_TOKENS.length - 1, 1),
  };
}

export function mount(element, { engine, state = {}, onChange = () => {} }) {
  const { doc, make, root, say } = sectionRoot(element, {
    name: 'alignment',
    title: 'Bahdanau versus Luong: four ways to score a match',
    intro: [
      'Before transformers, a translation model\u2019s decoder kept a state s_t while writing, and attention compared that state with '
      + 'every encoder state h_j to decide where to look. Bahdanau\u2019s score feeds both through a small layer with a tanh; Luong\u2019s '
      + 'scores are a plain dot product, a dot product through a matrix W (general), or a layer on the two stacked together (concat). '
      + 'Each row of scores goes through a softmax, and the weights mix the encoder states into a context vector.',
      'The states here are the sentence vectors of the cross-attention section: English encoder states, French decoder states (one per row).',
    ],
  });

  const store = sectionState({ initial: { params: 'hand', seed: 11, row: 1 }, normalise, show, onChange });
  let params = handParameters();

  const controls = make('div', 'aw-controls');
  const paramChoice = choice(doc, {
    label: 'Parameters', name: 'params', value: store.current.params,
    options: [
      { value: 'hand', label: 'hand-set (favour shared features)' },
      { value: 'random', label: 'seeded random (untrained)' },
    ],
    onChange: (value) => store.update({ params: value }),
  });
  const rowChoice = choice(doc, {
    label: 'Decoder state to compare', name: 'row', value: store.current.row,
    options: DECODER_TOKENS.map((token, i) => ({ value: i, label: `s${i + 1}: ${token}` })),
    onChange: (value) => store.update({ row: Number(value) }),
  });
  const reroll = button(doc, { label: 'New random parameters', onClick: () => store.update({ params: 'random', seed: store.current.seed + 1 }) });
  controls.append(paramChoice.element, rowChoice.element, reroll);
  root.append(controls);
  const paramNote = make('p', 'aw-small');
  root.append(paramNote);

  const grid = make('div', 'aw-align-heatmaps');
  const heatDetail = make('p', 'aw-heatmap-detail');
  root.append(grid, heatDetail);
  const cells = METHODS.map((method) => {
    const cell = make('div', 'aw-align-cell');
    cell.dataset.method = method.id;
    const formula = make('div', 'aw-align-formula');
    formula.append(mathElement(doc, method.tex));
    grid.append(cell);
    const heatmap = createHeatmap(cell, {
      title: `${method.title}: weights`, name: `${method.title} weight`, rowAxis: 'decoder state', colAxis: 'encoder state',
      detailElement: heatDetail,
    });
    heatmap.element.before(formula);
    return { method, cell, heatmap };
  });

  const comparePanel = make('section', 'aw-panel');
  const compareTitle = make('h4');
  const compareTable = scrollBox(make, 'aw-table-scroll', 'Bahdanau and Luong compared');
  const contextLines = make('div', 'aw-arith-lines');
  comparePanel.append(compareTitle, compareTable, contextLines);
  root.append(comparePanel);

  function runAll() {
    const query = DECODER_VECTORS;
    const keys = ENCODER_VECTORS;
    return attempt(say, () => ({
      additive: engine.additive({ query, keys, ...params.additive }),
      dot: engine.luong({ query, keys, method: 'dot' }),
      general: engine.luong({ query, keys, method: 'general', ...params.general }),
      concat: engine.luong({ query, keys, method: 'concat', ...params.concat }),
    }));
  }

  function draw() {
    const results = runAll();
    if (!results) return;
    paramNote.textContent = store.current.params === 'hand'
      ? `Hand-set: W_s = W_h = I, v = 1, b = ${formatNumber(THRESHOLD, 1)}, so tanh(s_i + h_i \u2212 ${formatNumber(-THRESHOLD, 1)}) is near 1 only where both states `
        + 'carry feature i; general weighs the two position features by 0.25; concat gets W = [W_s; W_h] with the same v and b, '
        + 'which is exactly the additive score, so those two heatmaps agree. The dot score has no parameters and no scaling, '
        + 'so its rows are the most peaked.'
      : `Seeded random parameters (seed ${store.current.seed}), as before any training: the formulas still run, but only the parameter-free `
        + 'dot score still lines the words up.';
    for (const { method, heatmap } of cells) {
      const result = results[method.id];
      heatmap.update({
        values: result.weights, rowLabels: DECODER_TOKENS, colLabels: ENCODER_TOKENS, domain: [0, 1],
        describe: (i, j) => `score e = ${formatNumber(result.scores[i][j])}, then the softmax over the row`,
      });
    }
    drawComparison(results);
  }

  function drawComparison(results) {
    const t = store.current.row;
    compareTitle.textContent = `Decoder state s${t + 1} (\u201c${DECODER_TOKENS[t]}\u201d) against every encoder state`;
    compareTable.replaceChildren(comparisonTable(make, results, t));
    contextLines.replaceChildren(...METHODS.map((method) => {
      const line = make('p', 'aw-arith');
      line.append(doc.createTextNode(`${method.title}: context c${t + 1} = \u03a3 weight \u00b7 h = [`));
      results[method.id].context[t].forEach((value, i) => {
        if (i > 0) line.append(doc.createTextNode(', '));
        line.append(numberElement(doc, value));
      });
      line.append(doc.createTextNode(']'));
      return line;
    }));
  }

  function show(current) {
    params = current.params === 'hand' ? handParameters() : randomParameters(current.seed);
    paramChoice.select.value = current.params;
    rowChoice.select.value = String(current.row);
    draw();
  }

  store.setState(state);

  return {
    getState: store.getState,
    setState: store.setState,
    destroy() {
      for (const { heatmap } of cells) heatmap.destroy();
      root.remove();
    },
  };
}
