// "Why scale, measured", a part of the √d_k section (scaling.js): for random
// queries and keys of width d_k = 1, 2, 4, …, 1024 the engine runs scaled
// dot-product attention backward from a fixed unit-norm dO, once with the
// scale 1/√d_k and once without, and a log-scale chart shows the size of
// the gradient that reaches the softmax's input (the engine's gradScaled)
// as d_k grows, next to the tutorials that say it vanishes unscaled.
//
//   createGradientPlot(parent, { engine, say }) -> { update({ dk, seed }) }
//   gradientInputsFor(dk, seed) -> the problem's inputs (exported for the tests)

import { formatScientific, fullPrecision, powerOfTen } from '../ui/format.js';
import { svgElement } from '../ui/svg.js';
import { tutorialName } from '../presets.js';
import { builder } from '../ui/dom.js';
import { attempt, normalDraws, randomMatrix, seededRandom } from './sections-common.js';

export const GRADIENT_DKS = Array.from({ length: 11 }, (_, i) => 2 ** i); // 1 … 1024
const QUERIES = 15; // each a draw of its own; odd, so the median is one of them
const KEYS = 8;
const D_V = 4;

const SERIES = [
  { name: 'scaled', scale: true, label: 'with 1/\u221ad_k', className: 'aw-scaled' },
  { name: 'unscaled', scale: false, label: 'without scaling', className: 'aw-unscaled' },
];

// The tutorials' claim, in their words.
const CLAIMS = [
  { file: '000_b7d974f2dfb97227.txt', quote: 'Forgetting to scale: Leads to vanishing gradients' },
  { file: '002_78f5ec663b52750d.txt', quote: 'prevents dot products from becoming too large, which would cause softmax saturation and vanishing gradients' },
  { file: '003_276ef66dffc1cb2c.txt', quote: 'Softmax saturates (gradients vanish)' },
];

/**
 * The inputs at one width: QUERIES standard normal queries and KEYS keys
 * of width dk, and v and dO drawn once per seed, the same at every width,
 * each row of dO scaled to length 1 (so each query's dS is its answer to a
 * unit dO).
 */
export function gradientInputsFor(dk, seed) {
  const fixed = normalDraws(seededRandom(seed));
  const v = randomMatrix(fixed, KEYS, D_V, null);
  // An input, not a result: each row divided by its length.
  const gradOutput = randomMatrix(fixed, QUERIES, D_V, null).map((row) => row.map((x) => x / Math.hypot(...row)));
  const draw = normalDraws(seededRandom(seed * 2048 + dk));
  return { q: randomMatrix(draw, QUERIES, dk, null), k: randomMatrix(draw, KEYS, dk, null), v, gradOutput };
}

/**
 * What one run plots: each query's ‖dS‖, the length of its row of the
 * engine's gradScaled (the one reduction the page does on the gradient),
 * and the middle one of them (a selection, no arithmetic).
 */
function typicalNorm(gradScaled) {
  const norms = gradScaled.map((row) => Math.hypot(...row)).sort((a, b) => a - b);
  return norms[(norms.length - 1) / 2];
}

/**
 * The chart's frame for a figure `width` px wide: drawn at its own size
 * (one unit a pixel) up to 560, so that its 11 px labels are 11 px on a
 * phone too, where a fixed 560 would draw them at half that. Narrow, every
 * other d_k is labelled.
 */
function geometry(width) {
  const W = Math.round(Math.min(560, Math.max(280, width || 560)));
  const narrow = W < 420;
  const H = narrow ? 230 : 270;
  const PAD = narrow ? { left: 56, right: 14, top: 14, bottom: 42 } : { left: 68, right: 24, top: 18, bottom: 46 };
  const PLOT_W = W - PAD.left - PAD.right;
  const PLOT_H = H - PAD.top - PAD.bottom;
  const xOf = (index) => PAD.left + (index / (GRADIENT_DKS.length - 1)) * PLOT_W;
  return { W, H, PAD, PLOT_W, PLOT_H, xOf, labelled: (index) => !narrow || index % 2 === 0 };
}

