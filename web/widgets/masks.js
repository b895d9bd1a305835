// The masks section: causal, key padding, a custom mask toggled cell by
// cell, and a local window; how each row's weights are renormalised over
// the keys it may still see, what a row with nothing left gives, and why
// −∞ and a large finite −1e9 are not the same thing.
//
//   mount(element, { engine, presets?, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   presets: presets.json, for the tutorials' claims this section shows (none without it)
//   onChange(state) after each change the learner makes
//   state: { base: 'none'|'causal'|'custom', custom: [[bool]], padding, keyLength,
//            local, window, row, seed }
//
// Every number shown comes from the engine (scaledDotProduct and softmax).

import { appendClaims } from '../ui/claims.js';
import { createHeatmap } from '../ui/heatmap.js';
import { formatNumber, numberElement } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import {
  attempt, button, checkbox, choice, clampInt, dataTable, normalDraws, randomMatrix, scrollBox, sectionRoot,
  sectionState, seededRandom, slider, tableHead,
} from './sections-common.js';

const TOKENS = ['The', 'cat', 'sat', 'down', '<pad>', '<pad>'];
const T = TOKENS.length;
const D_K = 4; // 1/√4 = 0.5 exactly, so the −1e9 comparison can pass the same scale as a number
const D_V = 3;
const SCALE = 0.5;
const FINITE_MASK = -1e9;
const BASES = [
  { value: 'none', label: 'no mask' },
  { value: 'causal', label: 'causal (no looking ahead)' },
  { value: 'custom', label: 'custom (click the cells)' },
];

/** The seeded inputs the widget shows (exported for the tests). */
export function inputsFor(seed) {
  const draw = normalDraws(seededRandom(seed));
  return { q: randomMatrix(draw, T, D_K), k: randomMatrix(draw, T, D_K), v: randomMatrix(draw, T, D_V) };
}

const allAllowed = () => Array.from({ length: T }, () => Array(T).fill(true));

function normalise(next) {
  const custom = Array.isArray(next.custom) && next.custom.length === T
    && next.custom.every((row) => Array.isArray(row) && row.length === T)
    ? next.custom.map((row) => row.map(Boolean)) : allAllowed();
  return {
    base: BASES.some((b) => b.value === next.base) ? next.base : 'causal',
    custom,
    padding: Boolean(next.padding),
    keyLength: clampInt(next.keyLength, 0, T, 4),
    local: Boolean(next.local),
    window: clampInt(next.window, 0, T - 1, 1),
    row: clampInt(next.row, 0, T - 1, 2),
    seed: clampInt(next.seed, 0, 2 ** 31, 7),
  };
}

/** The engine's mask fields for a state: the base or custom mask, key padding, a local window. */
function maskFields(current) {
  const fields = { mask: current.base === 'custom' ? current.custom : current.base };
  if (current.padding) fields.keyLength = current.keyLength;
  if (current.local) fields.window = current.window;
  return fields;
}

function numberCell(make, value, className = '', field = '') {
  const td = make('td', className);
  if (field) td.dataset.field = field;
  td.append(numberElement(td.ownerDocument, value));
  return td;
}

/** The base mask, key padding and the local window; sync(current) sets them to a state. */
function createControls(doc, make, { current, update }) {
  const element = make('div', 'aw-controls aw-mask-controls');
  const baseChoice = choice(doc, {
    label: 'Base mask', name: 'base', options: BASES, value: current().base,
    onChange: (value) => update({ base: value }),
  });
  const paddingBox = checkbox(doc, {
    label: 'Key padding', name: 'padding', checked: current().padding, onChange: (on) => update({ padding: on }),
  });
  const keyLengthSlider = slider(doc, {
    label: 'real tokens (keyLength)', name: 'keyLength', min: 0, max: T, value: current().keyLength,
    onInput: (value) => update({ keyLength: value, padding: true }),
  });
  const localBox = checkbox(doc, {
    label: 'Local window', name: 'local', checked: current().local, onChange: (on) => update({ local: on }),
  });
  const windowSlider = slider(doc, {
    label: 'window (|i \u2212 j| \u2264 w)', name: 'window', min: 0, max: T - 1, value: current().window,
    onInput: (value) => update({ window: value, local: true }),
  });
  const paddingGroup = make('div', 'aw-control-group');
  paddingGroup.append(paddingBox.element, keyLengthSlider.element);
  const localGroup = make('div', 'aw-control-group');
  localGroup.append(localBox.element, windowSlider.element);
  const actions = make('div', 'aw-control-group');
  actions.append(
    button(doc, { label: 'New random Q, K, V', onClick: () => update({ seed: current().seed + 1 }) }),
    button(doc, { label: 'Clear the custom mask', onClick: () => update({ custom: allAllowed() }) }),
  );
  element.append(baseChoice.element, paddingGroup, localGroup, actions);
  return {
    element,
    sync(state) {
      baseChoice.select.value = state.base;
      paddingBox.input.checked = state.padding;
      keyLengthSlider.set(state.keyLength);
      localBox.input.checked = state.local;
      windowSlider.set(state.window);
    },
  };
}

