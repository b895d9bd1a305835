// The multi-head section: X projected to Q, K, V; their columns split into
// heads (each block its own colour); every head attending on its own; the
// head outputs concatenated and mixed by W_O. A small player steps through
// the stages; a shape diagram sets the tutorial's 512 / 8 = 64 next to the
// sizes used here. A select switches to the multi-head shapes presets of
// presets.json (tutorial 004's 4 × 512 with 8 heads, tutorial 001's 128 / 4):
// the same stages at full size, wide matrices cut to their first columns.
//
//   mount(element, { engine, presets?, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   onChange(state) after each change the learner makes
//   state: { numHeads, seed, step, preset? } (preset: a shapes preset's id; absent = the small example)
//   presets: presets.json, for the shapes presets and the tutorials' claims shown here
//
// Every number comes from the engine's multiHead.

import { appendClaims } from '../ui/claims.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createMatrixView } from '../ui/matrix-editor.js';
import { createPlayer } from '../ui/player.js';
import { mount as mountTokenLines } from '../ui/token-lines.js';
import { formatNumber } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import {
  attempt, button, choice, clampInt, normalDraws, randomMatrix, scrollBox, sectionRoot, sectionState, seededRandom,
} from './sections-common.js';
import { isMultiHeadPreset, presetInput, tutorialName } from '../presets.js';

const TOKENS = ['The', 'cat', 'sat', 'down'];
const D_MODEL = 8;
const HEAD_CHOICES = [1, 2, 4, 8]; // the divisors of d_model
const TUTORIAL = { tokens: 4, dModel: 512, heads: 8 }; // tutorial 004's shapes
const SHOWN_COLUMNS = 4; // of a wide matrix of a shapes preset; the rest are counted, not drawn

const STEPS = [
  {
    title: 'Project X into queries, keys and values',
    text: 'Each token\u2019s row of X (d_model wide) is multiplied by W_Q, W_K and W_V. Each product is still d_model wide: '
      + 'one projection serves all the heads at once.',
    formula: 'Q = XW_Q,\\quad K = XW_K,\\quad V = XW_V',
  },
  {
    title: 'Split the columns into heads',
    text: 'The d_model columns are cut into equal blocks, one per head, each d_k = d_model / h wide. Nothing is computed here: '
      + 'head i simply reads its own block of columns of Q, K and V.',
    formula: 'd_k = d_model / h',
  },
  {
    title: 'Every head attends on its own',
    text: 'Each head runs scaled dot-product attention on its slice, dividing by \u221ad_k of the head (not of d_model). '
      + 'Different slices give different scores, so the heads can look at different tokens.',
    formula: '\\text{head}_i = \\operatorname{softmax}\\!\\left(\\frac{Q_i K_i^{\\mathsf T}}{\\sqrt{d_k}}\\right) V_i',
  },
  {
    title: 'Concatenate the head outputs',
    text: 'The heads\u2019 outputs, each d_k wide, are laid side by side in head order, which gives back a d_model-wide row per token.',
    formula: '\\operatorname{Concat}(\\text{head}_1, \\dots, \\text{head}_h)',
  },
  {
    title: 'Mix the heads with W_O',
    text: 'A last projection W_O lets every output column draw on every head. Without it the heads\u2019 results would stay in separate columns.',
    formula: '\\operatorname{MultiHead}(X) = \\operatorname{Concat}(\\text{head}_1, \\dots, \\text{head}_h)\\, W_O',
  },
];

/** The seeded inputs the widget shows (exported for the tests). */
export function inputsFor(seed) {
  const draw = normalDraws(seededRandom(seed));
  const weight = () => randomMatrix(() => draw() * 0.5, D_MODEL, D_MODEL);
  return { x: randomMatrix(draw, TOKENS.length, D_MODEL), wq: weight(), wk: weight(), wv: weight(), wo: weight() };
}

