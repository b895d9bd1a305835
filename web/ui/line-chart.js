// A small line chart that grows as points arrive (training curves): one or
// more series over a shared x axis, a linear or logarithmic y axis, and a
// legend; the SVG is built once and its lines are updated in place.
//
//   const chart = createLineChart(root, { title, domain?, log?, format });
//   chart.update([{ label, dashed, points: [[x, y], ...] }], xMax);

import { svgElement } from './svg.js';

const WIDTH = 320;
const HEIGHT = 170;
const PAD = { left: 48, right: 10, top: 10, bottom: 30 };
const COLOURS = ['#3b4cc0', '#c0392b'];
const LOG_FLOOR = 1e-6;

export function createLineChart(root, { title, domain = null, log = false, format = String }) {
  const doc = root.ownerDocument;
  const figure = doc.createElement('figure');
  figure.className = 'aw-line-chart';
  const caption = doc.createElement('figcaption');
  caption.textContent = title;
  const svg = svgElement(doc, 'svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'aw-line-chart-svg', role: 'img' });
  const axes = svgElement(doc, 'g', { class: 'aw-chart-axes' });
  const lines = svgElement(doc, 'g');
  svg.append(axes, lines);
  const legend = doc.createElement('p');
  legend.className = 'aw-chart-legend';
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

  function drawAxes(xMax, yRange) {
    axes.replaceChildren();
    const text = (x, y, content, anchor) => {
      const node = svgElement(doc, 'text', { x, y, 'text-anchor': anchor, class: 'aw-chart-tick' });
      node.textContent = content;
      axes.append(node);
    };
    axes.append(svgElement(doc, 'rect', { x: PAD.left, y: PAD.top, width: plotWidth, height: plotHeight, class: 'aw-chart-frame' }));
    for (const value of yRange) text(PAD.left - 4, yOf(value, yRange) + 4, format(value), 'end');
    text(PAD.left, HEIGHT - 10, '0', 'start');
    text(WIDTH - PAD.right, HEIGHT - 10, `${xMax} steps`, 'end');
    text(PAD.left + plotWidth / 2, HEIGHT - 10, 'training step', 'middle');
  }

  let drawnFor = '';

  return {
    element: figure,
    update(series, budget) {
      const last = Math.max(0, ...series.flatMap((s) => s.points.map(([x]) => x)));
      const xMax = Math.max(budget, Math.ceil(last / budget) * budget);
      const yRange = yDomain(series);
      const key = `${xMax}|${yRange}`;
      if (key !== drawnFor) drawAxes(xMax, yRange);
      drawnFor = key;
      while (lines.children.length > series.length) lines.lastChild.remove();
      series.forEach((s, k) => {
        let line = lines.children[k];
        if (!line) {
          line = svgElement(doc, 'polyline', { fill: 'none', 'stroke-width': 2, stroke: COLOURS[k % COLOURS.length] });
          lines.append(line);
        }
        line.setAttribute('stroke-dasharray', s.dashed ? '5 3' : 'none');
        line.setAttribute('points', s.points.map(([x, y]) => `${(PAD.left + (plotWidth * x) / xMax).toFixed(1)},${yOf(y, yRange).toFixed(1)}`).join(' '));
      });
      const described = series.map((s) => {
        const point = s.points.at(-1);
        return point ? `${s.label}: ${format(point[1])} at step ${point[0]}` : `${s.label}: no steps yet`;
      });
      svg.setAttribute('aria-label', `${title}. ${described.join('; ')}`);
      legend.replaceChildren(...series.map((s, k) => {
        const item = doc.createElement('span');
        item.className = 'aw-chart-key';
        item.style.setProperty('--key-colour', COLOURS[k % COLOURS.length]);
        item.dataset.dashed = String(Boolean(s.dashed));
        item.textContent = described[k];
        return item;
      }));
    },
    destroy() { figure.remove(); },
  };
}