/** The mask as a grid of buttons, one per (query, key); toggle(i, j) on a press, arrow keys between cells. */
function createMaskGrid(make, id, toggle) {
  const element = make('figure', 'aw-mask-grid-box');
  const caption = make('figcaption', 'aw-heatmap-title', 'The mask (click or press Enter on a cell to flip it)');
  const grid = make('table', 'aw-mask-grid');
  grid.setAttribute('aria-describedby', `${id}-grid-help`);
  const help = make('p', 'aw-small', '\u2713 may attend, \u2715 masked. A thick border marks a cell you blocked yourself. '
    + 'Arrow keys move between cells.');
  help.id = `${id}-grid-help`;
  element.append(caption, grid, help);

  const buttons = [];
  const moveInGrid = (event, i, j) => {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    const ni = Math.min(T - 1, Math.max(0, i + move[0]));
    const nj = Math.min(T - 1, Math.max(0, j + move[1]));
    buttons[i][j].tabIndex = -1;
    buttons[ni][nj].tabIndex = 0;
    buttons[ni][nj].focus();
  };
  return {
    element,
    buttons,
    /** Builds the cells (once the grid is on the page). */
    build() {
      const tbody = make('tbody');
      const thead = tableHead(make, TOKENS, make('td'));
      for (let i = 0; i < T; i++) {
        const tr = make('tr');
        const th = make('th', '', TOKENS[i]);
        th.scope = 'row';
        tr.append(th);
        buttons.push([]);
        for (let j = 0; j < T; j++) {
          const td = make('td');
          const cell = make('button', 'aw-mask-cell');
          cell.type = 'button';
          cell.dataset.row = String(i);
          cell.dataset.col = String(j);
          cell.tabIndex = i === 0 && j === 0 ? 0 : -1;
          cell.addEventListener('click', () => toggle(i, j));
          cell.addEventListener('keydown', (event) => moveInGrid(event, i, j));
          td.append(cell);
          tr.append(td);
          buttons[i].push(cell);
        }
        tbody.append(tr);
      }
      grid.append(thead, tbody);
    },
    draw(result, current) {
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < T; j++) {
          const allowed = result.allowed[i][j];
          const mine = current.base === 'custom' && !current.custom[i][j];
          const cell = buttons[i][j];
          cell.textContent = allowed ? '\u2713' : '\u2715';
          cell.classList.toggle('aw-blocked', !allowed);
          cell.classList.toggle('aw-mine', mine);
          cell.classList.toggle('aw-row-on', i === current.row);
          cell.setAttribute('aria-pressed', String(current.base === 'custom' ? !current.custom[i][j] : false));
          cell.setAttribute('aria-label', `query ${TOKENS[i]}, key ${TOKENS[j]}: ${allowed ? 'may attend' : 'masked'}`
            + `${mine ? ' (blocked by your custom mask)' : ''}. Press to flip it in the custom mask.`);
        }
      }
    },
  };
}

/**
 * The row inspector: a row's scores, exponentials and weights before and
 * after the mask, and the sums they are divided by. draw({ engine, say,
 * result, current }) redraws it.
 */