/** Column numbers from first + 1: a head's block of Q, K or V keeps the numbers it has there. */
const columnLabels = (n, first = 0) => Array.from({ length: n }, (_, j) => String(first + j + 1));

const sizeOf = (matrix) => `${matrix.length} \u00d7 ${matrix[0].length}`;

/** A wide matrix cut to its first columns (and rows), with a title that says what is left out. */
function abbreviated(title, values, rowLabels, colLabels) {
  const rows = values.length > 2 * SHOWN_COLUMNS ? SHOWN_COLUMNS : values.length;
  const columns = Math.min(SHOWN_COLUMNS, values[0].length);
  const hiddenRows = values.length - rows;
  const hiddenColumns = values[0].length - columns;
  const left = [hiddenColumns && `\u2026 ${hiddenColumns} more columns`, hiddenRows && `\u2026 ${hiddenRows} more rows`].filter(Boolean);
  return {
    title: `${title} (${sizeOf(values)}${left.length ? `; ${left.join(', ')}` : ''})`,
    values: values.slice(0, rows).map((row) => row.slice(0, columns)),
    rowLabels: rowLabels.slice(0, rows),
    colLabels: colLabels.slice(0, columns),
  };
}

/** One sentence of sizes per stage. */
function shapeSentence(step, tokens, dModel, heads) {
  const dk = dModel / heads;
  const n = tokens;
  const lastHead = heads > 2 ? `, \u2026, head ${heads} columns ${dModel - dk + 1}\u2013${dModel}` : '';
  return [
    `Shapes: X ${n} \u00d7 ${dModel} times W_Q, W_K, W_V (${dModel} \u00d7 ${dModel}) gives Q, K and V, each ${n} \u00d7 ${dModel}.`,
    `Shapes: ${heads} heads of ${n} \u00d7 ${dk}: head 1 reads columns 1\u2013${dk}`
      + (heads > 1 ? `, head 2 columns ${dk + 1}\u2013${2 * dk}${lastHead}.` : '.'),
    `Shapes: in each head Q_i K_i\u1d40 is ${n} \u00d7 ${n} (the weights below) and the output is ${n} \u00d7 ${dk}.`,
    `Shapes: ${heads} outputs of ${n} \u00d7 ${dk} side by side: ${n} \u00d7 ${heads}\u00b7${dk} = ${n} \u00d7 ${dModel}.`,
    `Shapes: Concat ${n} \u00d7 ${dModel} times W_O (${dModel} \u00d7 ${dModel}) gives the output, ${n} \u00d7 ${dModel}.`,
  ][step];
}

// What each stage shows: its matrices (in order), those marked by head,
// and whether the heads' weights and outputs are on screen.
const STAGE_VIEWS = [
  { mats: ['x', 'q', 'k', 'v'], byHead: [], heatmaps: false, outputs: false },
  { mats: ['q', 'k', 'v'], byHead: ['q', 'k', 'v'], heatmaps: false, outputs: false },
  { mats: [], byHead: [], heatmaps: true, outputs: true },
  { mats: ['concat'], byHead: ['concat'], heatmaps: false, outputs: true },
  { mats: ['concat', 'wo', 'output'], byHead: ['concat'], heatmaps: false, outputs: false },
];

