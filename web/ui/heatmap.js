// SVG heatmap of a matrix with token labels on both axes, the viridis scale
// (readable with the common colour-vision deficiencies and in greyscale), a
// legend, and cells that can be hovered or focused (arrow keys move between
// them) to show how their value was computed.

import { builder } from './dom.js';
import { formatNumber, formatScientific, fullPrecision, parseNumber } from './format.js';
import { createHeatmapDownloads } from './export.js';
import { svgElement } from './svg.js';

// viridis at 11 evenly spaced points (matplotlib's table).
const VIRIDIS = ['#440154', '#482475', '#414487', '#355f8d', '#2a788e', '#21918c',
                 '#22a884', '#44bf70', '#7ad151', '#bddf26', '#fde725'];
const CELL = 46;
// Heatmaps up to this many columns print each cell's value.
const NUMBERED_COLUMNS = 12;
// Labels are 12 px where the grid is drawn at its own size; a grid scaled
// down to fit its box draws them larger in its own units, so that on screen
// none is smaller than MIN_LABEL_PX.
const LABEL_SIZE = 12;
const MIN_LABEL_PX = 11;
// Cells' values are 13 px at the grid's own size and, scaled down, never
// smaller than the labels; where they would then be too wide for their
// cell they are left out (each cell's label and detail line still give it).
const VALUE_SIZE = 13;
const VALUE_CHAR = 0.62; // a monospace digit's width, in value sizes
const LABEL_CHAR = 0.7; // a generous width per character, in label sizes
const MAX_LABEL_CHARS = 10;
let instances = 0;

function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}
const VIRIDIS_RGB = VIRIDIS.map(hexToRgb);

// The channels of viridis at t in [0, 1] (anything else counts as its
// nearest end, NaN as 0).
function viridisChannels(t) {
  const clamped = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0));
  const position = clamped * (VIRIDIS.length - 1);
  const low = Math.floor(position);
  const high = Math.min(VIRIDIS.length - 1, low + 1);
  const f = position - low;
  const a = VIRIDIS_RGB[low];
  const b = VIRIDIS_RGB[high];
  return [0, 1, 2].map((i) => Math.round(a[i] + (b[i] - a[i]) * f));
}

/** Colour for t in [0, 1] on the viridis scale. */
export function viridis(t) {
  return `rgb(${viridisChannels(t).join(',')})`;
}

