// The efficient-variants section: full attention next to a local window,
// the strided pattern of the Sparse Transformer and linear attention; which
// query-key cells each one computes (from the engine's masked weights); and,
// on request, the time the engine takes for growing T on this machine:
// full attention grows like T², linear attention like T.
//
//   mount(element, { engine, presets?, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   presets: presets.json, for the tutorials' claims this section shows (none without it)
//   onChange(state) after each change the learner makes
//   state: { T, window, stride, seed }
//
// Every weight and output comes from the engine; the timing measures the
// engine's own calls (sdpaFlat for full attention, linearFlat for linear).

import { appendClaims } from '../ui/claims.js';
import { createHeatmap } from '../ui/heatmap.js';
import { formatNumber, numberElement } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import {
  attempt, button, clampInt, dataTable, normalDraws, numberedTokens, randomMatrix, scrollBox, sectionRoot,
  sectionState, seededRandom, slider, uniformDraws,
} from './sections-common.js';

const T_MIN = 4;
const T_MAX = 16;
const D_K = 4;
const D_V = 2;
const TIMING_SIZES = [128, 256, 512, 1024, 2048];
const TIMING_D = 16;
const TIMING_ROUNDS = 5;
const TIMING_ROUND_MS = 15; // each round repeats the call at least this long
const TIMING_MAX_MS = 1500; // fewer rounds for the slow sizes
const SVG = 'http://www.w3.org/2000/svg';

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
  const view = doc.defaultView;

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

  // Timing
  const timingPanel = make('section', 'aw-panel');
  timingPanel.append(make('h4', '', 'How the cost grows on this machine'),
    make('p', 'aw-small', `Times the engine here in your browser for T = ${TIMING_SIZES.join(', ')} with d_k = d_v = ${TIMING_D}: `
      + 'full scaled dot-product attention against linear attention. The chart shows how much longer each call takes than at '
      + `T = ${TIMING_SIZES[0]}: full attention should follow the T\u00b2 line (four times longer per doubling), linear attention the T line `
      + '(twice as long). The table below the chart gives the milliseconds per call; small sizes are noisy, so run it twice.'));
  const timeButton = button(doc, { label: 'Measure on this machine', onClick: () => runTiming() });
  const progress = make('p', 'aw-timing-progress');
  progress.setAttribute('aria-live', 'polite');
  const chart = make('div', 'aw-timing-chart');
  const timingTable = scrollBox(make, 'aw-table-scroll', 'Times per call');
  const key = make('div', 'aw-hist-key');
  for (const [cls, label] of [['aw-full', 'full attention (sdpaFlat)'], ['aw-linear', 'linear attention (linearFlat)'], ['aw-ideal', 'ideal growth']]) {
    const item = make('span');
    item.append(make('span', `aw-key-swatch ${cls}`), doc.createTextNode(label));
    key.append(item);
  }
  key.hidden = true; // until there is a chart to explain
  timingPanel.append(timeButton, progress, key, chart, timingTable);
  root.append(timingPanel);

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
      cards[id].heatmap.update({ values: result.scaled, rowLabels: tokens, colLabels: tokens, describe: describeWith(result) });
      cards[id].count.textContent = `computes ${countAllowed(result)} of ${total} query\u2013key scores`;
    }
    const rows = tokens.map((token, i) => {
      const tr = make('tr');
      const th = make('th', '', token);
      th.scope = 'row';
      tr.append(th, vectorCell(runs.full.output[i]), vectorCell(runs.local.output[i]), vectorCell(runs.strided.output[i]),
        vectorCell(runs.linear.output[i]));
      return tr;
    });
    outputsTable.replaceChildren(dataTable(make, ['token', 'full', 'local', 'strided', 'linear'], rows));
  }

  // ---- Timing ----
  let timingRun = 0; // bumped to cancel a running measurement
  const pause = () => new Promise((resolve) => view.setTimeout(resolve, 0));

  // The fastest of a few rounds, each repeating the call for a moment: the
  // minimum is the least disturbed by whatever else the machine is doing.
  function timeCall(call) {
    const clock = view.performance;
    const started = clock.now();
    let best = Infinity;
    for (let round = 0; round < TIMING_ROUNDS; round++) {
      let runs = 0;
      const start = clock.now();
      let elapsed = 0;
      do {
        call();
        runs += 1;
        elapsed = clock.now() - start;
      } while (elapsed < TIMING_ROUND_MS);
      best = Math.min(best, elapsed / runs);
      if (clock.now() - started > TIMING_MAX_MS) break;
    }
    return best;
  }

  async function runTiming() {
    const run = ++timingRun;
    timeButton.disabled = true;
    const rows = [];
    try {
      for (const T of TIMING_SIZES) {
        progress.textContent = `Measuring T = ${T}\u2026`;
        await pause();
        if (run !== timingRun) return;
        const draw = uniformDraws(seededRandom(T));
        const flat = () => Float64Array.from({ length: T * TIMING_D }, draw);
        const q = flat();
        const k = flat();
        const v = flat();
        const sizes = { q, k, v, nQ: T, nK: T, dK: TIMING_D, dV: TIMING_D };
        const full = timeCall(() => engine.sdpaFlat(sizes));
        await pause();
        if (run !== timingRun) return;
        const linear = timeCall(() => engine.linearFlat(sizes));
        rows.push({ T, full, linear });
        drawTiming(rows);
      }
      progress.textContent = 'Done. Run it again to see how much the times vary.';
    } catch (error) {
      progress.textContent = `The measurement stopped: ${error.message}`;
    } finally {
      if (run === timingRun) timeButton.disabled = false;
    }
  }

  const ms = (value) => (value >= 10 ? value.toFixed(0) : value >= 1 ? value.toFixed(1) : value.toFixed(3));
  const factor = (value) => (value >= 10 ? value.toFixed(0) : value.toFixed(1));

  // Growth chart: each method's time divided by its own time at the smallest
  // T, on doubling axes, next to the ideal T and T² lines.
  function drawTiming(rows) {
    const W = 440;
    const H = 260;
    const pad = { left: 44, right: 62, top: 14, bottom: 40 };
    const plotW = W - pad.left - pad.right;
    const plotH = H - pad.top - pad.bottom;
    const steps = TIMING_SIZES.length - 1;
    const topLog = 2 * steps; // T² grows by 4^steps
    const x = (i) => pad.left + (i / steps) * plotW;
    const y = (growth) => pad.top + plotH - (Math.min(Math.max(Math.log2(growth), 0), topLog) / topLog) * plotH;
    const svg = doc.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'Time relative to T = ' + TIMING_SIZES[0] + ': '
      + rows.map((r) => `T ${r.T}: full \u00d7${factor(r.full / rows[0].full)}, linear \u00d7${factor(r.linear / rows[0].linear)}`).join('; '));
    const add = (name, attributes, text) => {
      const node = doc.createElementNS(SVG, name);
      for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
      if (text !== undefined) node.textContent = text;
      svg.append(node);
      return node;
    };
    for (let e = 0; e <= topLog; e += 2) {
      add('line', { x1: pad.left, x2: pad.left + plotW, y1: y(2 ** e), y2: y(2 ** e), class: 'aw-timing-grid' });
      add('text', { x: pad.left - 6, y: y(2 ** e) + 4, 'text-anchor': 'end', class: 'aw-hist-tick' }, `\u00d7${2 ** e}`);
    }
    TIMING_SIZES.forEach((T, i) => add('text', { x: x(i), y: H - 20, 'text-anchor': 'middle', class: 'aw-hist-tick' }, String(T)));
    add('text', { x: pad.left + plotW / 2, y: H - 4, 'text-anchor': 'middle', class: 'aw-hist-tick' }, 'T (tokens)');
    // Ideal growth: \u00d74 per doubling for T\u00b2, \u00d72 for T.
    add('line', { x1: x(0), y1: y(1), x2: x(steps), y2: y(4 ** steps), class: 'aw-timing-ideal' });
    add('text', { x: x(steps) + 6, y: y(4 ** steps) + 4, class: 'aw-hist-tick' }, 'ideal T\u00b2');
    add('line', { x1: x(0), y1: y(1), x2: x(steps), y2: y(2 ** steps), class: 'aw-timing-ideal' });
    add('text', { x: x(steps) + 6, y: y(2 ** steps) + 4, class: 'aw-hist-tick' }, 'ideal T');
    for (const [key, cls] of [['full', 'aw-timing-full'], ['linear', 'aw-timing-linear']]) {
      const growth = rows.map((r) => r[key] / rows[0][key]);
      add('polyline', { points: growth.map((g, i) => `${x(i)},${y(g)}`).join(' '), class: `aw-timing-line ${cls}` });
      growth.forEach((g, i) => add('circle', { cx: x(i), cy: y(g), r: 4, class: cls }));
    }
    chart.replaceChildren(svg);
    key.hidden = false;

    const tableRows = rows.map((r, i) => {
      const tr = make('tr');
      tr.dataset.t = String(r.T);
      const th = make('th', '', String(r.T));
      th.scope = 'row';
      const ratio = (key) => (i === 0 ? '' : `\u00d7${(r[key] / rows[i - 1][key]).toFixed(1)}`);
      tr.append(th, make('td', '', ms(r.full)), make('td', '', ratio('full')), make('td', '', ms(r.linear)), make('td', '', ratio('linear')));
      return tr;
    });
    timingTable.replaceChildren(dataTable(make,
      ['T', 'full: ms per call', 'full: \u00d7 previous', 'linear: ms per call', 'linear: \u00d7 previous'], tableRows));
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
      timingRun += 1; // stops a measurement in progress
      for (const { heatmap } of Object.values(cards)) heatmap.destroy();
      root.remove();
    },
  };
}
