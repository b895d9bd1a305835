// The walkthrough's overview: the whole computation of the example on
// screen in one strip (its inputs, the scores, the weights as lines and as
// a small heatmap, the output), each cell coloured by its value from the
// step that computes it on, the current step's stage lit and the cells it
// produces outlined. It draws the model's numbers (walkthrough-steps.js)
// and computes none; each stage is a button that jumps to its first step.
// It is a map, not a home for numbers (those are in the step's views): a
// square names its cell and the step that computes it (its title, on
// hover), and the first step's caption says what the colours mean.
//
//   const overview = mount(element, { onJump(stepIndex) })
//     -> { element, update(model, steps), show(current, { through? }), destroy() }
//   model, steps: buildModel and buildSteps; current: the step index; through:
//   the last step whose numbers show (by default current)

import { viridis } from '../ui/heatmap.js';
import { svgElement } from '../ui/svg.js';
import { builder } from '../ui/dom.js';
import { firstComputed } from './walkthrough-steps.js';

// The largest cell, in CSS pixels (smaller on a phone), and the height and
// width a grid may take before its cells shrink (a 16 × 64 X stays a small
// picture).
const MAX_CELL = 24;
const MAX_PHONE_CELL = 14;
const MAX_GRID_HEIGHT = 150;
const MAX_GRID_WIDTH = 170;
const PHONE = '(max-width: 600px)';
// Row labels are drawn only where a row is tall enough to read them.
const MIN_LABELLED_ROW = 12;
const LINES_WIDTH = 90;
const PHONE_LINES_WIDTH = 36;

const GRID_TITLES = {
  x: 'X', wq: 'W_Q', wk: 'W_K', wv: 'W_V', q: 'Q', k: 'K', v: 'V', input: 'x',
  scores: 'Q\u00b7K\u1d40', scaled: 'scaled', weights: 'weights', output: 'output',
};

/**
 * The strip's stages for a model, each { id, title, grids: [[name, ...]],
 * lines }: a grid shows the last of its names that a step has computed
 * (the scores, then the same cells scaled). A matrix no step computes (an
 * unscaled softmax's input, read as "scaled") is its input stage's.
 */
function stagesOf(model, steps) {
  const produced = new Set(steps.flatMap((step) => step.produces.map(({ field }) => field)));
  const computed = (name) => Boolean(model.mats[name]) && !model.mats[name].input && produced.has(name);
  const inputs = Object.values(model.mats).filter((mat) => mat.input).map((mat) => [mat.name]);
  const stages = [{ id: 'inputs', title: inputs.map(([name]) => GRID_TITLES[name]).join(', '), grids: inputs }];
  if (computed('q')) stages.push({ id: 'qkv', title: 'Q, K, V', grids: [['q'], ['k'], ['v']] });
  const scores = ['scores', 'scaled'].filter(computed);
  if (scores.length > 0) {
    const title = model.mode === 'softmax' ? 'Softmax input' : model.mats.scaled ? 'Scores, scaled' : 'Scores';
    stages.push({ id: 'scores', title, grids: [scores] });
  }
  if (computed('weights')) stages.push({ id: 'weights', title: 'Weights', grids: [['weights']], lines: model.mode !== 'softmax' });
  if (computed('output')) stages.push({ id: 'output', title: 'Output', grids: [['output']] });
  return stages;
}

// A signed value's colour: blue below zero, orange above, its opacity the
// size against the grid's largest (readable with the common colour-vision
// deficiencies, on a light or a dark page).
function signedFill(value, largest) {
  const t = largest > 0 ? Math.min(1, Math.abs(value) / largest) : 0;
  return { fill: value < 0 ? '#2166ac' : '#e66101', opacity: 0.12 + 0.88 * t };
}

/** A column of labels, one per row of cell pixels. */
function rowLabels(make, labels, cell, className = '') {
  const column = make('span', `aw-overview-labels ${className}`);
  for (const label of labels) {
    const item = make('span', 'aw-overview-label', label);
    item.style.height = `${cell}px`;
    item.style.lineHeight = `${cell}px`;
    column.append(item);
  }
  return column;
}

/** A matrix as a grid of cells (names: the matrices its cells show in turn); each cell drawn is added to cells. */
function grid(make, model, names, cell, cells) {
  const values = model.mats[names[0]].values;
  const box = make('span', 'aw-overview-grid');
  const doc = box.ownerDocument;
  const phone = doc.defaultView.matchMedia?.(PHONE).matches;
  const width = Math.max(2, Math.min(cell,
      Math.floor((phone ? MAX_GRID_WIDTH / 2 : MAX_GRID_WIDTH) / values[0].length)));
  box.dataset.matrix = names.at(-1);
  const svg = svgElement(doc, 'svg', {
    width: width * values[0].length, height: cell * values.length, 'aria-hidden': 'true',
  });
  values.forEach((row, i) => row.forEach((_, j) => {
    const rect = svgElement(doc, 'rect', { x: j * width + 0.5, y: i * cell + 0.5, width: width - 1, height: cell - 1, rx: 1.5 });
    const title = svgElement(doc, 'title', {});
    rect.append(title);
    svg.append(rect);
    cells.push({ rect, title, names, i, j, drawn: null });
  }));
  box.append(svg, make('span', 'aw-overview-name', names.map((name) => GRID_TITLES[name]).join(' \u2192 ')));
  return box;
}