// WCAG relative luminance of 8-bit channels.
function luminance([r, g, b]) {
  const channel = (c) => {
    const x = c / 255;
    return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

// Black or white, whichever stands out more from the cell's colour: one of
// them always reaches 4.58:1 (black on luminance L gives (L + 0.05) / 0.05,
// white 1.05 / (L + 0.05); they meet at L = 0.179).
function textColourFor(t) {
  return luminance(viridisChannels(t)) > 0.179 ? '#000' : '#fff';
}

function shorten(label) {
  return label.length > MAX_LABEL_CHARS ? `${label.slice(0, MAX_LABEL_CHARS - 1)}\u2026` : label;
}


/** Where a value falls in the domain, from 0 to 1; null for a masked one. */
function colourOf(value, [lo, hi]) {
  if (value === -Infinity) return null;
  return hi > lo ? (value - lo) / (hi - lo) : 0.5;
}

/** The colour scale under a heatmap, in legend, with a key for masked cells when there are some. */
function drawLegend(legend, [lo, hi], hasMasked) {
  const make = builder(legend.ownerDocument);
  legend.replaceChildren();
  const bar = make('span', 'aw-legend-bar');
  bar.style.background = `linear-gradient(to right, ${VIRIDIS.join(', ')})`;
  const low = make('span', 'aw-legend-end', formatNumber(lo, 2));
  const high = make('span', 'aw-legend-end', formatNumber(hi, 2));
  legend.append(low, bar, high);
  if (hasMasked) {
    const masked = make('span', 'aw-legend-masked', 'masked (\u2212\u221e)');
    legend.append(masked);
  }
  legend.setAttribute('aria-label', `colour scale from ${formatNumber(lo, 2)} (dark purple) to ${formatNumber(hi, 2)} (yellow)`);
}

/**
 * A heatmap's svg for data's shape, before its cells: its size, the hatching
 * of masked cells (pattern id-masked) and the row and column labels at
 * labelSize. Returns { svg, left, top }: where the cells start.
 */
function gridFrame(doc, id, data, labelSize) {
  const rows = data.values.length;
  const cols = data.values[0].length;
  const charWidth = LABEL_CHAR * labelSize;
  const left = labelSize + charWidth * Math.max(...data.rowLabels.map((l) => shorten(l).length), 1);
  const top = labelSize * 1.85;
  const width = left + cols * CELL + 4;
  const height = top + rows * CELL + 4;
  // Column labels too wide for a cell at this size label every second
  // (third, …) column; each cell's own label still names its column.
  const colChars = Math.max(...data.colLabels.map((l) => shorten(l).length), 1);
  const every = Math.ceil((colChars * charWidth * 0.9 + labelSize * 0.3) / CELL);
  const svg = svgElement(doc, 'svg', {
    viewBox: `0 0 ${width} ${height}`, width, height, class: 'aw-heatmap-grid', role: 'group',
  });
  svg.style.setProperty('--aw-label-size', `${labelSize}px`);
  svg.style.setProperty('--aw-value-size', `${Math.max(VALUE_SIZE, labelSize)}px`);
  // With numbers in its cells it keeps its size and scrolls sideways
  // (the numbers stay readable); without, it shrinks to fit.
  if (cols > NUMBERED_COLUMNS) {
    svg.style.maxWidth = '100%';
    svg.style.height = 'auto';
  }
  const defs = svgElement(doc, 'defs');
  const pattern = svgElement(doc, 'pattern', { id: `${id}-masked`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
  pattern.append(svgElement(doc, 'rect', { width: 6, height: 6, fill: '#e6e6e6' }),
                 svgElement(doc, 'line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#9a9a9a', 'stroke-width': 2 }));
  defs.append(pattern);
  svg.append(defs);

  // A label, shortened, whose tooltip is the whole label.
  const labelAt = (label, x, y, anchor) => {
    const text = svgElement(doc, 'text', { x, y, 'text-anchor': anchor, class: 'aw-heat-label' });
    text.textContent = shorten(label);
    const full = svgElement(doc, 'title');
    full.textContent = label;
    text.append(full);
    svg.append(text);
  };
  data.colLabels.forEach((label, j) => {
    if (j % every === 0) labelAt(label, left + j * CELL + CELL / 2, top - labelSize * 0.55, 'middle');
  });
  data.rowLabels.forEach((label, i) => labelAt(label, left - labelSize / 2, top + i * CELL + CELL / 2 + labelSize * 0.35, 'end'));
  return { svg, left, top };
}

/** Arrow keys move the focus (and the one tab stop) between a grid's cells. */
function moveInGrid(event, cells, i, j) {
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  const move = moves[event.key];
  if (!move) return;
  event.preventDefault();
  const ni = Math.min(Math.max(0, i + move[0]), cells.length - 1);
  const nj = Math.min(Math.max(0, j + move[1]), cells[0].length - 1);
  cells[i][j].setAttribute('tabindex', '-1');
  cells[ni][nj].setAttribute('tabindex', '0');
  cells[ni][nj].focus();
}

/** A heatmap's figure: its title, the grid's holder, the legend and the line
 * for a cell's detail (detailElement, if shared). */
function heatmapFigure(doc, title, detailElement) {
  const make = builder(doc);
  const figure = make('figure', 'aw-heatmap');
  const caption = make('figcaption', 'aw-heatmap-title', title);
  const holder = make('div', 'aw-heatmap-svg');
  const legend = make('div', 'aw-legend');
  // Several heatmaps may share one line for the hovered cell's computation.
  const detail = detailElement ?? make('p');
  detail.classList.add('aw-heatmap-detail');
  detail.setAttribute('aria-live', 'polite');
  figure.append(caption, holder, legend);
  if (!detailElement) figure.append(detail);
  return { figure, caption, holder, legend, detail };
}

/**
 * createHeatmap(root, { title, name, rowAxis?, colAxis?, detailElement? })
 *   -> { update(data), setTitle(text), setHighlight(cells, future?), destroy() }
 * data: { values [rows][cols], rowLabels, colLabels, domain? [lo, hi],
 *         describe(i, j) -> string (how the cell was computed) }
 */
export function createHeatmap(root, { title, name = title, rowAxis = 'query', colAxis = 'key', detailElement = null }) {
  const doc = root.ownerDocument;
  const id = `aw-heat-${++instances}`;
  const { figure, caption, holder, legend, detail } = heatmapFigure(doc, title, detailElement);
  const downloads = createHeatmapDownloads(figure, { getSvg: () => holder.querySelector('svg'), getTitle: () => title });
  root.append(figure);

  let data = null;
  let cells = [];
  // What each cell shows ({ fill, textFill, text, value, hl, future, said }),
  // so that an edit or a new highlight touches only the cells it changes:
  // a step redraws its heatmaps two or three times.
  let shown = [];
  let focusIndex = [0, 0];
  let highlighted = new Set();
  let hidden = () => false;

  // A cell's label (aria-label and tooltip) names it and its value; how it
  // was computed (describe, which may ask the engine for the step's
  // equations) is written to the live detail line when it is hovered or
  // focused, so that drawing a grid asks for none of it.
  // Rounded as the page shows numbers, then the exact value where rounding
  // changed it: 0.360 (exactly 0.35956972770293577), but 2, not 2.000.
  function describeCell(i, j) {
    const where = `${name}, ${rowAxis} ${data.rowLabels[i]}, ${colAxis} ${data.colLabels[j]}`;
    const value = data.values[i][j];
    const shown = formatScientific(value);
    const exact = fullPrecision(value);
    return { where, label: `${where} = ${parseNumber(shown) === value || shown === exact ? exact : `${shown} (exactly ${exact})`}` };
  }

  function showDetail(i, j) {
    writeLabel(i, j);
    const cell = describeCell(i, j);
    if (hidden(i, j)) {
      detail.textContent = `${cell.where}: not computed yet`;
      return;
    }
    const how = data.describe ? data.describe(i, j) : '';
    detail.textContent = how ? `${cell.label}. ${how}` : cell.label;
  }

  // The grid's structure (cells, labels) is rebuilt only when the shape or
  // the labels change; an edit's new values are filled into it in place.
  let builtFor = '';

  function draw() {
    if (!data) {
      holder.replaceChildren();
      cells = [];
      shown = [];
      behind.clear();
      builtFor = '';
      return;
    }
    const shape = JSON.stringify([data.values.length, data.values[0].length, data.rowLabels, data.colLabels]);
    if (shape !== builtFor) build();
    builtFor = shape;
    fill();
  }

  // The labels' size in the grid's units: LABEL_SIZE, or larger where the
  // grid is scaled down (see fitLabels).
  let labelSize = LABEL_SIZE;

  function build() {
    holder.replaceChildren();
    cells = [];
    shown = [];
    behind.clear();
    const rows = data.values.length;
    const cols = data.values[0].length;
    const { svg, left, top } = gridFrame(doc, id, data, labelSize);

    for (let i = 0; i < rows; i++) {
      cells.push([]);
      shown.push(Array.from({ length: cols }, () => ({})));
      for (let j = 0; j < cols; j++) {
        const group = svgElement(doc, 'g', { class: 'aw-heat-cell', tabindex: -1, role: 'img', 'data-row': i, 'data-col': j });
        const rect = svgElement(doc, 'rect', {
          x: left + j * CELL + 1, y: top + i * CELL + 1, width: CELL - 2, height: CELL - 2, rx: 3,
        });
        const text = svgElement(doc, 'text', {
          x: left + j * CELL + CELL / 2, y: top + i * CELL + CELL / 2 + 4, 'text-anchor': 'middle', class: 'aw-heat-value',
        });
        group.append(rect, text, svgElement(doc, 'title'));
        group.addEventListener('mouseenter', () => showDetail(i, j));
        group.addEventListener('focus', () => { focusIndex = [i, j]; showDetail(i, j); });
        group.addEventListener('keydown', (event) => moveInGrid(event, cells, i, j));
        svg.append(group);
        cells[i].push(group);
      }
    }
    holder.append(svg);
    resizes.disconnect(); // from the grid this one replaces
    resizes.observe(svg);
    const [fi, fj] = [Math.min(focusIndex[0], rows - 1), Math.min(focusIndex[1], cols - 1)];
    focusIndex = [fi, fj];
    cells[fi][fj].setAttribute('tabindex', '0');
  }

  // The grid's scale on screen (its drawn width over its own) sets the
  // labels' size; a new size redraws the grid, whose scale then moves a
  // little the same way, so this settles at once. The redraw waits for the
  // next frame: made in the observer's callback, it would change the size
  // observed within the frame, a ResizeObserver loop that the browser
  // reports as an error.
  const view = doc.defaultView;
  let frame = 0;
  const resizes = new view.ResizeObserver(() => {
    if (!frame) frame = view.requestAnimationFrame(() => { frame = 0; fitLabels(); });
  });
  function fitLabels() {
    const svg = holder.querySelector('svg');
    const drawn = svg?.getBoundingClientRect().width;
    if (!drawn) return; // not on screen
    const scale = drawn / svg.viewBox.baseVal.width;
    const wanted = Math.max(LABEL_SIZE, Math.ceil((2 * MIN_LABEL_PX) / scale) / 2);
    if (wanted === labelSize) return;
    labelSize = wanted;
    build();
    fill();
  }

  let legendFor = '';

  function put(i, j, key, value, write) {
    if (shown[i][j][key] === value) return;
    shown[i][j][key] = value;
    write(value);
  }

  function fill() {
    const rows = data.values.length;
    const cols = data.values[0].length;
    holder.firstChild.setAttribute('aria-label', `${title}: ${rows} by ${cols}, arrow keys move between cells`);
    const finite = data.values.flat().filter(Number.isFinite);
    const domain = data.domain ?? [Math.min(...finite, 0), Math.max(...finite, 0)];
    cells.forEach((row, i) => row.forEach((group, j) => {
      const value = data.values[i][j];
      const t = colourOf(value, domain);
      const [rect, text] = group.children;
      put(i, j, 'fill', t === null ? `url(#${id}-masked)` : viridis(t), (fill) => rect.setAttribute('fill', fill));
      put(i, j, 'textFill', t === null ? '#111' : textColourFor(t), (fill) => text.setAttribute('fill', fill));
      put(i, j, 'text', cols <= NUMBERED_COLUMNS ? formatNumber(value, t === null ? 3 : 2) : '',
          (digits) => { text.textContent = digits; });
      shown[i][j].value = value;
    }));
    const widest = Math.max(...shown.flat().map((cell) => cell.text.length));
    holder.firstChild.classList.toggle('aw-heat-values-unfit',
        labelSize > LABEL_SIZE && Math.max(VALUE_SIZE, labelSize) * VALUE_CHAR * widest > CELL - 4);
    applyHighlight(); // also rewrites the descriptions whose values changed
    const hasMasked = data.values.flat().some((v) => v === -Infinity);
    const legendKey = JSON.stringify([domain, hasMasked]);
    if (legendKey !== legendFor) drawLegend(legend, domain, hasMasked);
    legendFor = legendKey;
    legendEnds = data.domain ? null : domain;
    revealLegend();
  }

  // The ends of a scale read off the values (not a domain given) are values
  // themselves: an end that only cells not computed yet hold waits for them.
  let legendEnds = null;
  function revealLegend() {
    if (!data) return; // highlighted before any data (a tensor this walkthrough never shows)
    const ends = legendEnds ?? [];
    const known = new Set([0]);
    data.values.forEach((row, i) => row.forEach((value, j) => { if (!hidden(i, j)) known.add(value); }));
    const labels = legend.querySelectorAll('.aw-legend-end');
    const said = ends.map((end, k) => {
      labels[k]?.classList.toggle('aw-legend-pending', !known.has(end));
      return known.has(end) ? formatNumber(end, 2) : 'a value not computed yet';
    });
    if (said.length === 2) legend.setAttribute('aria-label', `colour scale from ${said[0]} (dark purple) to ${said[1]} (yellow)`);
  }

  // A cell's label (aria-label and tooltip) is made again only when what it
  // says may have changed: at once for a new grid's cells, otherwise when
  // the page is idle after the frame (an edit relabels every cell, which
  // its frame need not wait for), or as soon as the cell is hovered or
  // focused.
  const idle = view.requestIdleCallback?.bind(view) ?? ((callback) => view.setTimeout(callback, 50));
  const cancelIdle = view.cancelIdleCallback?.bind(view) ?? view.clearTimeout.bind(view);
  const behind = new Map(); // 'i,j' -> [i, j]
  let labelling = 0;

  function writeLabel(i, j) {
    if (!behind.delete(`${i},${j}`)) return;
    // While some labels are behind, the figure says so (tests wait for it to end).
    if (behind.size === 0) delete figure.dataset.labelling;
    const cell = cells[i][j];
    const future = shown[i][j].said === 'future';
    const label = future ? `${describeCell(i, j).where}: not computed yet` : describeCell(i, j).label;
    cell.setAttribute('aria-label', label);
    cell.querySelector('title').textContent = label;
  }

  function writeLabels() {
    labelling = 0;
    for (const [i, j] of [...behind.values()]) writeLabel(i, j);
  }

  function applyHighlight() {
    cells.forEach((row, i) => row.forEach((cell, j) => {
      put(i, j, 'hl', highlighted.has(`${i},${j}`), (on) => cell.classList.toggle('aw-hl', on));
      // A cell not computed yet shows no value, nor says it.
      const future = hidden(i, j);
      put(i, j, 'future', future, (on) => cell.classList.toggle('aw-heat-future', on));
      const said = future ? 'future' : shown[i][j].value;
      if (Object.is(shown[i][j].said, said)) return;
      const unlabelled = shown[i][j].said === undefined;
      shown[i][j].said = said;
      behind.set(`${i},${j}`, [i, j]);
      if (unlabelled) writeLabel(i, j);
    }));
    if (behind.size > 0) figure.dataset.labelling = '';
    if (behind.size > 0 && !labelling) labelling = idle(writeLabels, { timeout: 500 });
    figure.classList.toggle('aw-has-hl', highlighted.size > 0);
  }

  return {
    element: figure,
    update(next) {
      data = next;
      draw();
    },
    setTitle(text) {
      title = text;
      caption.textContent = text;
      downloads.relabel();
    },
    /** cells: iterable of [i, j] to emphasise; future(i, j): true for a cell not computed yet. */
    setHighlight(list = [], future = () => false) {
      highlighted = new Set(Array.from(list, ([i, j]) => `${i},${j}`));
      hidden = future;
      applyHighlight();
      revealLegend();
    },
    destroy() {
      resizes.disconnect();
      view.cancelAnimationFrame(frame);
      if (labelling) cancelIdle(labelling);
      figure.remove();
    },
  };
}
