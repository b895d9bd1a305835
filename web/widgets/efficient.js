// The efficient-variants section: full attention next to a local window,
// the strided pattern of the Sparse Transformer and linear attention; which
// query-key cells each one computes (from the engine's masked weights); and,
// on request, full, online and linear attention measured for long sequences
// in a Web Worker (efficient-long.js).
//
//   mount(element, { engine, presets?, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   presets: presets.json, for the tutorials' claims this section shows (none without it)
//   onChange(state) after each change the learner makes
//   state: { T, window, stride, seed }
//
// Every weight and output comes from the engine; the measurement times the
// engine's own calls (sdpaFlat, linearFlat).

import { appendClaims } from '../ui/claims.js';
import { createHeatmap } from '../ui/heatmap.js';
import { formatNumber, numberElement } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import { mountLongSequences } from './efficient-long.js';
import {
  attempt, button, clampInt, dataTable, normalDraws, numberedTokens, randomMatrix, scrollBox, sectionRoot,
  sectionState, seededRandom, slider,
} from './sections-common.js';

const T_MIN = 4;
const T_MAX = 16;
const D_K = 4;
const D_V = 2;

/** The seeded inputs the widget shows (exported for the tests). */
export function inputsFor(T, seed) {
  const draw = normalDraws(seededRandom(seed));
  return { q: randomMatrix(draw, T, D_K), k: randomMatrix(draw, T, D_K), v: randomMatrix(draw, T, D_V) };
}