/** The sizes from X to the output as a row of boxes and arrows, into target. */
function drawShapes(make, target, tokens, dModel, heads) {
  const dk = dModel / heads;
  const box = (name, shape) => {
    const b = make('span', 'aw-shape');
    b.append(make('b', '', name), make('span', '', shape));
    return b;
  };
  const arrow = (text = '\u2192') => make('span', 'aw-shape-arrow', text);
  const headsBox = make('span', 'aw-shape aw-heads-box');
  headsBox.setAttribute('aria-label', `${heads} heads of ${tokens} \u00d7 ${dk}`);
  const shown = Math.min(heads, 8);
  for (let h = 0; h < shown; h++) headsBox.append(make('span', `aw-shape-head aw-head-${h}`, `${tokens}\u00d7${dk}`));
  target.replaceChildren(
    box('X', `${tokens} \u00d7 ${dModel}`), arrow('\u00d7 W_Q, W_K, W_V (' + `${dModel} \u00d7 ${dModel}) \u2192`),
    box('Q, K, V', `${tokens} \u00d7 ${dModel}`), arrow(`split into ${heads} \u2192`), headsBox,
    arrow('attend, concat \u2192'), box('Concat', `${tokens} \u00d7 ${heads}\u00b7${dk} = ${tokens} \u00d7 ${dModel}`),
    arrow(`\u00d7 W_O (${dModel} \u00d7 ${dModel}) \u2192`), box('Output', `${tokens} \u00d7 ${dModel}`),
  );
}

/** The example, the number of heads and a new seed; sync(current, model) shows a state. */
function createControls(doc, make, { store, shapesPresets }) {
  const element = make('div', 'aw-controls');
  const headChoice = choice(doc, {
    label: 'Heads (h)', name: 'numHeads', value: store.current.numHeads,
    options: HEAD_CHOICES.map((h) => ({ value: h, label: `${h} (d_k = ${D_MODEL / h})` })),
    onChange: (value) => store.update({ numHeads: Number(value) }),
  });
  const newSeed = button(doc, { label: 'New random X and weights', onClick: () => store.update({ seed: store.current.seed + 1 }) });
  const exampleChoice = choice(doc, {
    label: 'Example', name: 'preset', value: '',
    options: [
      { value: '', label: `Small: ${TOKENS.length} tokens, d_model ${D_MODEL}` },
      ...shapesPresets.map((preset) => ({ value: preset.id, label: preset.title })),
    ],
    onChange: (value) => store.update({ preset: value || null, step: 0 }),
  });
  exampleChoice.element.classList.add('aw-mh-example');
  if (shapesPresets.length === 0) exampleChoice.element.classList.add('aw-mh-hidden');
  element.append(exampleChoice.element, headChoice.element, newSeed);
  return {
    element,
    sync(current) {
      headChoice.select.value = String(current.numHeads);
      exampleChoice.select.value = current.preset ?? '';
    },
    /** A shapes preset fixes its heads and numbers: their controls give way. */
    showPreset(isPreset) {
      headChoice.element.classList.toggle('aw-mh-hidden', isPreset);
      newSeed.classList.toggle('aw-mh-hidden', isPreset);
    },
  };
}

/** The shapes panel: the tutorial's sizes, drawn once, and those on screen (show(model)). */
function createShapesPanel(make) {
  const element = make('section', 'aw-panel');
  element.append(make('h4', '', 'The shapes'));
  const shapeTutorial = make('div', 'aw-shape-diagram');
  const shapeHere = make('div', 'aw-shape-diagram');
  const tutorialLabel = make('p', 'aw-small', `In ${tutorialName('004_ad55b564bf9e6848.txt')}: ${TUTORIAL.tokens} tokens, d_model = ${TUTORIAL.dModel}, `
    + `${TUTORIAL.heads} heads, each with d_k = ${TUTORIAL.dModel / TUTORIAL.heads} of the ${TUTORIAL.dModel} columns.`);
  const hereLabel = make('p', 'aw-small');
  element.append(tutorialLabel, shapeTutorial, hereLabel, shapeHere);
  drawShapes(make, shapeTutorial, TUTORIAL.tokens, TUTORIAL.dModel, TUTORIAL.heads);
  return {
    element,
    show({ tokens, dModel, numHeads, preset }) {
      const dk = dModel / numHeads;
      hereLabel.textContent = `${preset ? `\u201c${preset.title}\u201d` : 'Here'}: ${tokens.length} tokens, d_model = ${dModel}, `
        + `${numHeads} head${numHeads > 1 ? 's' : ''}, each with d_k = ${dk} of the ${dModel} columns.`
        + (preset ? ' Seeded random numbers; wide matrices show their first columns.' : '');
      drawShapes(make, shapeHere, tokens.length, dModel, numHeads);
      // The tutorial's own sizes need their diagram only once.
      const asTutorial = tokens.length === TUTORIAL.tokens && dModel === TUTORIAL.dModel && numHeads === TUTORIAL.heads;
      shapeHere.classList.toggle('aw-mh-hidden', asTutorial);
      if (asTutorial) hereLabel.textContent += ' These are the tutorial\u2019s sizes, drawn above.';
    },
  };
}

