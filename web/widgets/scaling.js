// The "why scale by 1/√d_k" section: random queries and keys of a chosen
// width d_k, the spread of their dot products with and without the scale
// (histograms of the engine's scores), how peaked the softmax rows become,
// the size of the gradient through the softmax as d_k grows (measured by
// the engine backward, scaling-gradients.js), and the tutorials'
// saturation examples next to the engine's exact values.
//
//   mount(element, { engine, presets?, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   presets: presets.json, for the tutorials' claims this section shows (none without it)
//   onChange(state) after each change the learner makes
//   state: { dk, seed }
//
// Every attention number comes from the engine; the page only counts them
// into bins and summarises them (spread, largest weight, entropy) for display.

import { appendClaims } from '../ui/claims.js';
import { createHeatmap } from '../ui/heatmap.js';
import { formatNumber, numberElement } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import { tutorialName } from '../presets.js';
import { createGradientPlot } from './scaling-gradients.js';
import {
  attempt, button, clampInt, normalDraws, numberedTokens, randomMatrix, scrollBox, sectionRoot, sectionState,
  seededRandom, slider,
} from './sections-common.js';

const DK_CHOICES = [2, 4, 8, 16, 32, 64, 128, 256, 512];
const N = 16; // queries and keys: 256 scores per histogram
const BINS = 25;
const SVG = 'http://www.w3.org/2000/svg';

// The tutorials' softmax examples, as printed (their inputs and printed
// outputs are facts of the tutorials; the exact values come from the engine).
const EXAMPLES = [
  {
    id: 't001-large-gap', tutorial: '001', title: 'A large gap', x: [100, 1, 1, 1],
    printed: { weights: [1, 0, 0, 0] }, decimals: { weights: [1, 1, 1, 1] },
  },
  {
    id: 't001-small-gap', tutorial: '001', title: 'A small gap', x: [2, 0.5, 0.5, 0.5],
    printed: { weights: [0.5, 0.17, 0.17, 0.17] }, decimals: { weights: [1, 2, 2, 2] },
  },
  {
    id: 't003-unscaled', tutorial: '003', title: 'Unscaled scores', x: [100, 95, 5, 3],
    printed: { weights: [0.88, 0.12, 0, 0] }, decimals: { weights: [2, 2, 0, 0] },
  },
  {
    id: 't003-scaled', tutorial: '003', title: 'The same, divided by √64 = 8', x: [100, 95, 5, 3], scale: 0.125,
    printed: { scaled: [12.5, 11.9, 0.63, 0.38], weights: [0.55, 0.4, 0.02, 0.01] },
    decimals: { scaled: [1, 1, 2, 2], weights: [2, 2, 2, 2] },
  },
  {
    id: 't002-small', tutorial: '002', title: 'Small values', x: [1, 2, 3],
    printed: { weights: [0.09, 0.24, 0.67] }, decimals: { weights: [2, 2, 2] },
  },
  {
    id: 't002-large', tutorial: '002', title: 'Ten times larger', x: [10, 20, 30],
    printed: { weights: [0, 0, 1] }, decimals: { weights: [2, 2, 2] },
  },
  {
    id: 't002-dk64-unscaled', tutorial: '002', title: 'A d_k = 64 score row, unscaled', x: [-15.2, 8.3, -12.1, 18.7],
    printed: { weights: [0, 0, 0, 1] }, decimals: { weights: [2, 2, 2, 2] },
  },
  {
    id: 't002-dk64-scaled', tutorial: '002', title: 'The same row divided by √64 = 8', x: [-15.2, 8.3, -12.1, 18.7], scale: 0.125,
    printed: { scaled: [-1.9, 1, -1.5, 2.3], weights: [0.03, 0.15, 0.04, 0.78] },
    decimals: { scaled: [1, 1, 1, 1], weights: [2, 2, 2, 2] },
  },
];

const TUTORIAL_FILES = {
  '001': '001_172e048406e4f37c.txt', '002': '002_78f5ec663b52750d.txt', '003': '003_276ef66dffc1cb2c.txt',
};

