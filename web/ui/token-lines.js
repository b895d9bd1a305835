// Attention drawn as lines between tokens: the queries in a column on the
// left, the keys on the right, and from each query a line to each key whose
// width and opacity are its weight, so where every token looks shows at a
// glance. Hovering a query or a key keeps only its lines. It draws the
// numbers it is given and computes none; the DOM is updated in place (the
// SVG is rebuilt only when the tokens change).
//
//   const lines = mount(element, { title?, note? }) -> { element, update(tokens, weights), destroy() }
//   note: false leaves out the line that says how to read the figure
//   tokens: one list of labels (self-attention) or { queries, keys }
//   weights: [query][key] numbers in [0, 1], or null for a weight that is
//            not computed yet (no line); weights = null hides the figure

import { builder } from './dom.js';
import { formatNumber } from './format.js';
import { svgElement } from './svg.js';

const ROW = 26;
const TOP = 24;
const LABEL_WIDTH = 92;
const GAP = 110; // between the two columns of labels
const WIDTH = 2 * LABEL_WIDTH + GAP;
const MAX_LABEL_CHARS = 11;
/** A line's width in SVG units for a weight of 1 (it is this times the weight). */
export const LINE_WIDTH_PER_WEIGHT = 8;

const shorten = (label) => (label.length > MAX_LABEL_CHARS ? `${label.slice(0, MAX_LABEL_CHARS - 1)}\u2026` : label);


export function mount(element, { title = 'Attention as lines', note: withNote = true } = {}) {
  const doc = element.ownerDocument;
  // A box around the figure, so that it is not one more <figure> among the
  // heatmaps beside it (pages and tests name the last heatmap by its type).
  const make = builder(doc);
  const box = make('div', 'aw-token-lines');
  const figure = make('figure', 'aw-token-lines-figure');
  box.append(figure);
  figure.append(make('figcaption', 'aw-heatmap-title', title));
  if (withNote) {
    figure.append(make('p', 'aw-token-lines-note',
      'Each line is one weight: the thicker and darker, the larger. Hover a token for its lines alone.'));
  }
  element.append(box);

  let svg = null;
  let shape = ''; // the tokens the SVG was built for
  let lines = []; // [query][key] -> <line>
  let labels = { queries: [], keys: [] };

  const rowY = (i) => TOP + i * ROW + ROW / 2;

  function build(queries, keys) {
    svg?.remove();
    const height = TOP + Math.max(queries.length, keys.length) * ROW + 4;
    svg = svgElement(doc, 'svg', { viewBox: `0 0 ${WIDTH} ${height}`, width: WIDTH, height, class: 'aw-token-lines-svg', role: 'img' });
    const heading = (x, anchor, text) => {
      const node = svgElement(doc, 'text', { x, y: 12, 'text-anchor': anchor, class: 'aw-token-lines-axis' });
      node.textContent = text;
      svg.append(node);
    };
    heading(LABEL_WIDTH - 6, 'end', 'queries');
    heading(LABEL_WIDTH + GAP + 6, 'start', 'keys');
    const group = svgElement(doc, 'g', { class: 'aw-token-lines-lines' });
    svg.append(group);
    lines = queries.map((_, i) => keys.map((__, j) => {
      const line = svgElement(doc, 'line', {
        x1: LABEL_WIDTH, y1: rowY(i), x2: LABEL_WIDTH + GAP, y2: rowY(j), class: 'aw-token-line', 'data-row': i, 'data-col': j,
      });
      line.append(svgElement(doc, 'title'));
      group.append(line);
      return line;
    }));
    const label = (text, i, side) => {
      const node = svgElement(doc, 'text', {
        x: side === 'query' ? LABEL_WIDTH - 6 : LABEL_WIDTH + GAP + 6, y: rowY(i) + 4,
        'text-anchor': side === 'query' ? 'end' : 'start', class: `aw-token-lines-label aw-token-lines-${side}`,
      });
      node.textContent = shorten(text);
      const full = svgElement(doc, 'title');
      full.textContent = text;
      node.append(full);
      node.addEventListener('pointerenter', () => only(side, i));
      node.addEventListener('pointerleave', () => only(null));
      svg.append(node);
    };
    queries.forEach((text, i) => label(text, i, 'query'));
    keys.forEach((text, j) => label(text, j, 'key'));
    figure.append(svg);
  }

  /** Keeps the lines of one query or key (side null: all of them). */
  function only(side, index) {
    svg.classList.toggle('aw-token-lines-one', side !== null);
    lines.forEach((row, i) => row.forEach((line, j) => {
      line.classList.toggle('aw-token-line-on', side === 'query' ? i === index : side === 'key' && j === index);
    }));
  }

  /** One sentence per query: the key it weighs most. */
  function summary(queries, keys, weights) {
    const parts = [];
    weights.forEach((row, i) => {
      let best = -1;
      row.forEach((weight, j) => { if (weight !== null && (best < 0 || weight > row[best])) best = j; });
      if (best >= 0) parts.push(`${queries[i]} weighs ${keys[best]} most (${formatNumber(row[best])})`);
    });
    return parts.length ? `${title}: ${parts.join('; ')}.` : `${title}: no weights computed yet.`;
  }

  return {
    element: box,
    update(tokens, weights) {
      box.hidden = !weights;
      if (!weights) return;
      const queries = Array.isArray(tokens) ? tokens : tokens.queries;
      const keys = Array.isArray(tokens) ? tokens : tokens.keys;
      const nextShape = JSON.stringify([queries, keys]);
      if (nextShape !== shape) {
        shape = nextShape;
        labels = { queries, keys };
        build(queries, keys);
      }
      lines.forEach((row, i) => row.forEach((line, j) => {
        const weight = weights[i]?.[j] ?? null;
        const shown = weight !== null && Number.isFinite(weight);
        line.setAttribute('stroke-width', shown ? String(LINE_WIDTH_PER_WEIGHT * weight) : '0');
        line.setAttribute('stroke-opacity', shown ? String(weight) : '0');
        line.dataset.weight = shown ? String(weight) : '';
        line.firstChild.textContent = shown ? `${labels.queries[i]} \u2192 ${labels.keys[j]}: ${formatNumber(weight)}` : '';
      }));
      svg.setAttribute('aria-label', summary(labels.queries, labels.keys, weights.map((row) => row.map((w) => (Number.isFinite(w) ? w : null)))));
    },
    destroy() { box.remove(); },
  };
}
