// Matrix grids: an editable one (typing, arrow keys between cells, an inline
// message at a cell that does not hold a number, and no change reported
// until every cell does, so the last good state stays on screen) and one
// that the walkthrough highlights cell by cell, whose cells can be edited
// in place where the caller says how (onEdit). A message at a cell floats
// below it, so a bad entry never moves the grid's columns.

import { builder } from './dom.js';
import { formatInput, fullPrecision, numberElement, parseNumber, writtenNumber } from './format.js';

let editors = 0;

function table(doc, className, caption) {
  const element = doc.createElement('table');
  element.className = className;
  if (caption) {
    const c = doc.createElement('caption');
    c.textContent = caption;
    element.append(c);
  }
  return element;
}

function headerRow(doc, colLabels) {
  const thead = doc.createElement('thead');
  const tr = doc.createElement('tr');
  tr.append(doc.createElement('td'));
  for (const label of colLabels) {
    const th = doc.createElement('th');
    th.scope = 'col';
    th.textContent = label;
    tr.append(th);
  }
  thead.append(tr);
  return thead;
}

function rowHeader(doc, label) {
  const th = doc.createElement('th');
  th.scope = 'row';
  th.textContent = label;
  return th;
}

/** Moves focus between grid cells with the arrow keys; true if it handled the key. */
function moveFocus(event, grid, i, j, focusAt) {
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  const move = moves[event.key];
  if (!move) return false;
  const target = event.target;
  if (target.tagName === 'INPUT' && move[1] !== 0) {
    // Left/right move the caret inside the text first.
    const atStart = target.selectionStart === 0 && target.selectionEnd === 0;
    const atEnd = target.selectionStart === target.value.length;
    if ((move[1] < 0 && !atStart) || (move[1] > 0 && !atEnd)) return false;
  }
  const ni = i + move[0];
  const nj = j + move[1];
  if (ni < 0 || nj < 0 || ni >= grid.length || nj >= grid[0].length) return false;
  event.preventDefault();
  focusAt(ni, nj);
  return true;
}

/** What is wrong with a cell's text ('' when it holds a number). */
function checkNumber(text) {
  if (text.trim() === '') return 'Empty: type a number';
  const written = writtenNumber(text);
  if (Number.isFinite(written)) return '';
  // A number written right that a double cannot hold (1e999) is too large, not "not a number".
  return Number.isNaN(written)
    ? `\u201c${text.trim().slice(0, 12)}\u201d is not a number`
    : `\u201c${text.trim().slice(0, 12)}\u201d is too large: numbers here stay below about 1.8 \u00d7 10\u00b3\u2070\u2078`;
}

/** Shows `message` at the input's cell, or clears it (''). */
function showCellError(input, message) {
  const td = input.parentElement;
  let bubble = td.querySelector('.aw-cell-error');
  if (!message) {
    input.removeAttribute('aria-invalid');
    input.removeAttribute('aria-describedby');
    bubble?.remove();
    td.classList.remove('aw-invalid');
    return;
  }
  if (!bubble) {
    bubble = input.ownerDocument.createElement('span');
    bubble.className = 'aw-cell-error';
    bubble.id = `${input.id}-error`;
    bubble.setAttribute('role', 'alert');
    td.append(bubble);
  }
  bubble.textContent = message;
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', bubble.id);
  td.classList.add('aw-invalid');
}

function cellInput(doc, id, text, label) {
  const input = doc.createElement('input');
  input.type = 'text';
  input.inputMode = 'decimal';
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.id = id;
  input.className = 'aw-cell-input';
  input.value = text;
  input.setAttribute('aria-label', label);
  return input;
}