/** Per head, in headsRow: { box, heatmap, lines, outView }, its weights twice
 * (a heatmap, lines between the tokens) and its output. */
function createHeadParts(make, headsRow, heatDetail, { numHeads, tokens }) {
  return Array.from({ length: numHeads }, (_, h) => {
    const box = make('div', `aw-mh-head aw-head-${h % 8}`);
    box.dataset.head = String(h);
    headsRow.append(box);
    const weightsBox = make('div', 'aw-mh-weights');
    box.append(weightsBox);
    const heatmap = createHeatmap(weightsBox, { title: `Head ${h + 1}: weights (${tokens.length} \u00d7 ${tokens.length})`, name: `head ${h + 1} weight`, detailElement: heatDetail });
    const lines = mountTokenLines(weightsBox, { title: `Head ${h + 1}: attention as lines`, note: h === 0 });
    const outView = createMatrixView(box, { title: `Head ${h + 1}: output`, name: `head ${h + 1} output` });
    return { box, heatmap, lines, outView };
  });
}

/** The stage: the step's title, sentence, sizes and formula, the matrices and the heads. */
function createStage(doc, make) {
  const element = make('div', 'aw-mh-stage');
  const stepTitle = make('p', 'aw-mh-step');
  stepTitle.setAttribute('aria-live', 'polite');
  const stepText = make('p', 'aw-mh-text');
  const stepShapes = make('p', 'aw-mh-shapes');
  const stepFormula = scrollBox(make, 'aw-formula-lines', 'The stage as a formula');
  const mats = make('div', 'aw-mh-mats');
  const headsRow = make('div', 'aw-mh-heads');
  const heatDetail = make('p', 'aw-heatmap-detail');
  element.append(stepTitle, stepText, stepShapes, stepFormula, mats, headsRow, heatDetail);
  return {
    element, mats, headsRow, heatDetail,
    explain(index, model) {
      const step = STEPS[index];
      stepTitle.textContent = `${index + 1}. ${step.title}`;
      stepText.textContent = step.text;
      stepShapes.textContent = shapeSentence(index, model.tokens.length, model.dModel, model.numHeads);
      stepFormula.replaceChildren(mathElement(doc, step.formula, { display: true }));
    },
  };
}

/** The stage's matrices, in mats. */
function createViews(mats) {
  return {
    x: createMatrixView(mats, { title: 'X (tokens \u00d7 d_model)', name: 'X' }),
    q: createMatrixView(mats, { title: 'Q = XW_Q', name: 'Q' }),
    k: createMatrixView(mats, { title: 'K = XW_K', name: 'K' }),
    v: createMatrixView(mats, { title: 'V = XW_V', name: 'V' }),
    concat: createMatrixView(mats, { title: 'Concat of the head outputs', name: 'Concat' }),
    wo: createMatrixView(mats, { title: 'W_O', name: 'W_O' }),
    output: createMatrixView(mats, { title: 'Output = Concat \u00b7 W_O', name: 'Output' }),
  };
}

/**
 * The example a state names: the small one with the seeded inputs, or a
 * shapes preset, whose input is generated once (kept in generated by id).
 */
