// A small line chart that grows as points arrive (training curves, times
// per sequence length): one or more series over a shared x axis, linear
// from 0 (training steps) or doubling (lengths), a linear or logarithmic y
// axis (a tick at every power of ten), and a legend; the SVG and the legend
// are built once and updated in place.
//
//   const chart = createLineChart(root, { title, domain?, log?, format, unit?, x? });
//   chart.update([{ label, dashed, points: [[x, y], ...] }], xMax);
//   chart.mark(x);   a vertical line at x (a replayed step), null for none;
//                    the legend then gives each value at x
//
// x: { label, doubling, from, tick(x), at(x) } names the x axis (default:
// training steps from 0); doubling spaces powers of two evenly from `from`;
// tick(x) labels them; at(x) says where a point is, in the legend and the
// description.

import { builder } from './dom.js';
import { svgElement } from './svg.js';

const WIDTH = 320;
const HEIGHT = 170;
const PAD = { left: 48, right: 10, top: 10, bottom: 30 };
const COLOURS = ['#3b4cc0', '#c0392b', '#1e7b4f', '#8e44ad'];
const STEPS = { label: 'training step', doubling: false, at: (x) => `at step ${x}` };
const LOG_FLOOR = 1e-6;
const MOST_DECADE_LABELS = 7;
const SUPERSCRIPT = { '-': '\u207b', 0: '\u2070', 1: '\u00b9', 2: '\u00b2', 3: '\u00b3', 4: '\u2074', 5: '\u2075', 6: '\u2076', 7: '\u2077', 8: '\u2078', 9: '\u2079' };

/** A power of ten as a tick reads it: 0.001 … 10000 as they are, 10⁻⁵ or 10⁶ beyond. */
function decadeLabel(exponent) {
  return exponent >= -3 && exponent <= 4
    ? String(10 ** exponent)
    : `10${[...String(exponent)].map((c) => SUPERSCRIPT[c]).join('')}`;
}

/** The exponents of the powers of ten from lo to hi, both included when they are powers of ten. */
function decades([lo, hi]) {
  const first = Math.ceil(Math.log10(lo) - 1e-9);
  const last = Math.floor(Math.log10(hi) + 1e-9);
  return Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
}