// A printed number as the tutorial wrote it, with a typographic minus.
const printedText = (value, decimals) => value.toFixed(decimals).replace('-', '\u2212');

/** A printed value is wrong when it is farther from the exact one than its rounding allows. */
export function isErratum(printed, exact, decimals) {
  return Math.abs(printed - exact) > 0.5 * 10 ** -decimals + 1e-12;
}

/** The seeded inputs the widget shows (exported for the tests). */
export function inputsFor(dk, seed) {
  const draw = normalDraws(seededRandom(seed));
  // Full doubles: standard normal entries, as in the variance argument.
  return { q: randomMatrix(draw, N, dk, null), k: randomMatrix(draw, N, dk, null), v: randomMatrix(draw, N, 1, 2) };
}

// Display summaries of engine values.
const standardDeviation = (values) => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
};
const meanOf = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const entropyBits = (row) => -row.reduce((sum, w) => (w > 0 ? sum + w * Math.log2(w) : sum), 0);

/** A tutorial's saturation example: its softmax as printed and as the engine computes it, errata marked. */
function exampleCard(doc, make, example, result) {
  const card = make('div', 'aw-example');
  card.dataset.example = example.id;
  const head = make('p', 'aw-arith');
  head.append(make('strong', '', example.title), doc.createTextNode(': softmax of ['));
  example.x.forEach((x, i) => {
    if (i > 0) head.append(doc.createTextNode(', '));
    head.append(numberElement(doc, x, { input: true }));
  });
  head.append(doc.createTextNode(example.scale === undefined ? ']' : `] \u00d7 ${example.scale}`));
  const source = make('span', 'aw-example-source', ` (${tutorialName(TUTORIAL_FILES[example.tutorial])})`);
  head.append(source);
  const tableWrap = scrollBox(make, 'aw-table-scroll', `${example.title}: printed and exact values`);
  const t = make('table', 'aw-table');
  const thead = make('thead');
  const hr = make('tr');
  hr.append(make('th', '', 'Values'));
  example.x.forEach((_, i) => { const th = make('th', '', `entry ${i + 1}`); th.scope = 'col'; hr.append(th); });
  thead.append(hr);
  const tbody = make('tbody');
  let wrong = 0;
  for (const field of ['scaled', 'weights']) {
    if (!example.printed[field]) continue;
    const name = field === 'scaled' ? 'scaled' : 'weights';
    const printedRow = make('tr');
    const ph = make('th', '', `${name}, printed`);
    ph.scope = 'row';
    printedRow.append(ph);
    const exactRow = make('tr');
    const eh = make('th', '', `${name}, engine`);
    eh.scope = 'row';
    exactRow.append(eh);
    example.printed[field].forEach((p, i) => {
      const exact = result[field][i];
      const decimals = example.decimals[field][i];
      const bad = isErratum(p, exact, decimals);
      if (bad) wrong += 1;
      // The mark is a symbol as well as a colour, for readers who cannot tell the colours apart.
      const pc = make('td', bad ? 'aw-bad' : 'aw-good', bad ? `${printedText(p, decimals)} \u2717` : printedText(p, decimals));
      pc.title = bad ? `off by more than the rounding to ${decimals} decimals allows` : 'agrees to its printed decimals';
      if (bad) pc.dataset.erratum = 'true';
      printedRow.append(pc);
      const ec = make('td', 'aw-strong');
      ec.append(numberElement(doc, exact));
      ec.dataset.field = field;
      ec.dataset.index = String(i);
      exactRow.append(ec);
    });
    tbody.append(printedRow, exactRow);
  }
  t.append(thead, tbody);
  tableWrap.append(t);
  const verdict = make('p', 'aw-small', wrong
    ? `${wrong} printed value${wrong > 1 ? 's are' : ' is'} wrong (marked).`
    : 'The printed values agree with the exact ones to their rounding.');
  card.append(head, tableWrap, verdict);
  return card;
}