function createInspector(doc, make, { current, update, blockWholeRow }) {
  const element = make('section', 'aw-panel aw-mask-inspect');
  const head = make('div', 'aw-panel-head');
  const rowChoice = choice(doc, {
    label: 'Inspect the row of query', name: 'row',
    options: TOKENS.map((token, i) => ({ value: i, label: `${i + 1}: ${token}` })),
    value: current().row, onChange: (value) => update({ row: Number(value) }),
  });
  const blockRow = button(doc, { label: 'Mask every key of this row', onClick: () => blockWholeRow() });
  head.append(rowChoice.element, blockRow);
  const title = make('h4', '', 'Renormalisation of this row');
  const text = make('p', 'aw-small');
  const tableBox = scrollBox(make, 'aw-table-scroll', 'The row before and after the mask');
  const sums = make('div', 'aw-arith-lines');
  element.append(head, title, text, tableBox, sums);

  const sumLine = (words, value, tail) => {
    const p = make('p', 'aw-arith');
    p.append(doc.createTextNode(words), numberElement(doc, value), doc.createTextNode(tail));
    return p;
  };

  return {
    element,
    sync(state) {
      rowChoice.select.value = String(state.row);
    },
    draw({ engine, say, result, current: state }) {
      const i = state.row;
      const scaledRow = result.base.scaled[i];
      const allowedRow = result.allowed[i];
      const before = attempt(say, () => engine.softmax({ x: [scaledRow] }));
      const after = attempt(say, () => engine.softmax({ x: [scaledRow], mask: [allowedRow] }));
      if (!before || !after) return;
      const kept = allowedRow.filter(Boolean).length;
      text.textContent = kept === 0
        ? `Every key is masked for \u201c${TOKENS[i]}\u201d: nothing is left to share the weight (see below).`
        : `\u201c${TOKENS[i]}\u201d keeps ${kept} of ${T} keys. Their exponentials stay as they were; only the sum they are divided by `
          + 'shrinks, so the kept weights grow and keep their proportions.';
      const rows = TOKENS.map((token, j) => {
        const tr = make('tr', allowedRow[j] ? '' : 'aw-masked-row');
        const th = make('th', '', token);
        th.scope = 'row';
        tr.append(th, numberCell(make, scaledRow[j], '', 'scaled'), numberCell(make, before.exp[0][j], '', 'exp-before'),
          numberCell(make, result.base.weights[i][j], '', 'weight-before'), numberCell(make, after.scaled[0][j], '', 'scaled-after'),
          numberCell(make, after.exp[0][j], '', 'exp-after'), numberCell(make, result.masked.weights[i][j], 'aw-strong', 'weight-after'));
        return tr;
      });
      tableBox.replaceChildren(dataTable(make,
        ['key', 'scaled score', 'exp (no mask)', 'weight (no mask)', 'score after mask', 'exp (mask)', 'weight (mask)'], rows));
      sums.replaceChildren(
        sumLine('Sum of exponentials without the mask: ', before.sum[0], ` (max subtracted first: ${formatNumber(before.max[0])})`),
        sumLine('Sum over the keys left by the mask: ', after.sum[0], ` (max: ${formatNumber(after.max[0])})`),
      );
    },
  };
}

/** What a row with every key masked gives, from the engine, and why a naive softmax gives NaN there. */
function createEmptyPanel(doc, make) {
  const element = make('section', 'aw-panel aw-mask-empty');
  element.append(make('h4', '', 'A row with every key masked'));
  const body = make('div', 'aw-small');
  element.append(body);
  return {
    element,
    draw({ engine, say, result, current }) {
      const fullyMasked = result.allowed
        .map((row, i) => (row.some(Boolean) ? null : `${TOKENS[i]} (row ${i + 1})`))
        .filter(Boolean);
      const demo = attempt(say, () => engine.softmax({ x: [result.base.scaled[current.row]],
          mask: [Array(T).fill(false)] }));
      if (!demo) return;
      body.replaceChildren();
      const now = make('p');
      now.textContent = fullyMasked.length
        ? `Right now every key is masked for: ${fullyMasked.join(', ')}. The engine gives such a row all-zero weights, `
          + 'so its output is the zero vector (see the weights heatmap).'
        : 'No row is fully masked right now. Try \u201cMask every key of this row\u201d, or key padding with 0 real tokens.';
      const engineLine = make('p', 'aw-arith');
      engineLine.append(doc.createTextNode('The engine on this row with every key masked: max = '),
        numberElement(doc, demo.max[0]), doc.createTextNode(', sum of exponentials = '), numberElement(doc, demo.sum[0]),
        doc.createTextNode(', weights = ['));
      demo.weights[0].forEach((w, j) => {
        if (j > 0) engineLine.append(doc.createTextNode(', '));
        engineLine.append(numberElement(doc, w));
      });
      engineLine.append(doc.createTextNode('].'));
      const why = make('p');
      why.textContent = 'A naive softmax breaks here. The usual stable version subtracts the row maximum first, but the maximum of '
        + 'a row of \u2212\u221e is \u2212\u221e, and \u2212\u221e \u2212 (\u2212\u221e) is not a number. Without that subtraction it fails too: '
        + 'each exponential is exp(\u2212\u221e) = 0, their sum is 0, and each weight is 0/0. Either way the row fills with NaN, '
        + 'and the NaN spreads into everything computed from it. The engine checks for a row with no allowed key and returns zeros: '
        + 'the query attends to nothing.';
      const naive = scrollBox(make, 'aw-formula-lines', 'A naive softmax of a fully masked row');
      naive.append(
        mathElement(doc, '\\max_j s_j = -\\infty,\\quad e^{\\,s_j - \\max} = e^{-\\infty - (-\\infty)} = e^{\\text{NaN}} = \\text{NaN}', { display: true }),
        mathElement(doc, '\\sum_j e^{s_j} = \\sum_j e^{-\\infty} = 0,\\quad \\frac{0}{0} = \\text{NaN}', { display: true }),
      );
      body.append(now, engineLine, why, naive);
    },
  };
}