/** The weights as lines from each query to each key; each line drawn is added to lines. */
function weightLines(doc, model, cell, lines) {
  const { qTokens, kTokens } = model;
  const width = doc.defaultView.matchMedia?.(PHONE).matches ? PHONE_LINES_WIDTH : LINES_WIDTH;
  const svg = svgElement(doc, 'svg', {
    class: 'aw-overview-lines', width, height: cell * Math.max(qTokens.length, kTokens.length), 'aria-hidden': 'true',
  });
  qTokens.forEach((_, i) => kTokens.forEach((__, j) => {
    const line = svgElement(doc, 'line', { x1: 2, y1: (i + 0.5) * cell, x2: width - 2, y2: (j + 0.5) * cell });
    svg.append(line);
    lines.push({ line, i, j, drawn: null });
  }));
  return svg;
}

/**
 * Each cell in its colour (known(name, i, j): whether the step shown has
 * computed that cell), outlined when the step computes it now; a cell is
 * drawn again only when what it shows changes.
 */
function paintCells(cells, model, now, known) {
  const largest = new Map();
  for (const item of cells) {
    const name = item.names.findLast((candidate) => known(candidate, item.i, item.j));
    const value = name === undefined ? undefined : model.mats[name].values[item.i][item.j];
    const lit = item.names.some((candidate) => now.has(`${candidate},${item.i},${item.j}`));
    let state = 'future';
    let paint = null;
    if (value === -Infinity) state = 'masked';
    else if (value !== undefined) {
      if (name === 'weights') paint = { fill: viridis(value), opacity: 1 };
      else {
        if (!largest.has(name)) largest.set(name,
            Math.max(...model.mats[name].values.flat().filter(Number.isFinite).map(Math.abs)));
        paint = signedFill(value, largest.get(name));
      }
      state = `${paint.fill} ${paint.opacity.toFixed(3)}`;
    }
    const drawn = `${state}${lit ? ' lit' : ''}`;
    if (drawn === item.drawn) continue;
    item.drawn = drawn;
    item.rect.setAttribute('class', ['aw-overview-cell', paint ? '' : `aw-overview-${state}`, lit ? 'aw-overview-now' : '']
      .filter(Boolean).join(' '));
    if (paint) {
      item.rect.setAttribute('fill', paint.fill);
      item.rect.setAttribute('fill-opacity', paint.opacity.toFixed(3));
    } else {
      item.rect.removeAttribute('fill');
      item.rect.removeAttribute('fill-opacity');
    }
  }
}

// The stage a step works in: the one holding what it produces; the inputs
// before anything is computed, none for the steps after (the result, the
// backward pass).
function stageOf(stages, step, current) {
  const fields = new Set(step.produces.map(({ field }) => field));
  const index = stages.findIndex((stage) => stage.grids.flat().some((name) => fields.has(name)));
  if (index >= 0) return index;
  return current === 0 ? 0 : -1;
}

function captionOf(stages, steps, active, current) {
  const where = `Step ${current + 1} of ${steps.length}: ${steps[current].title}`;
  if (active === 0 && current === 0) return `${where}. Each square is a number, orange above 0 and blue below; the rest fills in as it is computed.`;
  return active < 0 ? `${where}.` : `${where}, outlined in ${stages[active].title}.`;
}

/** Each square's name, and the step that computes it (from 1) or that it is given. */
function nameCells(cells, model, firstStep) {
  for (const { title, names, i, j } of cells) {
    const mat = model.mats[names.at(-1)];
    const cell = `${names.map((name) => GRID_TITLES[name]).join(' \u2192 ')}[${mat.rowLabels[i]}, ${mat.colLabels[j]}]`;
    const at = firstStep.get(`${names.at(-1)},${i},${j}`);
    title.textContent = mat.input || at === undefined ? `${cell}: given` : `${cell}: computed at step ${at + 1}`;
  }
}