export function createLineChart(root, { title, domain = null, log = false, format = String, unit = '', x: xAxis = STEPS }) {
  const doc = root.ownerDocument;
  const make = builder(doc);
  const figure = make('figure', 'aw-line-chart');
  const caption = make('figcaption', '', title);
  const svg = svgElement(doc, 'svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'aw-line-chart-svg', role: 'img' });
  const axes = svgElement(doc, 'g', { class: 'aw-chart-axes' });
  const lines = svgElement(doc, 'g');
  const marker = svgElement(doc, 'line', { class: 'aw-chart-marker', y1: PAD.top, y2: HEIGHT - PAD.bottom, visibility: 'hidden' });
  svg.append(axes, lines, marker);
  const legend = make('p', 'aw-chart-legend');
  figure.append(caption, svg, legend);
  root.append(figure);

  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const yOf = (value, [lo, hi]) => {
    const t = log
      ? (Math.log10(Math.max(value, LOG_FLOOR)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))
      : (value - lo) / (hi - lo);
    return PAD.top + plotHeight * (1 - Math.min(1, Math.max(0, t)));
  };

  function yDomain(series) {
    if (domain) return domain;
    const values = series.flatMap((s) => s.points.map(([, y]) => Math.max(y, LOG_FLOOR)));
    if (values.length === 0) return [0.01, 10];
    const lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
    const hi = 10 ** Math.ceil(Math.log10(Math.max(...values)));
    return [lo, hi > lo ? hi : lo * 10];
  }

  function drawAxes(xRange, yRange) {
    const [, xMax] = xRange;
    axes.replaceChildren();
    const text = (x, y, content, anchor) => {
      const node = svgElement(doc, 'text', { x, y, 'text-anchor': anchor, class: 'aw-chart-tick' });
      node.textContent = content;
      axes.append(node);
    };
    axes.append(svgElement(doc, 'rect', { x: PAD.left, y: PAD.top, width: plotWidth, height: plotHeight, class: 'aw-chart-frame' }));
    // On a log axis, a tick and a faint line at every power of ten (every
    // second one, or third, when there are many), so the eye can count the
    // decades; otherwise (or with fewer than two decades) the two ends.
    const exponents = log ? decades(yRange) : [];
    if (exponents.length >= 2) {
      const every = Math.ceil(exponents.length / MOST_DECADE_LABELS);
      exponents.forEach((exponent, i) => {
        if (i % every !== 0) return;
        const y = yOf(10 ** exponent, yRange);
        axes.append(svgElement(doc, 'line', { x1: PAD.left, x2: PAD.left + plotWidth, y1: y, y2: y, class: 'aw-chart-grid' }));
        text(PAD.left - 4, y + 4, decadeLabel(exponent), 'end');
      });
    } else {
      for (const value of yRange) text(PAD.left - 4, yOf(value, yRange) + 4, format(value), 'end');
    }
    const [xMin] = xRange;
    if (xAxis.doubling) {
      for (let value = xMin; value <= xMax; value *= 2) text(xOf(value, xMin, xMax), HEIGHT - 16, xAxis.tick(value), 'middle');
      text(PAD.left + plotWidth / 2, HEIGHT - 2, xAxis.label, 'middle');
    } else {
      text(PAD.left, HEIGHT - 10, '0', 'start');
      text(WIDTH - PAD.right, HEIGHT - 10, `${xMax} steps`, 'end');
      text(PAD.left + plotWidth / 2, HEIGHT - 10, xAxis.label, 'middle');
    }
  }

  // Where x is across the plot, from xMin (0, or `from` on a doubling axis) to xMax.
  const xOf = (value, xMin, xMax) => PAD.left + plotWidth * (xAxis.doubling
    ? Math.log2(value / xMin) / Math.max(Math.log2(xMax / xMin), 1)
    : value / xMax);

  let drawnFor = '';
  let xRange = null; // set by update
  let marked = null;

  function placeMarker() {
    marker.setAttribute('visibility', marked === null ? 'hidden' : 'visible');
    if (marked === null || !xRange) return;
    const x = xOf(Math.min(marked, xRange[1]), ...xRange).toFixed(1);
    marker.setAttribute('x1', x);
    marker.setAttribute('x2', x);
  }

  let shownSeries = [];

  // The legend and the label give each series' value at the marked x (the
  // last point at or before it), else at its last point.
  function describe() {
    const described = shownSeries.map((s) => {
      const point = marked === null ? s.points.at(-1) : s.points.findLast(([x]) => x <= marked);
      return point ? `${s.label}: ${format(point[1])}${unit} ${xAxis.at(point[0])}` : `${s.label}: ${s.none ?? 'no steps yet'}`;
    });
    svg.setAttribute('aria-label', `${title}. ${described.join('; ')}`);
    while (legend.children.length > shownSeries.length) legend.lastChild.remove();
    shownSeries.forEach((s, k) => {
      let item = legend.children[k];
      if (!item) {
        item = make('span', 'aw-chart-key');
        item.style.setProperty('--key-colour', COLOURS[k % COLOURS.length]);
        legend.append(item);
      }
      item.dataset.dashed = String(Boolean(s.dashed));
      item.textContent = described[k];
    });
  }

  return {
    element: figure,
    update(series, xMax) {
      xRange = [xAxis.doubling ? xAxis.from : 0, xMax];
      const yRange = yDomain(series);
      const key = `${xRange}|${yRange}`;
      if (key !== drawnFor) drawAxes(xRange, yRange);
      drawnFor = key;
      while (lines.children.length > series.length) lines.lastChild.remove();
      series.forEach((s, k) => {
        let line = lines.children[k];
        if (!line) {
          line = svgElement(doc, 'polyline', { fill: 'none', 'stroke-width': 2, stroke: COLOURS[k % COLOURS.length] });
          lines.append(line);
        }
        line.setAttribute('stroke-dasharray', s.dashed ? '5 3' : 'none');
        line.setAttribute('points', s.points.map(([x, y]) => `${xOf(x, ...xRange).toFixed(1)},${yOf(y, yRange).toFixed(1)}`).join(' '));
      });
      placeMarker();
      shownSeries = series;
      describe();
    },
    mark(x) {
      marked = x;
      placeMarker();
      describe();
    },
    destroy() { figure.remove(); },
  };
}