/** A matrix's figure: its title, the box its table scrolls in and the line that reads out the focused cell. */
function matrixFigure(doc, title, name) {
  const make = builder(doc);
  const wrapper = make('figure', 'aw-matrix');
  wrapper.dataset.matrix = name;
  const label = make('figcaption', 'aw-matrix-title', title);
  const scroller = make('div', 'aw-matrix-scroll');
  const detail = make('p', 'aw-matrix-detail');
  detail.setAttribute('aria-live', 'polite');
  wrapper.append(label, scroller, detail);
  return { wrapper, scroller, detail };
}

/** A view's cell (i, j), its focus and editing wired to on: { focus(), blur(), key(event), click() }. */
function viewCell(doc, i, j, on) {
  const td = doc.createElement('td');
  td.tabIndex = -1;
  td.dataset.row = String(i);
  td.dataset.col = String(j);
  td.addEventListener('focus', on.focus);
  td.addEventListener('blur', on.blur);
  td.addEventListener('keydown', on.key);
  td.addEventListener('click', on.click);
  return td;
}

/** A key that opens a view's cell for editing: Enter, F2, or the start of a number. */
const opensEditing = (event) => event.key === 'Enter' || event.key === 'F2'
  || (event.key.length === 1 && /[-+.,\d]/.test(event.key) && !event.ctrlKey && !event.metaKey && !event.altKey);

/** In an open cell Escape gives up and Enter commits; either way the focus goes
 * back to the cell, unless its number is refused. */
function closeOnKeys(input, td, closeCell) {
  input.addEventListener('keydown', (event) => {
    event.stopPropagation();
    if (event.key === 'Escape') {
      event.preventDefault();
      closeCell(false);
      td.focus();
    } else if (event.key === 'Enter') {
      event.preventDefault();
      if (closeCell(true)) td.focus();
    }
  });
}

/** A view cell's classes: its marks (by cell, row and column), then what it is. */
function cellClassName(marks, i, j, { hidden, masked, editable }) {
  return [marks.cells?.get(`${i},${j}`), marks.rows?.get(i), marks.cols?.get(j),
          hidden ? 'aw-future' : '', masked ? 'aw-masked' : '', editable ? 'aw-editable' : '']
    .filter(Boolean).join(' ');
}

/**
 * Matrix view: update({ values, rowLabels, colLabels, input }) then
 * mark({ cells: Map('i,j' -> class), rows: Map(i -> class), cols: Map(j -> class),
 *        hidden(i, j) -> true for values not computed yet }).
 * With onEdit(i, j, value), an input matrix's cells are edited in place: a
 * click, Enter, F2 or typing a number opens the cell; Enter or leaving it
 * hands a number to onEdit (a cell that does not hold one keeps its message
 * and stays open), Escape gives up.
 */