/** Both sets of scores as one histogram, side by side in each bin. */
function histogram(doc, unscaled, scaled, drawnWidth) {
  const extent = Math.max(...unscaled.map(Math.abs), ...scaled.map(Math.abs), 1e-9);
  const lo = -extent;
  const width = (2 * extent) / BINS;
  const count = (values) => {
    const bins = Array(BINS).fill(0);
    for (const value of values) bins[Math.min(BINS - 1, Math.floor((value - lo) / width))] += 1;
    return bins;
  };
  const a = count(unscaled);
  const b = count(scaled);
  const top = Math.max(...a, ...b);
  // Drawn at its own size up to 560 units, so its 11 px labels stay 11 px on a phone.
  const W = Math.round(Math.min(560, Math.max(280, drawnWidth || 560)));
  const H = W < 420 ? 170 : 200;
  const pad = { left: 36, right: 14, top: 10, bottom: 28 };
  const plotW = W - pad.left - pad.right;
  const plotH = H - pad.top - pad.bottom;
  const svg = doc.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `Histogram of ${unscaled.length} scores from ${formatNumber(lo, 1)} to ${formatNumber(extent, 1)}: `
    + `the unscaled scores spread ${formatNumber(standardDeviation(unscaled), 2)} (standard deviation), `
    + `the scaled ones ${formatNumber(standardDeviation(scaled), 2)}`);
  const rect = (x, y, w, h, cls) => {
    const r = doc.createElementNS(SVG, 'rect');
    for (const [k, v] of Object.entries({ x, y, width: Math.max(0, w), height: Math.max(0, h),
        class: cls })) r.setAttribute(k, String(v));
    svg.append(r);
  };
  const barW = plotW / BINS;
  for (let i = 0; i < BINS; i++) {
    const x = pad.left + i * barW;
    const ha = (a[i] / top) * plotH;
    const hb = (b[i] / top) * plotH;
    rect(x + 1, pad.top + plotH - ha, barW / 2 - 1, ha, 'aw-hist-bar-unscaled');
    rect(x + barW / 2, pad.top + plotH - hb, barW / 2 - 1, hb, 'aw-hist-bar-scaled');
  }
  const line = (x1, y1, x2, y2) => {
    const l = doc.createElementNS(SVG, 'line');
    for (const [k, v] of Object.entries({ x1, y1, x2, y2, class: 'aw-hist-axis' })) l.setAttribute(k, String(v));
    svg.append(l);
  };
  const text = (x, y, content, anchor = 'middle') => {
    const t = doc.createElementNS(SVG, 'text');
    for (const [k, v] of Object.entries({ x, y, 'text-anchor': anchor, class: 'aw-hist-tick' })) t.setAttribute(k, String(v));
    t.textContent = content;
    svg.append(t);
  };
  line(pad.left, pad.top + plotH, pad.left + plotW, pad.top + plotH);
  line(pad.left, pad.top, pad.left, pad.top + plotH);
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const x = pad.left + f * plotW;
    line(x, pad.top + plotH, x, pad.top + plotH + 4);
    text(x, H - 8, formatNumber(lo + f * 2 * extent, extent < 10 ? 1 : 0));
  }
  text(pad.left - 4, pad.top + 10, String(top), 'end');
  text(pad.left - 4, pad.top + plotH, '0', 'end');
  return svg;
}

/** A labelled figure, to `decimals` places, with an optional note. */
function stat(make, label, value, decimals = 2, note = '') {
  const box = make('div', 'aw-stat');
  const doc = box.ownerDocument;
  box.append(make('span', 'aw-stat-label', label));
  const v = make('span', 'aw-stat-value');
  v.append(numberElement(doc, value));
  v.firstChild.textContent = formatNumber(value, decimals);
  box.append(v);
  if (note) box.append(make('span', 'aw-stat-label', note));
  return box;
}

function normalise(next) {
  return {
    dk: DK_CHOICES.includes(Number(next.dk)) ? Number(next.dk) : 64,
    seed: clampInt(next.seed, 0, 2 ** 31, 3),
  };
}