/** −∞ against −1e9 in a row's masked scores: the same with one real score left, not with none. */
function createFinitePanel(make) {
  const element = make('section', 'aw-panel aw-mask-finite');
  element.append(make('h4', '', '\u2212\u221e or a large negative number?'));
  element.append(make('p', 'aw-small', 'Many implementations write \u22121e9 into the masked scores instead of \u2212\u221e. '
    + 'Below, the engine\u2019s softmax runs twice on this row\u2019s raw scores QK\u1d40 with the scale 1/\u221ad_k = 0.5: '
    + 'once with \u22121e9 in place of each masked score, once with the mask itself.'));
  const tableBox = scrollBox(make, 'aw-table-scroll', 'Minus infinity against minus 1e9');
  const note = make('p', 'aw-small');
  element.append(tableBox, note);
  return {
    element,
    draw({ engine, say, result, current }) {
      const i = current.row;
      const scores = result.base.scores[i];
      const allowedRow = result.allowed[i];
      const withFinite = scores.map((s, j) => (allowedRow[j] ? s : FINITE_MASK));
      const allFinite = scores.map(() => FINITE_MASK);
      const runs = attempt(say, () => ({
        finite: engine.softmax({ x: [withFinite], scale: SCALE }),
        masked: engine.softmax({ x: [scores], scale: SCALE, mask: [allowedRow] }),
        finiteAll: engine.softmax({ x: [allFinite], scale: SCALE }),
        maskedAll: engine.softmax({ x: [scores], scale: SCALE, mask: [scores.map(() => false)] }),
      }));
      if (!runs) return;
      const rows = TOKENS.map((token, j) => {
        const tr = make('tr', allowedRow[j] ? '' : 'aw-masked-row');
        const th = make('th', '', token);
        th.scope = 'row';
        const input = allowedRow[j] ? numberCell(make, withFinite[j]) : make('td', '', '\u22121e9');
        tr.append(th, input, numberCell(make, runs.finite.weights[0][j], '', 'finite'), numberCell(make, runs.masked.weights[0][j], '', 'masked'),
          numberCell(make, runs.finiteAll.weights[0][j], '', 'finite-all'), numberCell(make, runs.maskedAll.weights[0][j], '', 'masked-all'));
        return tr;
      });
      tableBox.replaceChildren(dataTable(make,
        ['key', 'score (\u22121e9 if masked)', 'weight, \u22121e9', 'weight, mask', 'whole row \u22121e9', 'whole row masked'], rows));
      const same = runs.finite.weights[0].every((w, j) => w === runs.masked.weights[0][j]);
      note.textContent = `${same
        ? 'With at least one real score in the row the two agree exactly: exp of a score near \u22125\u00b710\u2078 underflows to 0.'
        : 'Here the two differ: the finite stand-in still takes a share of the weight.'} `
        + 'They part ways on a row where every key is masked: \u22121e9 everywhere is just a constant row, and the softmax of a '
        + 'constant row is uniform, so the query spreads its attention evenly over keys it was told to ignore (padding included). '
        + 'With \u2212\u221e the engine returns zeros instead.';
    },
  };
}

function describeWeight(r, label) {
  return (i, j) => {
    const scaled = r.scaled[i][j];
    if (scaled === -Infinity) return `${label}: masked, so the score is \u2212\u221e and exp(\u2212\u221e) = 0`;
    return `${label}: scaled score ${formatNumber(scaled)}; weight = its exponential over the sum of the row\u2019s exponentials`;
  };
}