export function createMatrixView(root, { title, name = title, onEdit = null }) {
  const doc = root.ownerDocument;
  const { wrapper, scroller, detail } = matrixFigure(doc, title, name);
  root.append(wrapper);

  let data = null;
  let grid = [];
  let focus = [0, 0];
  let marks = {};
  const idPrefix = `aw-view-${++editors}`;

  function focusAt(i, j) {
    grid[focus[0]]?.[focus[1]]?.setAttribute('tabindex', '-1');
    focus = [i, j];
    grid[i][j].setAttribute('tabindex', '0');
    grid[i][j].focus();
  }

  function cellText(i, j) {
    const value = data.values[i][j];
    return `${name}[${data.rowLabels[i]}][${data.colLabels[j]}] = ${fullPrecision(value)}`;
  }

  // The table is rebuilt only when the shape or the labels change; new
  // values and marks are written into its cells in place, and a cell whose
  // text and class are unchanged is not touched. A hidden view is painted
  // when it is shown (a step shows two or three of the walkthrough's views,
  // and an edit or a step updates and marks them all).
  let builtFor = '';
  let shown = [];
  let stale = false;

  function draw() {
    const shape = data ? JSON.stringify([data.rowLabels, data.colLabels, data.values[0]?.length, data.input]) : '';
    if (shape !== builtFor) build();
    builtFor = shape;
    if (data) paint();
  }

  function build() {
    open = null;
    scroller.replaceChildren();
    grid = [];
    shown = [];
    if (!data) return;
    const t = table(doc, 'aw-grid');
    t.append(headerRow(doc, data.colLabels));
    const tbody = doc.createElement('tbody');
    data.values.forEach((row, i) => {
      const tr = doc.createElement('tr');
      tr.append(rowHeader(doc, data.rowLabels[i]));
      grid.push([]);
      shown.push([]);
      row.forEach((value, j) => {
        const td = viewCell(doc, i, j, {
          focus: () => { focus = [i, j]; detail.textContent = td.classList.contains('aw-future') ? '' : cellText(i, j); },
          blur: () => { detail.textContent = ''; },
          key: (event) => {
            if (event.target === td && editable() && opensEditing(event)) {
              if (event.key.length === 1) event.preventDefault();
              openCell(i, j, event.key.length === 1 ? event.key : null);
              return;
            }
            if (event.target === td) moveFocus(event, grid, i, j, focusAt);
          },
          click: () => { if (editable() && !td.querySelector('input')) openCell(i, j, null); },
        });
        tr.append(td);
        grid[i].push(td);
        shown[i].push(undefined);
      });
      tbody.append(tr);
    });
    t.append(tbody);
    scroller.append(t);
    focus = [Math.min(focus[0], grid.length - 1), Math.min(focus[1], grid[0].length - 1)];
    grid[focus[0]][focus[1]].tabIndex = 0;
  }

  const editable = () => Boolean(onEdit && data?.input);
  let open = null; // the cell being edited: { i, j, input }

  // Replaces the cell's number with a text field holding it (or `typed`).
  function openCell(i, j, typed) {
    closeCell(false);
    const td = grid[i][j];
    const value = data.values[i][j];
    const text = typed ?? (formatInput(value) === fullPrecision(value) ? formatInput(value) : String(value));
    const input = cellInput(doc, `${idPrefix}-${i}-${j}`, text, `${name}, row ${data.rowLabels[i]}, column ${data.colLabels[j]}`);
    open = { i, j, input };
    shown[i][j] = 'editing';
    td.replaceChildren(input);
    td.classList.add('aw-editing');
    input.addEventListener('input', () => showCellError(input, checkNumber(input.value)));
    closeOnKeys(input, td, closeCell);
    input.addEventListener('blur', () => { if (open?.input === input) closeCell(true); });
    input.focus();
    if (typed === null) input.select();
  }

  // Closes the open cell; with commit, hands its number to onEdit first.
  // A text that is not a number, or a number onEdit refuses (it returns
  // the reason), keeps the cell open with the message at it (false).
  function closeCell(commit) {
    if (!open) return true;
    const { i, j, input } = open;
    const value = parseNumber(input.value);
    if (commit && !Object.is(value, data.values[i][j])) {
      const message = checkNumber(input.value) || onEdit(i, j, value) || '';
      if (message) {
        showCellError(input, message);
        return false;
      }
    }
    open = null;
    grid[i][j].classList.remove('aw-editing');
    shown[i][j] = undefined;
    paint();
    return true;
  }

  function paint() {
    stale = wrapper.hidden;
    if (stale) return;
    grid.forEach((row, i) => row.forEach((td, j) => {
      if (open && open.i === i && open.j === j) return;
      const hidden = marks.hidden ? marks.hidden(i, j) : false;
      const value = data.values[i][j];
      const className = cellClassName(marks, i, j,
          { hidden, masked: !hidden && value === -Infinity, editable: editable() });
      if (td.className !== className) td.className = className;
      const state = hidden ? 'hidden' : value;
      if (Object.is(shown[i][j], state)) return;
      shown[i][j] = state;
      if (hidden) {
        td.textContent = '\u00b7';
        td.setAttribute('aria-label', `${name}[${data.rowLabels[i]}][${data.colLabels[j]}]: not computed yet`);
      } else {
        td.replaceChildren(numberElement(doc, value, { input: data.input }));
        td.setAttribute('aria-label', cellText(i, j));
      }
    }));
  }

  return {
    element: wrapper,
    update(next) {
      data = next;
      draw();
    },
    mark(next = {}) {
      marks = next;
      if (data) paint();
    },
    setVisible(visible) {
      wrapper.hidden = !visible;
      if (visible && stale && data) paint();
    },
    destroy() { wrapper.remove(); },
  };
}