function modelOf(current, { inputs, shapesById, generated }) {
  const preset = shapesById.get(current.preset);
  if (!preset) return { tokens: TOKENS, dModel: D_MODEL, numHeads: current.numHeads,
      input: { ...inputs, numHeads: current.numHeads } };
  if (!generated.has(preset.id)) generated.set(preset.id, presetInput(preset));
  const input = generated.get(preset.id);
  const tokens = input.tokens ?? input.x.map((_, i) => `tok ${i + 1}`);
  return { tokens, dModel: input.x[0].length, numHeads: input.numHeads, input, preset };
}

// A preset field only when a shapes preset is shown: the small example's
// state is { numHeads, seed, step }.
function normaliseWith(shapesById) {
  return (next) => ({
    numHeads: HEAD_CHOICES.includes(Number(next.numHeads)) ? Number(next.numHeads) : 2,
    seed: clampInt(next.seed, 0, 2 ** 31, 5),
    step: clampInt(next.step, 0, STEPS.length - 1, 0),
    ...(shapesById.has(next.preset) ? { preset: next.preset } : {}),
  });
}

export function mount(element, { engine, presets = null, state = {}, onChange = () => {} }) {
  const shapesPresets = (presets?.presets ?? []).filter(isMultiHeadPreset);
  const shapesById = new Map(shapesPresets.map((preset) => [preset.id, preset]));
  const generated = new Map(); // preset id -> its engine input (generated once)

  const { doc, make, root, say } = sectionRoot(element, {
    name: 'multihead',
    title: 'Multi-head attention: several smaller attentions side by side',
    intro: [
      'One attention computes one weighted average per token. Multi-head attention cuts the model width into h slices and '
      + 'lets each slice attend separately, so one head can follow one relation while another follows a different one. '
      + `The small example has ${TOKENS.length} tokens with d_model = ${D_MODEL}: choose how many heads share it, or pick a tutorial's full-size shapes, and step through the stages.`,
    ],
  });

  const store = sectionState({ initial: { numHeads: 2, seed: 5, step: 0 }, normalise: normaliseWith(shapesById), show,
      onChange });
  let inputs = inputsFor(store.current.seed);
  let result = null;

  const controls = createControls(doc, make, { store, shapesPresets });
  root.append(controls.element);
  const shapes = createShapesPanel(make);
  root.append(shapes.element);

  // Player and stage
  const playerSlot = make('div');
  root.append(playerSlot);
  const stage = createStage(doc, make);
  root.append(stage.element);
  const { mats, headsRow } = stage;

  const views = createViews(mats);
  let headParts = []; // per head: { box, heatmap, lines, outView }
  let model = null; // what is on screen: { tokens, dModel, numHeads, input }

  const setTitle = (view, title) => { view.element.querySelector('.aw-matrix-title').textContent = title; };

  /** Shows a matrix whole (the small example) or cut to its first columns (a shapes preset). */
  function showMatrix(view, title, values, rowLabels, colLabels, { input = false } = {}) {
    const shown = model.preset
      ? abbreviated(title, values, rowLabels, colLabels)
      : { title, values, rowLabels, colLabels };
    setTitle(view, shown.title);
    view.update({ values: shown.values, rowLabels: shown.rowLabels, colLabels: shown.colLabels, input });
  }

  /** How many of n columns are drawn. */
  const shownColumns = (n) => (model.preset ? Math.min(SHOWN_COLUMNS, n) : n);

  const player = createPlayer(playerSlot, {
    count: STEPS.length,
    onStep: (index) => { store.current.step = index; showStep(); onChange(store.getState()); },
    describeStep: (index) => STEPS[index].title,
    watch: stage.element,
  });

  function headColumns() {
    const dk = model.dModel / model.numHeads;
    return new Map(Array.from({ length: shownColumns(model.dModel) }, (_, j) => [j, `aw-head-${Math.floor(j / dk)}`]));
  }

  function buildHeads() {
    for (const part of headParts) {
      part.heatmap.destroy();
      part.lines.destroy();
      part.outView.destroy();
      part.box.remove();
    }
    headParts = createHeadParts(make, headsRow, stage.heatDetail, model);
  }

  function drawHeads() {
    const { tokens, dModel, numHeads } = model;
    const dk = dModel / numHeads;
    result.heads.forEach((head, h) => {
      const part = headParts[h];
      part.heatmap.update({
        values: head.weights, rowLabels: tokens, colLabels: tokens, domain: [0, 1],
        describe: (i, j) => `head ${h + 1}: score ${formatNumber(head.scores[i][j])} (Q block \u00b7 K block), `
          + `scaled by 1/\u221a${dk} to ${formatNumber(head.scaled[i][j])}, then the row softmax`,
      });
      part.lines.update(tokens, head.weights);
      // abbreviated() adds the size when the matrix is cut; the small example says it here.
      const title = model.preset ? `Head ${h + 1}: output` : `Head ${h + 1}: output (${tokens.length} \u00d7 ${dk})`;
      showMatrix(part.outView, title, head.output, tokens, columnLabels(dk, h * dk));
      part.outView.mark({ cols: new Map(Array.from({ length: shownColumns(dk) }, (_, j) => [j, `aw-head-${h % 8}`])) });
    });
  }

  function draw() {
    const nextModel = modelOf(store.current, { inputs, shapesById, generated });
    const next = attempt(say, () => engine.multiHead(nextModel.input));
    if (!next) return;
    result = next;
    const previousHeads = model?.numHeads;
    model = nextModel;
    const { tokens, dModel, numHeads, input } = model;
    root.classList.toggle('aw-mh-preset', Boolean(model.preset));
    controls.showPreset(Boolean(model.preset));
    shapes.show(model);
    const cols = columnLabels(dModel);
    showMatrix(views.x, `X (tokens \u00d7 d_model)`, input.x, tokens, cols, { input: true });
    showMatrix(views.q, 'Q = XW_Q', result.q, tokens, cols);
    showMatrix(views.k, 'K = XW_K', result.k, tokens, cols);
    showMatrix(views.v, 'V = XW_V', result.v, tokens, cols);
    showMatrix(views.concat, 'Concat of the head outputs', result.concat, tokens, cols);
    showMatrix(views.wo, 'W_O', input.wo, cols, cols, { input: true });
    showMatrix(views.output, 'Output = Concat \u00b7 W_O', result.output, tokens, cols);
    if (previousHeads !== numHeads || headParts.length !== numHeads) buildHeads();
    drawHeads();
    showStep();
  }

  function showStep() {
    const { step: index } = store.current;
    stage.explain(index, model);
    player.setStep(index);
    const { mats: names, byHead, heatmaps, outputs } = STAGE_VIEWS[index];
    for (const view of Object.values(views)) view.mark({});
    for (const [name, view] of Object.entries(views)) view.setVisible(names.includes(name));
    for (const name of names) mats.append(views[name].element); // in the order of the step
    const marks = { cols: headColumns() };
    for (const name of byHead) views[name].mark(marks);
    headsRow.classList.toggle('aw-mh-hidden', !heatmaps && !outputs);
    for (const part of headParts) {
      part.heatmap.element.classList.toggle('aw-mh-hidden', !heatmaps);
      part.lines.element.classList.toggle('aw-mh-hidden', !heatmaps);
      part.outView.setVisible(outputs);
    }
    // At the concat step the head outputs come first, then their concatenation.
    if (index === 3) headsRow.after(mats); else mats.after(headsRow);
  }

  function show(current, previous) {
    if (current.seed !== previous.seed) inputs = inputsFor(current.seed);
    controls.sync(current);
    draw();
  }

  store.setState(state);

  appendClaims(root, presets, 'multihead');
  return {
    getState: store.getState,
    setState: store.setState,
    destroy() {
      player.destroy();
      for (const part of headParts) { part.heatmap.destroy(); part.outView.destroy(); }
      for (const view of Object.values(views)) view.destroy();
      root.remove();
    },
  };
}
