// Small pieces shared by the section widgets (masks, scaling, multi-head,
// cross-attention, alignment, efficient variants, …): a seeded generator
// for their inputs, labelled controls, the root box every section lives in
// and the state every section keeps (sectionState). Input generation and
// layout only: every attention number a section shows comes from the engine.

// The seeded generator and the matrices of draws are the presets'
// (mulberry32): the same seed gives the same inputs everywhere.
export { randomMatrix, seededRandom, uniformDraws } from '../presets.js';

import { builder } from '../ui/dom.js';

/** Standard normal draws (Box–Muller) from a uniform generator. */
export function normalDraws(random) {
  return function next() {
    const u = 1 - random(); // in (0, 1], so the logarithm is finite
    const v = random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
}

let sectionCount = 0;

// A section whose page names it with a heading of its own has no title: its
// headings move up a level, into the place the title leaves.
const LEVEL_UP = { h4: 'h3', h5: 'h4', h6: 'h5' };

/**
 * The box a section lives in: a root with the shared widget look, a title,
 * an introduction, a status line for engine messages. Returns the pieces
 * and a unique id prefix for labels. When element.dataset.awHeading names
 * the page's heading for the section (mountWidget's heading option), that
 * heading labels the root and there is no title; make() then builds h4 as
 * h3 and so on.
 */
export function sectionRoot(element, { name, title, intro = [] }) {
  const doc = element.ownerDocument;
  const pageHeading = element.dataset.awHeading;
  const build = builder(doc);
  const make = pageHeading ? (tag, ...rest) => build(LEVEL_UP[tag] ?? tag, ...rest) : build;
  const id = `aw-${name}-${++sectionCount}`;
  const root = make('div', `aw-root aw-section aw-${name}`);
  root.dataset.section = name;
  root.setAttribute('role', 'group');
  if (pageHeading) {
    root.setAttribute('aria-labelledby', pageHeading);
  } else {
    const heading = make('h3', 'aw-section-title', title);
    heading.id = `${id}-title`;
    root.setAttribute('aria-labelledby', heading.id);
    root.append(heading);
  }
  for (const paragraph of intro) root.append(make('p', 'aw-section-intro', paragraph));
  const status = make('p', 'aw-message');
  status.setAttribute('role', 'status');
  status.hidden = true;
  root.append(status);
  element.append(root);
  return {
    doc, make, root, id,
    /** Shows a message (an engine error, say); empty text hides it. */
    say(text) {
      status.textContent = text;
      status.hidden = !text;
    },
  };
}

/**
 * A labelled range input that shows its value; onInput(value) on change.
 * Returns { element, input, set(value) }.
 */
export function slider(doc, { label, min, max, step = 1, value, onInput, format = String, name = '' }) {
  const make = builder(doc);
  const wrapper = make('label', 'aw-slider');
  if (name) wrapper.dataset.control = name;
  const text = make('span', 'aw-slider-label', label);
  const input = make('input', 'aw-slider-input');
  input.type = 'range';
  input.min = String(min);
  input.max = String(max);
  input.step = String(step);
  input.value = String(value);
  const shown = make('output', 'aw-slider-value', format(value));
  const show = () => {
    shown.textContent = format(Number(input.value));
    input.setAttribute('aria-valuetext', format(Number(input.value)));
  };
  input.addEventListener('input', () => { show(); onInput(Number(input.value)); });
  show();
  const track = make('span', 'aw-slider-track');
  track.append(input, shown);
  wrapper.append(text, track);
  return {
    element: wrapper,
    input,
    set(next) {
      input.value = String(next);
      show();
    },
    setRange(nextMin, nextMax) {
      input.min = String(nextMin);
      input.max = String(nextMax);
      show();
    },
  };
}

/** A labelled checkbox; onChange(checked). */
export function checkbox(doc, { label, checked = false, onChange, name = '' }) {
  const make = builder(doc);
  const wrapper = make('label', 'aw-check');
  if (name) wrapper.dataset.control = name;
  const input = make('input');
  input.type = 'checkbox';
  input.checked = checked;
  input.addEventListener('change', () => onChange(input.checked));
  wrapper.append(input, doc.createTextNode(` ${label}`));
  return { element: wrapper, input };
}

/** A labelled <select> of { value, label } options; onChange(value). */
export function choice(doc, { label, options, value, onChange, name = '' }) {
  const make = builder(doc);
  const wrapper = make('label', 'aw-choice');
  if (name) wrapper.dataset.control = name;
  const select = make('select');
  for (const option of options) {
    const node = make('option', '', option.label);
    node.value = String(option.value);
    select.append(node);
  }
  select.value = String(value);
  select.addEventListener('change', () => onChange(select.value));
  wrapper.append(doc.createTextNode(`${label} `), select);
  return { element: wrapper, select };
}

/** A plain button. */
export function button(doc, { label, onClick, className = '' }) {
  const node = builder(doc)('button', `aw-btn${className ? ` ${className}` : ''}`, label);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/**
 * A <thead> with one row of column headings; corner, if given, is a cell
 * put before them (over the row headings).
 */
export function tableHead(make, headers, corner = null) {
  const row = make('tr');
  if (corner) row.append(corner);
  for (const title of headers) {
    const th = make('th', '', title);
    th.scope = 'col';
    row.append(th);
  }
  const thead = make('thead');
  thead.append(row);
  return thead;
}

/**
 * A box that scrolls sideways when its content is wider than the screen: a
 * named region that keyboard users can focus and scroll with the arrow keys.
 */
export function scrollBox(make, className, label) {
  const box = make('div', className);
  box.tabIndex = 0;
  box.setAttribute('role', 'region');
  box.setAttribute('aria-label', label);
  return box;
}

/** An aw-table with column headings and the given body rows (<tr> elements). */
export function dataTable(make, headers, rows) {
  const table = make('table', 'aw-table');
  const body = make('tbody');
  for (const row of rows) body.append(row);
  table.append(tableHead(make, headers), body);
  return table;
}

/** Row labels t1..tn for generated tokens. */
export function numberedTokens(n, prefix = 't') {
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
}

/** Clamps a state value read from a URL or a caller to an integer range. */
export function clampInt(value, min, max, fallback) {
  const n = Number(value);
  if (!Number.isFinite(n)) return fallback;
  return Math.min(max, Math.max(min, Math.round(n)));
}

/**
 * A section's state. setState(next) merges next over the current state,
 * cleans the result with normalise and hands it to show(current, previous,
 * how) to bring the view in line; update(change) does the same for a change
 * the learner made and then reports the new state through onChange. how is
 * whatever the caller passed after the change (say, that the change came
 * from a control that is to be left as it is). current is the live state
 * (read it, never assign to it); getState() returns a copy, made by copy
 * (by default a shallow one).
 */
export function sectionState({ initial, normalise, show, onChange, copy = (state) => ({ ...state }) }) {
  const store = {
    current: initial,
    getState: () => copy(store.current),
    setState(next = {}, how = undefined) {
      const previous = store.current;
      store.current = normalise({ ...previous, ...next });
      show(store.current, previous, how);
    },
    update(change, how = undefined) {
      store.setState(change, how);
      onChange(store.getState());
    },
  };
  return store;
}

/**
 * Runs an engine call; on error shows its message through say() and
 * returns null, so the last good view stays on screen.
 */
export function attempt(say, compute) {
  try {
    const result = compute();
    say('');
    return result;
  } catch (error) {
    say(`The engine refused these inputs: ${error.message}`);
    return null;
  }
}