/** The panel's title, what it measures, the tutorial's claim it checks and the key to the lines. */
function explanation(make, panel) {
  const doc = panel.ownerDocument;
  panel.append(make('h4', '', 'Why scale, measured: the gradient through the softmax'));
  panel.append(make('p', 'aw-small',
    `At each width d_k the engine runs ${QUERIES} random queries against ${KEYS} random keys (standard normal entries, seeded) `
    + 'backward from a fixed dO, one row of length 1 per query, and reports dS, the gradient of the loss with respect to the '
    + 'softmax\u2019s input. The chart shows the size \u2016dS\u2016 of a typical query\u2019s row (the median of the '
    + `${QUERIES}) with the scale 1/\u221ad_k and without it.`));
  const claims = make('div', 'aw-grad-claims');
  claims.append(make('p', 'aw-small', 'The claim this checks:'));
  const list = make('ul', 'aw-small');
  for (const { file, quote } of CLAIMS) {
    const item = make('li');
    item.append(make('q', '', quote), doc.createTextNode(` (${tutorialName(file)})`));
    list.append(item);
  }
  claims.append(list);
  const key = make('div', 'aw-hist-key');
  for (const series of SERIES) {
    const entry = make('span');
    entry.append(make('span', `aw-key-swatch ${series.className}`), doc.createTextNode(`\u2016dS\u2016 ${series.label}`));
    key.append(entry);
  }
  return { claims, key };
}