export function mount(element, { engine, presets = null, state = {}, onChange = () => {} }) {
  const { doc, make, root, id, say } = sectionRoot(element, {
    name: 'masks',
    title: 'Masks: which keys each query may see',
    intro: [
      'A mask removes some keys from a query\u2019s view before the softmax: their scaled scores become \u2212\u221e, '
      + 'so their exponentials are 0 and the remaining weights are shared out again among the keys that are left. '
      + 'Combine a base mask with key padding and a local window, or click cells to build your own.',
    ],
  });

  const store = sectionState({
    initial: { base: 'causal', custom: allAllowed(), padding: false, keyLength: 4, local: false, window: 1, row: 2, seed: 7 },
    normalise,
    show,
    onChange,
    copy: (current) => ({ ...current, custom: current.custom.map((row) => row.slice()) }),
  });
  const current = () => store.current;
  const update = (change) => store.update(change);
  let inputs = inputsFor(store.current.seed);
  let result = null; // { base, masked, allowed }

  const controls = createControls(doc, make, { current, update });
  root.append(controls.element);

  // ---- Mask grid and heatmaps ----
  const stage = make('div', 'aw-mask-stage');
  const grid = createMaskGrid(make, id, toggle);
  const heatBox = make('div', 'aw-heatmaps aw-mask-heatmaps');
  const heatDetail = make('p', 'aw-heatmap-detail');
  stage.append(grid.element, heatBox);
  root.append(stage, heatDetail);
  const heatBefore = createHeatmap(heatBox, { title: 'Weights without a mask', name: 'weight without mask', detailElement: heatDetail });
  const heatAfter = createHeatmap(heatBox, { title: 'Weights with this mask', name: 'weight with mask', detailElement: heatDetail });
  grid.build();

  // What the base mask allows, as the engine reports it: where a custom mask starts.
  function baseAllowed() {
    const baseOnly = attempt(say, () => engine.scaledDotProduct({ ...inputs, mask: store.current.base }));
    return baseOnly && baseOnly.scaled.map((row) => row.map((value) => value !== -Infinity));
  }

  // Flipping a cell starts a custom mask from what the base mask allowed,
  // so the learner edits what they see.
  function toggle(i, j) {
    let custom = store.current.base === 'custom' ? store.current.custom : baseAllowed();
    if (!custom) return;
    custom = custom.map((row) => row.slice());
    custom[i][j] = !custom[i][j];
    update({ base: 'custom', custom, row: i });
    grid.buttons[i][j].focus();
  }

  function blockWholeRow() {
    let custom = store.current.base === 'custom' ? store.current.custom : baseAllowed();
    if (!custom) return;
    custom = custom.map((row, i) => (i === store.current.row ? row.map(() => false) : row.slice()));
    update({ base: 'custom', custom });
  }

  const panels = [
    createInspector(doc, make, { current, update, blockWholeRow }),
    createEmptyPanel(doc, make),
    createFinitePanel(make),
  ];
  root.append(...panels.map((panel) => panel.element));

  function draw() {
    result = attempt(say, () => {
      const base = engine.scaledDotProduct({ ...inputs });
      const masked = engine.scaledDotProduct({ ...inputs, ...maskFields(store.current) });
      const allowed = masked.scaled.map((row) => row.map((value) => value !== -Infinity));
      return { base, masked, allowed };
    }) ?? result;
    if (!result) return;
    grid.draw(result, store.current);
    const labels = { rowLabels: TOKENS, colLabels: TOKENS, domain: [0, 1] };
    heatBefore.update({ ...labels, values: result.base.weights, describe: describeWeight(result.base, 'no mask') });
    heatAfter.update({ ...labels, values: result.masked.weights, describe: describeWeight(result.masked, 'with the mask') });
    for (const panel of panels) panel.draw({ engine, say, result, current: store.current });
  }

  function show(next, previous) {
    if (next.seed !== previous.seed) inputs = inputsFor(next.seed);
    controls.sync(next);
    panels[0].sync(next);
    draw();
  }

  store.setState(state);

  appendClaims(root, presets, 'masks');
  return {
    getState: store.getState,
    setState: (next = {}) => store.setState(next),
    destroy() {
      heatBefore.destroy();
      heatAfter.destroy();
      root.remove();
    },
  };
}