/**
 * Editable matrix. onChange(values) fires only when every cell holds a
 * number; until then the bad cells carry an inline message. onChange may
 * return why the numbers were refused (the engine's message), which the
 * cell just typed in then carries.
 */
export function createMatrixEditor(root, { title, name = title, onChange }) {
  const doc = root.ownerDocument;
  const wrapper = doc.createElement('fieldset');
  wrapper.className = 'aw-editor';
  const legend = doc.createElement('legend');
  legend.textContent = title;
  const scroller = doc.createElement('div');
  scroller.className = 'aw-matrix-scroll';
  wrapper.append(legend, scroller);
  root.append(wrapper);

  let inputs = [];
  let rowLabels = [];
  let colLabels = [];
  const idPrefix = `aw-ed-${++editors}`;

  function focusAt(i, j) {
    inputs[i][j].focus();
    inputs[i][j].select();
  }

  function onInput(event) {
    const input = event.target;
    showCellError(input, checkNumber(input.value));
    const values = currentValues();
    const refused = values ? onChange?.(values) : '';
    if (refused) showCellError(input, refused);
  }

  function currentValues() {
    const values = inputs.map((row) => row.map((input) => parseNumber(input.value)));
    return values.flat().some(Number.isNaN) ? null : values;
  }

  function setValues(values, rows, cols) {
    rowLabels = rows;
    colLabels = cols;
    scroller.replaceChildren();
    inputs = [];
    const t = table(doc, 'aw-grid aw-grid-edit');
    t.append(headerRow(doc, colLabels));
    const tbody = doc.createElement('tbody');
    values.forEach((row, i) => {
      const tr = doc.createElement('tr');
      tr.append(rowHeader(doc, rowLabels[i]));
      inputs.push([]);
      row.forEach((value, j) => {
        const td = doc.createElement('td');
        const input = cellInput(doc, `${idPrefix}-${i}-${j}`,
                                formatInput(value) === fullPrecision(value) ? formatInput(value) : String(value),
                                `${name}, row ${rowLabels[i]}, column ${colLabels[j]}`);
        input.title = fullPrecision(value);
        input.addEventListener('input', onInput);
        input.addEventListener('keydown', (event) => {
          if (event.key === 'Enter') {
            event.preventDefault();
            if (i + 1 < inputs.length) focusAt(i + 1, j);
            return;
          }
          moveFocus(event, inputs, i, j, focusAt);
        });
        td.append(input);
        tr.append(td);
        inputs[i].push(input);
      });
      tbody.append(tr);
    });
    t.append(tbody);
    scroller.append(t);
  }

  return {
    element: wrapper,
    setValues,
    /** Sets the labels without touching what the learner typed. */
    setLabels(rows, cols) {
      rowLabels = rows;
      colLabels = cols;
      const heads = scroller.querySelectorAll('thead th');
      cols.forEach((label, j) => { if (heads[j]) heads[j].textContent = label; });
      scroller.querySelectorAll('tbody th').forEach((th, i) => { th.textContent = rows[i] ?? ''; });
      inputs.forEach((row, i) => row.forEach((input, j) => {
        input.setAttribute('aria-label', `${name}, row ${rows[i]}, column ${cols[j]}`);
      }));
    },
    destroy() { wrapper.remove(); },
  };
}