export function mount(element, { onJump }) {
  const doc = element.ownerDocument;
  const make = builder(doc);
  const root = make('figure', 'aw-overview');
  const strip = make('div', 'aw-overview-strip');
  const caption = make('figcaption', 'aw-overview-caption');
  root.append(strip, caption);
  element.append(root);

  let model = null;
  let stages = [];
  // "name,i,j" -> the index of the step that computes that cell.
  let firstStep = new Map();
  let steps = [];
  // Every drawn cell: { rect, names, i, j, drawn } (drawn: what it shows now).
  let cells = [];
  let lines = [];
  let buttons = [];
  let builtFor = '';

  // A phone turned sideways (or a window resized past a phone's width) draws again.
  const media = doc.defaultView.matchMedia?.(PHONE);
  const redraw = () => {
    if (!model) return;
    build();
    show(shown);
  };
  media?.addEventListener('change', redraw);
  let shown = 0;

  function update(nextModel, nextSteps) {
    model = nextModel;
    steps = nextSteps;
    firstStep = firstComputed(model, steps);
    stages = stagesOf(model, steps);
    const shape = JSON.stringify([stages, model.qTokens, model.kTokens,
      Object.values(model.mats).map((mat) => [mat.name, mat.values.length, mat.values[0].length])]);
    // Rebuilt for a new shape; the same squares, named again for a new step list.
    if (shape !== builtFor) build();
    else nameCells(cells, model, firstStep);
    builtFor = shape;
  }

  function build() {
    strip.replaceChildren();
    cells = [];
    lines = [];
    buttons = [];
    const rows = Math.max(...stages.flatMap((stage) => stage.grids.map(([name]) => model.mats[name].values.length)));
    const phone = doc.defaultView.matchMedia?.(PHONE).matches;
    const cell = Math.max(3, Math.min(phone ? MAX_PHONE_CELL : MAX_CELL, Math.floor(MAX_GRID_HEIGHT / rows)));
    stages.forEach((stage, index) => {
      if (index > 0) strip.append(make('span', 'aw-overview-arrow', '\u2192'));
      // The stage's title is its button; the picture under it is a larger
      // target for the same jump, hidden from assistive technology (the
      // button says where the stage stands).
      const panel = make('div', 'aw-overview-stage');
      panel.dataset.stage = stage.id;
      const button = make('button', 'aw-overview-title', stage.title);
      button.type = 'button';
      const state = make('span', 'aw-visually-hidden');
      button.append(state);
      const body = make('span', 'aw-overview-body');
      body.setAttribute('aria-hidden', 'true');
      const first = model.mats[stage.grids[0][0]];
      const labelled = first.rowLabels === model.qTokens && cell >= MIN_LABELLED_ROW;
      if (labelled) body.append(rowLabels(make, model.qTokens, cell));
      for (const names of stage.grids) body.append(grid(make, model, names, cell, cells));
      if (stage.lines) {
        body.append(weightLines(doc, model, cell, lines));
        body.append(rowLabels(make, model.kTokens, cell, 'aw-overview-keys'));
      }
      panel.append(button, body);
      panel.addEventListener('click', () => onJump(firstStepOf(stage)));
      buttons.push({ panel, button, state });
      strip.append(panel);
    });
    nameCells(cells, model, firstStep);
  }

  function firstStepOf(stage) {
    const names = new Set(stage.grids.flat());
    const index = steps.findIndex((step) => step.produces.some(({ field }) => names.has(field)));
    return index < 0 ? 0 : index;
  }

  const known = (name, i, j, current) => model.mats[name].input || (firstStep.get(`${name},${i},${j}`) ?? Infinity) <= current;

  // through: the last step whose numbers show (the one before `current` while its figure still moves).
  function show(current, { through = current } = {}) {
    if (!model) return;
    shown = current;
    const step = steps[current];
    const now = new Set();
    for (const { field, cells: produced } of step.produces) for (const c of produced) now.add(`${field},${c[0]},${c[1]}`);
    paintCells(cells, model, now, (name, i, j) => known(name, i, j, through));
    const weights = model.mats.weights;
    for (const item of lines) {
      const weight = known('weights', item.i, item.j, through) ? weights.values[item.i][item.j] : 0;
      const drawn = weight > 0 ? weight.toFixed(4) : '';
      if (drawn === item.drawn) continue;
      item.drawn = drawn;
      item.line.setAttribute('stroke-width', String(Math.max(0.5, weight * 6)));
      item.line.setAttribute('stroke-opacity', String(weight > 0 ? 0.2 + 0.8 * weight : 0));
    }
    const active = stageOf(stages, step, current);
    buttons.forEach(({ panel, button, state }, index) => {
      const stage = stages[index];
      const computed = stage.grids.flat().filter((name) => model.mats[name]);
      const shownWhole = (name) => model.mats[name].values
        .every((row, i) => row.every((_, j) => known(name, i, j, through)));
      const done = computed.every(shownWhole);
      panel.classList.toggle('aw-overview-active', index === active);
      if (index === active) button.setAttribute('aria-current', 'step');
      else button.removeAttribute('aria-current');
      const status = done ? 'computed' : index === active ? 'being computed' : 'not computed yet';
      state.textContent = ` (${status}; go to step ${firstStepOf(stage) + 1})`;
    });
    caption.textContent = captionOf(stages, steps, active, current);
  }

  return {
    element: root,
    update,
    show,
    destroy() {
      media?.removeEventListener('change', redraw);
      root.remove();
    },
  };
}