export function mount(element, { engine, presets = null, state = {}, onChange = () => {} }) {
  const { doc, make, root, say } = sectionRoot(element, {
    name: 'efficient',
    title: 'Cheaper attention: local, strided and linear',
    intro: [
      'Full attention scores every query against every key: T\u00b2 scores for T tokens, so doubling the length quadruples the work '
      + 'and the memory for the weights. Local attention keeps only the keys within a window around each query. The strided pattern '
      + 'of the Sparse Transformer keeps the recent keys and every stride-th key further back, so information can still hop across '
      + 'the sequence in two steps. Linear attention drops the softmax for a positive feature map \u03c6 and regroups the product, '
      + 'so no T \u00d7 T matrix is ever formed.',
    ],
  });

  const store = sectionState({ initial: { T: 12, window: 2, stride: 4, seed: 21 }, normalise, show, onChange });
  let inputs = inputsFor(store.current.T, store.current.seed);

  const controls = make('div', 'aw-controls');
  const tSlider = slider(doc, { label: 'tokens T', name: 'T', min: T_MIN, max: T_MAX, value: store.current.T, onInput: (T) => store.update({ T }) });
  const windowSlider = slider(doc, { label: 'local window w', name: 'window', min: 0, max: T_MAX - 1, value: store.current.window, onInput: (w) => store.update({ window: w }) });
  const strideSlider = slider(doc, { label: 'stride', name: 'stride', min: 1, max: T_MAX - 1, value: store.current.stride, onInput: (s) => store.update({ stride: s }) });
  controls.append(tSlider.element, windowSlider.element, strideSlider.element,
    button(doc, { label: 'New random Q, K, V', onClick: () => store.update({ seed: store.current.seed + 1 }) }));
  root.append(controls);

  root.append(make('p', 'aw-small', 'Each grid shows the scaled scores QK\u1d40/\u221ad_k the engine computed for that pattern; '
    + 'hatched cells were never computed (the engine set them to \u2212\u221e, so their weight is 0). Hover or focus a cell for its weight.'));
  const cardsBox = make('div', 'aw-eff-heatmaps');
  const heatDetail = make('p', 'aw-heatmap-detail');
  root.append(cardsBox, heatDetail);
  const card = (id, title, rule) => {
    const box = make('div', 'aw-eff-card');
    box.dataset.variant = id;
    cardsBox.append(box);
    const heatmap = createHeatmap(box, { title, name: `${id} scaled score`, detailElement: heatDetail });
    const ruleLine = make('p', 'aw-eff-count', rule);
    const count = make('p', 'aw-eff-count');
    count.dataset.count = id;
    box.append(ruleLine, count);
    return { heatmap, count, ruleLine };
  };
  const cards = {
    full: card('full', 'Full attention', 'every key for every query'),
    local: card('local', 'Local window', ''),
    strided: card('strided', 'Strided (Sparse Transformer)', ''),
  };
  const linearBox = make('div', 'aw-eff-card aw-eff-linear');
  linearBox.dataset.variant = 'linear';
  linearBox.append(make('p', 'aw-heatmap-title', 'Linear attention'),
    make('p', '', 'There is no weights matrix to draw: with \u03c6(x) = elu(x) + 1 the engine sums \u03c6(k_j)\u1d40v_j and \u03c6(k_j) '
      + 'over the keys once (a d_k \u00d7 d_v matrix and a d_k vector), then each query reads its output from those two sums.'),
    mathElement(doc, 'o_i = \\frac{\\varphi(q_i)^{\\mathsf T} \\sum_j \\varphi(k_j)\\, v_j^{\\mathsf T}}{\\varphi(q_i)^{\\mathsf T} \\sum_j \\varphi(k_j)}', { display: true }));
  cardsBox.append(linearBox);

  const outputsPanel = make('section', 'aw-panel');
  outputsPanel.append(make('h4', '', 'What each variant outputs'),
    make('p', 'aw-small', 'The outputs differ: local and strided attention average over fewer values, and linear attention '
      + 'weighs the values by \u03c6(q)\u00b7\u03c6(k) instead of a softmax, so it is a different mechanism, not an approximation of full attention.'));
  const outputsTable = scrollBox(make, 'aw-table-scroll', 'Outputs of full and linear attention');
  outputsPanel.append(outputsTable);
  root.append(outputsPanel);

  const longSequences = mountLongSequences(root, { doc, make });

  function countAllowed(result) {
    return result.scaled.flat().filter((value) => value !== -Infinity).length;
  }

  function describeWith(result) {
    return (i, j) => (result.scaled[i][j] === -Infinity
      ? 'not computed: outside the pattern, so its weight is 0'
      : `computed; after the row softmax its weight is ${formatNumber(result.weights[i][j])}`);
  }

  function vectorCell(values) {
    const td = make('td');
    td.append(doc.createTextNode('['));
    values.forEach((value, i) => {
      if (i > 0) td.append(doc.createTextNode(', '));
      td.append(numberElement(doc, value));
    });
    td.append(doc.createTextNode(']'));
    return td;
  }

  function draw() {
    const { current } = store;
    const runs = attempt(say, () => ({
      full: engine.scaledDotProduct({ ...inputs }),
      local: engine.scaledDotProduct({ ...inputs, window: current.window }),
      strided: engine.scaledDotProduct({ ...inputs, stride: current.stride }),
      linear: engine.linear({ ...inputs }),
    }));
    if (!runs) return;
    const tokens = numberedTokens(current.T);
    const total = current.T * current.T;
    cards.local.ruleLine.textContent = `keys with |i \u2212 j| \u2264 ${current.window}`;
    cards.strided.ruleLine.textContent = `past keys less than ${current.stride} back, and every ${current.stride}th key before that`;
    for (const id of ['full', 'local', 'strided']) {
      const result = runs[id];
      cards[id].heatmap.update({ values: result.scaled, rowLabels: tokens, colLabels: tokens,
          describe: describeWith(result) });
      cards[id].count.textContent = `computes ${countAllowed(result)} of ${total} query\u2013key scores`;
    }
    const rows = tokens.map((token, i) => {
      const tr = make('tr');
      const th = make('th', '', token);
      th.scope = 'row';
      tr.append(th, vectorCell(runs.full.output[i]), vectorCell(runs.local.output[i]),
          vectorCell(runs.strided.output[i]),
        vectorCell(runs.linear.output[i]));
      return tr;
    });
    outputsTable.replaceChildren(dataTable(make, ['token', 'full', 'local', 'strided', 'linear'], rows));
  }

  // ---- State ----

  function normalise(next) {
    const T = clampInt(next.T, T_MIN, T_MAX, 12);
    return {
      T,
      window: clampInt(next.window, 0, T - 1, 2),
      stride: clampInt(next.stride, 1, T - 1, 4),
      seed: clampInt(next.seed, 0, 2 ** 31, 21),
    };
  }

  function show(current, previous) {
    if (current.T !== previous.T || current.seed !== previous.seed) inputs = inputsFor(current.T, current.seed);
    tSlider.set(current.T);
    windowSlider.setRange(0, current.T - 1);
    windowSlider.set(current.window);
    strideSlider.setRange(1, current.T - 1);
    strideSlider.set(current.stride);
    draw();
  }

  store.setState(state);

  appendClaims(root, presets, 'efficient');
  return {
    getState: store.getState,
    setState: store.setState,
    destroy() {
      longSequences.destroy(); // stops a measurement in progress
      for (const { heatmap } of Object.values(cards)) heatmap.destroy();
      root.remove();
    },
  };
}