export function mount(element, { engine, presets = null, state = {}, onChange = () => {} }) {
  const { doc, make, root, say } = sectionRoot(element, {
    name: 'scaling',
    title: 'Why divide by \u221ad_k?',
    intro: [
      'A dot product of two d_k-wide vectors adds up d_k products. When the entries are random with variance 1, '
      + 'the sum has variance d_k, so its typical size grows like \u221ad_k. Fed to the softmax unscaled, such large '
      + 'scores make every row nearly one-hot: one key takes all the weight and the gradient to the others almost '
      + 'vanishes. Dividing by \u221ad_k brings the spread back to about 1 whatever the width. Move the slider and watch.',
    ],
  });

  const store = sectionState({ initial: { dk: 64, seed: 3 }, normalise, show, onChange });
  let inputs = inputsFor(store.current.dk, store.current.seed);

  const controls = make('div', 'aw-controls');
  const dkSlider = slider(doc, {
    label: 'd_k', name: 'dk', min: 0, max: DK_CHOICES.length - 1, value: DK_CHOICES.indexOf(store.current.dk),
    format: (index) => String(DK_CHOICES[index]),
    onInput: (index) => store.update({ dk: DK_CHOICES[index] }),
  });
  const reroll = button(doc, { label: 'New random Q, K', onClick: () => store.update({ seed: store.current.seed + 1 }) });
  const sizes = make('span', 'aw-small', `${N} queries and ${N} keys, entries drawn from a standard normal distribution (seeded).`);
  controls.append(dkSlider.element, reroll, sizes);
  root.append(controls);

  // Histograms and statistics
  const histPanel = make('section', 'aw-panel');
  histPanel.append(make('h4', '', 'The spread of the scores'));
  const histKey = make('div', 'aw-hist-key');
  const keyUnscaled = make('span');
  keyUnscaled.append(make('span', 'aw-key-swatch aw-unscaled'), doc.createTextNode('QK\u1d40 (unscaled)'));
  const keyScaled = make('span');
  keyScaled.append(make('span', 'aw-key-swatch aw-scaled'), doc.createTextNode('QK\u1d40 / \u221ad_k (scaled)'));
  histKey.append(keyUnscaled, keyScaled);
  const histBox = make('div', 'aw-hist-box');
  const histFigure = make('figure', 'aw-hist');
  const histCaption = make('figcaption', 'aw-small');
  histFigure.append(histCaption);
  histBox.append(histFigure);
  const stats = make('div', 'aw-stats');
  histPanel.append(histKey, histBox, stats);
  root.append(histPanel);

  // Weights heatmaps
  const peakPanel = make('section', 'aw-panel');
  peakPanel.append(make('h4', '', 'How peaked the softmax rows become'));
  const peakStats = make('div', 'aw-stats');
  const heatBox = make('div', 'aw-heatmaps');
  const heatDetail = make('p', 'aw-heatmap-detail');
  peakPanel.append(peakStats, heatBox, heatDetail);
  root.append(peakPanel);
  const tokens = numberedTokens(N, 'q');
  const keyTokens = numberedTokens(N, 'k');
  const heatUnscaled = createHeatmap(heatBox, { title: 'Weights, softmax(QK\u1d40)', name: 'unscaled weight', detailElement: heatDetail });
  const heatScaled = createHeatmap(heatBox, { title: 'Weights, softmax(QK\u1d40 / \u221ad_k)', name: 'scaled weight', detailElement: heatDetail });

  const gradientPlot = createGradientPlot(root, { engine, say });

  // The tutorials' examples
  const examplesPanel = make('section', 'aw-panel');
  examplesPanel.append(make('h4', '', 'The tutorials\u2019 saturation examples'));
  examplesPanel.append(make('p', 'aw-small', 'Each example as the tutorial printed it and as the engine computes it. '
    + 'A value is marked \u2717 when it is off by more than its printed rounding allows.'));
  const examplesBox = make('div', 'aw-saturation');
  examplesPanel.append(examplesBox);
  examplesPanel.append(mathElement(doc, '\\operatorname{softmax}(x)_i = \\frac{e^{x_i - \\max_j x_j}}{\\sum_k e^{x_k - \\max_j x_j}}', { display: true }));
  root.append(examplesPanel);

  function drawExamples() {
    examplesBox.replaceChildren();
    for (const example of EXAMPLES) {
      const result = attempt(say, () => engine.softmax(example.scale === undefined
        ? { x: example.x } : { x: example.x, scale: example.scale }));
      if (result) examplesBox.append(exampleCard(doc, make, example, result));
    }
  }

  function draw() {
    const { current } = store;
    const runs = attempt(say, () => ({
      scaled: engine.scaledDotProduct({ ...inputs, scale: true }),
      unscaled: engine.scaledDotProduct({ ...inputs, scale: false }),
    }));
    if (!runs) return;
    const raw = runs.scaled.scores.flat();
    const scaled = runs.scaled.scaled.flat();
    histFigure.replaceChildren(histogram(doc, raw, scaled, histFigure.clientWidth), histCaption);
    histCaption.textContent = `All ${raw.length} entries of QK\u1d40 for d_k = ${current.dk}, before and after the engine divides them by \u221a${current.dk}.`;
    stats.replaceChildren(
      stat(make, 'spread of QK\u1d40 (standard deviation)', standardDeviation(raw), 2, `the argument predicts about \u221a${current.dk}`),
      stat(make, 'spread of QK\u1d40 / \u221ad_k', standardDeviation(scaled), 2, 'the argument predicts about 1'),
      stat(make, 'largest |score|, unscaled', Math.max(...raw.map(Math.abs)), 1),
      stat(make, 'unscaled scores outside [\u221224, 24]', raw.filter((x) => Math.abs(x) > 24).length, 0,
        `of ${raw.length}; tutorial 002 says \u201coften\u201d at d_k = 64`),
      stat(make, 'largest |score|, scaled', Math.max(...scaled.map(Math.abs)), 2),
    );
    const wu = runs.unscaled.weights;
    const ws = runs.scaled.weights;
    const maxBits = Math.log2(N);
    peakStats.replaceChildren(
      stat(make, 'average largest weight in a row, unscaled', meanOf(wu.map((row) => Math.max(...row))), 3),
      stat(make, 'average largest weight in a row, scaled', meanOf(ws.map((row) => Math.max(...row))), 3),
      stat(make, 'average entropy of a row, unscaled (bits)', meanOf(wu.map(entropyBits)), 2, `0 = one-hot, ${formatNumber(maxBits, 0)} = uniform`),
      stat(make, 'average entropy of a row, scaled (bits)', meanOf(ws.map(entropyBits)), 2, `0 = one-hot, ${formatNumber(maxBits, 0)} = uniform`),
    );
    const labels = { rowLabels: tokens, colLabels: keyTokens, domain: [0, 1] };
    heatUnscaled.update({ ...labels, values: wu, describe: (i, j) => `unscaled score ${formatNumber(runs.unscaled.scaled[i][j])}` });
    heatScaled.update({ ...labels, values: ws, describe: (i, j) => `score ${formatNumber(runs.scaled.scores[i][j])}, scaled ${formatNumber(runs.scaled.scaled[i][j])}` });
  }

  function show(current, previous) {
    if (current.dk !== previous.dk || current.seed !== previous.seed || !inputs) {
      inputs = inputsFor(current.dk, current.seed);
    }
    dkSlider.set(DK_CHOICES.indexOf(current.dk));
    draw();
    gradientPlot.update(current);
  }

  drawExamples();
  store.setState(state);

  appendClaims(root, presets, 'scaling');
  return {
    getState: store.getState,
    setState: store.setState,
    destroy() {
      heatUnscaled.destroy();
      heatScaled.destroy();
      root.remove();
    },
  };
}
