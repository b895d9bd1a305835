// The walkthrough's closing picture: the last step's summary (its
// `picture`, which walkthrough-steps.js makes from the engine's results).
// One small table per column of the computation, side by side where they
// fit and one under the other where they do not: a softmax's input, the
// weights over the keys, the output row. Every row is named by its query
// token and every column by its key or entry; every cell shows its number
// (three decimals, the full value on hover) over a bar on its table's one
// scale (a weight's on 0 to 1, so a bar is its share of the whole). A
// masked key's weight is hatched; a misprinted cell (options.marked:
// "name,i,j" -> the number printed there) is outlined with the printed
// number struck through under the exact one, and options.markedNote says
// what the outlines mean. Nothing here computes a value: a bar's length is
// a value over the largest its table draws.
//
//   drawSummary(make, picture, { marked?, markedNote? }) -> [nodes]
//   picture: { queries, columns: [{ kind: 'row' | 'weights', name,
//              title, values, labels, input }], masked }

import { numberElement } from './format.js';

// At most this many rows and columns a table draws; the matrices hold the rest.
const SUMMARY_ROWS = 12;
const SUMMARY_COLUMNS = 12;

/** The largest size among numbers nested in arrays (a tiny positive number when none is finite), to draw bars over. */
export const largestOf = (values) => Math.max(1e-300, ...values.flat(Infinity).map(Math.abs).filter(Number.isFinite));

// A value's bar under its number: from the left edge, or from the middle
// when the table has negative values (then leftwards for a negative one).
function cellBar(make, value, largest, signed) {
  const track = make('span', `aw-fig-cellbar${signed ? ' aw-fig-signed' : ''}`);
  if (!Number.isFinite(value)) return track;
  const zero = signed ? 0.5 : 0;
  const length = (Math.abs(value) / largest) * (1 - zero);
  const bar = make('span', 'aw-fig-cellbar-fill');
  bar.style.left = `${(value < 0 ? zero - length : zero) * 100}%`;
  bar.style.width = `${length * 100}%`;
  track.append(bar);
  return track;
}

function table(make, picture, column, k, { marked }) {
  const box = make('div', 'aw-fig-summary-block');
  const doc = box.ownerDocument;
  const rows = picture.queries.slice(0, SUMMARY_ROWS);
  const labels = column.labels.slice(0, SUMMARY_COLUMNS);
  const weights = column.kind === 'weights';
  const values = column.values.slice(0, rows.length).map((row) => row.slice(0, labels.length));
  // Weights on 0 to 1 (more only for weights given larger); other values on their largest.
  const largest = weights ? Math.max(1, largestOf(values)) : largestOf(values);
  const signed = values.flat().some((value) => value < 0);

  box.style.setProperty('--delay', `${0.5 * k}s`);
  const grid = make('table', 'aw-fig-summary-table');
  grid.dataset.column = column.name;
  grid.append(make('caption', 'aw-fig-summary-head', `${k > 0 ? '\u2192\u00a0' : ''}${column.title}`));
  const head = make('tr');
  head.append(make('td'));
  for (const label of labels) {
    const th = make('th', 'aw-fig-summary-key', label);
    th.scope = 'col';
    th.title = label;
    head.append(th);
  }
  const thead = make('thead');
  thead.append(head);
  const body = make('tbody');
  rows.forEach((token, i) => {
    const tr = make('tr');
    const th = make('th', 'aw-fig-token', token);
    th.scope = 'row';
    th.title = token;
    tr.append(th);
    values[i].forEach((value, j) => {
      const td = make('td', weights ? 'aw-fig-weight' : 'aw-fig-entry');
      td.dataset.value = String(value);
      td.append(numberElement(doc, value, { input: column.input }), cellBar(make, value, largest, signed));
      if (weights && picture.masked?.[i]?.[j]) td.classList.add('aw-fig-masked');
      const printed = marked.get(`${column.name},${i},${j}`);
      if (printed !== undefined) {
        td.classList.add('aw-fig-misprint');
        const wrong = make('s', 'aw-fig-printed', printed);
        wrong.prepend(make('span', 'aw-visually-hidden', 'printed '));
        td.append(wrong);
      }
      tr.append(td);
    });
    body.append(tr);
  });
  grid.append(thead, body);
  box.append(grid);
  if (column.labels.length > labels.length) {
    box.append(make('p', 'aw-fig-more', `\u2026 and ${column.labels.length - labels.length} more columns`));
  }
  return box;
}

export function drawSummary(make, picture, { marked = new Map(), markedNote = '' }) {
  const gets = picture.columns.some((column) => column.name === 'output');
  const parts = [make('figcaption', 'aw-fig-caption', gets
    ? 'The whole computation: each token\u2019s attention weights over the keys (hatched: masked), and the output row it gets back'
    : 'The whole computation: each row\u2019s input, and the weights the softmax makes of it (hatched: masked)')];
  const tables = make('div', 'aw-fig-summary');
  picture.columns.forEach((column, k) => tables.append(table(make, picture, column, k, { marked })));
  parts.push(tables);
  if (tables.querySelector('.aw-fig-misprint')) {
    const note = make('p', 'aw-fig-marked');
    note.append(make('span', 'aw-fig-swatch aw-fig-misprint'), note.ownerDocument.createTextNode(` ${markedNote}`));
    parts.push(note);
  }
  if (picture.queries.length > SUMMARY_ROWS) {
    parts.push(make('p', 'aw-fig-more', `\u2026 and ${picture.queries.length - SUMMARY_ROWS} more tokens`));
  }
  return parts;
}