/** The chart's svg with its axes, d_k ticks and titles: { svg, grid (for the y ticks), chosen (the slider's line) }. */
function chartFrame(doc, { W, H, PAD, PLOT_W, PLOT_H, xOf, labelled }) {
  const svg = svgElement(doc, 'svg', { viewBox: `0 0 ${W} ${H}`, role: 'group', class: 'aw-grad-chart' });
  const grid = svgElement(doc, 'g');
  svg.append(grid);
  svg.append(svgElement(doc, 'line', { x1: PAD.left, y1: PAD.top + PLOT_H, x2: PAD.left + PLOT_W, y2: PAD.top + PLOT_H, class: 'aw-hist-axis' }));
  svg.append(svgElement(doc, 'line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: PAD.top + PLOT_H, class: 'aw-hist-axis' }));
  GRADIENT_DKS.forEach((dk, index) => {
    if (!labelled(index)) return;
    const tick = svgElement(doc, 'text', { x: xOf(index), y: PAD.top + PLOT_H + 16, 'text-anchor': 'middle', class: 'aw-hist-tick' });
    tick.textContent = String(dk);
    svg.append(tick);
  });
  const xTitle = svgElement(doc, 'text', { x: PAD.left + PLOT_W / 2, y: H - 6, 'text-anchor': 'middle', class: 'aw-hist-tick' });
  xTitle.textContent = 'd_k (each step doubles it)';
  const yTitle = svgElement(doc, 'text', { x: 12, y: PAD.top + PLOT_H / 2, 'text-anchor': 'middle', class: 'aw-hist-tick', transform: `rotate(-90 12 ${PAD.top + PLOT_H / 2})` });
  yTitle.textContent = '\u2016dS\u2016 (log scale)';
  const chosen = svgElement(doc, 'line', { y1: PAD.top, y2: PAD.top + PLOT_H, class: 'aw-grad-chosen' });
  svg.append(xTitle, yTitle, chosen);
  return { svg, grid, chosen };
}

export function createGradientPlot(parent, { engine, say }) {
  const doc = parent.ownerDocument;
  const make = builder(doc);
  const panel = make('section', 'aw-panel aw-grad-panel');
  const { claims, key } = explanation(make, panel);
  const figure = make('figure', 'aw-hist aw-grad-figure');
  const caption = make('figcaption', 'aw-small');
  const detail = make('p', 'aw-heatmap-detail');
  detail.setAttribute('aria-live', 'polite');
  const verdict = make('p', 'aw-grad-verdict');
  panel.append(claims, key, figure, detail, verdict);
  parent.append(panel);

  const frame = geometry(figure.clientWidth);
  const { PAD, PLOT_W, PLOT_H, xOf } = frame;
  const { svg, grid, chosen } = chartFrame(doc, frame);

  // Each series: a line and a point per width, focusable; arrow keys move
  // along a line (left, right) and between the lines (up, down).
  const points = SERIES.map((series, s) => {
    const line = svgElement(doc, 'polyline', { class: `aw-grad-line ${series.className}` });
    svg.append(line);
    return {
      line,
      marks: GRADIENT_DKS.map((dk, index) => {
        const mark = svgElement(doc, 'g', {
          class: `aw-grad-point ${series.className}`, role: 'img', tabindex: s === 0 && index === 0 ? 0 : -1,
          'data-series': series.name, 'data-dk': dk,
        });
        mark.append(svgElement(doc, 'circle', { r: 5 }), svgElement(doc, 'title'));
        mark.addEventListener('mouseenter', () => { detail.textContent = mark.getAttribute('aria-label'); });
        mark.addEventListener('focus', () => { detail.textContent = mark.getAttribute('aria-label'); });
        mark.addEventListener('keydown', (event) => moveFocus(event, s, index));
        return mark;
      }),
    };
  });
  for (const { marks } of points) svg.append(...marks);
  figure.append(svg, caption);

  function moveFocus(event, s, index) {
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    const ns = Math.min(SERIES.length - 1, Math.max(0, s + move[0]));
    const ni = Math.min(GRADIENT_DKS.length - 1, Math.max(0, index + move[1]));
    points[s].marks[index].setAttribute('tabindex', '-1');
    points[ns].marks[ni].setAttribute('tabindex', '0');
    points[ns].marks[ni].focus();
  }

  let measuredSeed = null;
  let norms = null; // norms[series][width]

  function measure(seed) {
    return attempt(say, () => {
      const runs = GRADIENT_DKS.map((dk) => gradientInputsFor(dk, seed));
      return SERIES.map((series) => runs.map((inputs) => typicalNorm(
        engine.run({ kind: 'scaledDotProduct', ...inputs, scale: series.scale }, { results: ['gradScaled'] }).gradScaled)));
    });
  }

  function drawAxis(low, high) {
    grid.replaceChildren();
    for (let exponent = low; exponent <= high; exponent++) {
      const y = PAD.top + ((high - exponent) / (high - low)) * PLOT_H;
      grid.append(svgElement(doc, 'line', { x1: PAD.left, y1: y, x2: PAD.left + PLOT_W, y2: y, class: 'aw-grad-grid' }));
      const label = svgElement(doc, 'text', { x: PAD.left - 6, y: y + 4, 'text-anchor': 'end', class: 'aw-hist-tick' });
      label.textContent = powerOfTen(exponent);
      grid.append(label);
    }
  }

  function drawSeries(low, high) {
    // A norm of exactly 0 has no logarithm: it sits on the bottom axis and says so.
    const yOf = (value) => PAD.top + ((high - Math.max(low, Math.log10(value))) / (high - low)) * PLOT_H;
    SERIES.forEach((series, s) => {
      const coordinates = norms[s].map((value, index) => [xOf(index), yOf(value)]);
      points[s].line.setAttribute('points', coordinates.map(([x, y]) => `${x},${y}`).join(' '));
      points[s].marks.forEach((mark, index) => {
        const [x, y] = coordinates[index];
        const circle = mark.firstChild;
        circle.setAttribute('cx', String(x));
        circle.setAttribute('cy', String(y));
        const value = norms[s][index];
        const label = `\u2016dS\u2016 ${series.label}, d_k = ${GRADIENT_DKS[index]}: ${fullPrecision(value)}`
          + `${value === 0 ? ' (exactly 0, drawn on the bottom axis)' : ''}`;
        mark.setAttribute('aria-label', label);
        mark.lastChild.textContent = label;
        mark.dataset.value = fullPrecision(value);
      });
    });
  }

  function showChosen(dk) {
    const index = GRADIENT_DKS.indexOf(dk);
    chosen.setAttribute('x1', String(xOf(index)));
    chosen.setAttribute('x2', String(xOf(index)));
    for (const { marks } of points) marks.forEach((mark, i) => mark.classList.toggle('aw-grad-current', i === index));
    const [scaled, unscaled] = norms.map((row) => row[index]);
    verdict.replaceChildren(
      doc.createTextNode(`At the slider\u2019s d_k = ${dk}: \u2016dS\u2016 = `),
      make('strong', '', formatScientific(scaled)), doc.createTextNode(' with the scale, '),
      make('strong', '', formatScientific(unscaled)), doc.createTextNode(' without.'),
    );
    svg.setAttribute('aria-label', `Size of the gradient reaching the softmax\u2019s input, d_k from 1 to 1024 on a log scale: `
      + `with 1/\u221ad_k from ${formatScientific(norms[0][0])} to ${formatScientific(norms[0].at(-1))}, `
      + `without scaling from ${formatScientific(norms[1][0])} to ${formatScientific(norms[1].at(-1))}. `
      + 'Arrow keys move between the points.');
  }

  return {
    update({ dk, seed }) {
      if (seed !== measuredSeed) {
        const measured = measure(seed);
        if (!measured) return;
        norms = measured;
        measuredSeed = seed;
        const positive = norms.flat().filter((value) => value > 0);
        if (positive.length === 0) positive.push(1);
        const low = Math.floor(Math.log10(Math.min(...positive)));
        const high = Math.max(low + 1, Math.ceil(Math.log10(Math.max(...positive))));
        drawAxis(low, high);
        drawSeries(low, high);
        caption.textContent = `The median of ${QUERIES} queries per width; new draws with \u201cNew random Q, K\u201d. `
          + 'The vertical line marks the d_k chosen with the slider above. Hover or focus a point for its exact value.';
      }
      showChosen(dk);
    },
  };
}
