// The transformer block section: tutorial 003 §24.11's block (multi-head
// attention, a residual sum, LayerNorm, a ReLU feed-forward network, a
// second residual sum and LayerNorm) run by the engine on the tokens of the
// "cat sat mat" example, drawn as a flow diagram: one box per stage in the
// engine's own order with its shape, arrows where a stage reads the one
// before, a skip arrow where a residual sum reads an earlier stage,
// post-norm or pre-norm. A box opens its stage's matrices (beside the
// diagram on a wide screen, under the box on a narrow one); on request the
// gradients of the input and of every parameter.
//
//   mount(element, { engine, presets?, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   presets: presets.json, whose "cat-sat-mat-projections" gives x and the tokens (seeded ones without it)
//   onChange(state) after each change the learner makes
//   state: { norm: 'post'|'pre', gradients: boolean, seed, stage: a step id, or '' for none open }
//
// The stages, their titles, sentences, formulas, sums and what each reads
// are the engine's step list (attn.walkthrough of kind transformerBlock);
// this file lays them out and computes nothing.

import { equationElement } from '../ui/equation.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createMatrixView } from '../ui/matrix-editor.js';
import { mathElement } from '../ui/math.js';
import { tutorialName } from '../presets.js';
import {
  attempt, checkbox, choice, button, clampInt, normalDraws, numberedTokens, randomMatrix, scrollBox, sectionRoot,
      sectionState,
  seededRandom, uniformDraws,
} from './sections-common.js';

const SOURCE_PRESET = 'cat-sat-mat-projections';
const FALLBACK_TOKENS = ['cat', 'sat', 'mat'];
const D_MODEL = 4;
const D_FF = 8;
const HEADS = 2;
const NORMS = [
  { value: 'post', label: 'post-norm (LN after each sum)' },
  { value: 'pre', label: 'pre-norm (LN before each layer)' },
];
// The parameters, in the order the engine's gradients are listed.
const PARAMETERS = ['wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo', 'gamma1', 'beta1', 'w1', 'b1', 'w2', 'b2', 'gamma2', 'beta2'];
const gradientName = (name) => `grad${name[0].toUpperCase()}${name.slice(1)}`;

/** The tokens and x of the example: the preset's, or seeded ones without presets. */
export function tokensOf(presets) {
  const preset = presets?.presets?.find((p) => p.id === SOURCE_PRESET);
  if (preset) return { tokens: preset.input.tokens, x: preset.input.x, source: `x from ${tutorialName(preset.tutorial)}` };
  return { tokens: FALLBACK_TOKENS, x: randomMatrix(normalDraws(seededRandom(1)), FALLBACK_TOKENS.length, D_MODEL), source: 'a random x' };
}

/**
 * The block's seeded parameters (one decimal, so they read well): standard
 * normal weights, biases in [−0.5, 0.5], LayerNorm's gamma 1 and beta 0 as
 * a block starts training; and dO, the gradient the backward pass starts
 * from, for n tokens. Exported for the tests.
 */
export function parametersFor(seed, n) {
  const random = seededRandom(seed);
  const weight = normalDraws(random);
  const bias = uniformDraws(random, 0.5);
  const vector = (draw, size) => randomMatrix(draw, 1, size)[0];
  const ones = Array(D_MODEL).fill(1);
  const zeros = Array(D_MODEL).fill(0);
  return {
    parameters: {
      wq: randomMatrix(weight, D_MODEL, D_MODEL), wk: randomMatrix(weight, D_MODEL, D_MODEL),
      wv: randomMatrix(weight, D_MODEL, D_MODEL), wo: randomMatrix(weight, D_MODEL, D_MODEL),
      bq: vector(bias, D_MODEL), bk: vector(bias, D_MODEL), bv: vector(bias, D_MODEL), bo: vector(bias, D_MODEL),
      gamma1: ones, beta1: zeros,
      w1: randomMatrix(weight, D_MODEL, D_FF), b1: vector(bias, D_FF),
      w2: randomMatrix(weight, D_FF, D_MODEL), b2: vector(bias, D_MODEL),
      gamma2: ones, beta2: zeros,
    },
    gradOutput: randomMatrix(weight, n, D_MODEL),
  };
}

/** The engine's problem for a state. */
export function blockProblem({ tokens, x }, { norm, gradients, seed }) {
  const { parameters, gradOutput } = parametersFor(seed, x.length);
  return {
    kind: 'transformerBlock', x, tokens, numHeads: HEADS, ...parameters, norm, ...(gradients ? { gradOutput } : {}),
  };
}

/**
 * The flow of a step list: for each step, the earlier steps it reads, found
 * from its regions: a read region names a tensor an earlier step produced,
 * or one an earlier step shows in its table (x, which no step produces).
 */
function flowOf(steps) {
  const producer = new Map();
  return steps.map((step, k) => {
    const regions = step.regions ?? [];
    const from = [...new Set(regions.filter((r) => !r.produces).map((r) => producer.get(r.name)))]
      .filter((i) => i !== undefined);
    for (const region of regions) if (region.produces) producer.set(region.name, k);
    const shows = step.tables?.[0]?.tensor;
    if (shows && !producer.has(shows)) producer.set(shows, k);
    return { step, from };
  });
}

/**
 * Lanes for the skip arrows ([from, to] pairs of step indices): an arrow
 * leaves its source low and enters its target high, so two arrows that only
 * meet at one box share a lane; overlapping ones get lanes of their own.
 */
function skipLanes(skips) {
  const ends = [];
  return skips.map(([from, to]) => {
    let lane = ends.findIndex((end) => end <= from);
    if (lane < 0) lane = ends.length;
    ends[lane] = to;
    return lane;
  });
}

const asRows = (value) => (Array.isArray(value[0]) ? value : [value]);
const shapeText = (rows) => `${rows.length} \u00d7 ${rows[0].length}`;

/**
 * A step's box in the flow and its card (the matrices, heatmaps and
 * equations it opens on), the card's element id being id; onToggle() when
 * the box is pressed.
 */
function createCard(make, id, step, onToggle) {
  // Each card follows its box, so that reading and Tab go from a box to
  // its matrices and on to the next box.
  const item = make('div', 'aw-panel aw-block-stage');
  item.dataset.step = step.id;
  item.id = id;
  item.hidden = true;
  item.setAttribute('role', 'region');
  const node = make('button', 'aw-block-node');
  node.type = 'button';
  node.dataset.step = step.id;
  node.setAttribute('aria-controls', item.id);
  node.setAttribute('aria-expanded', 'false');
  const nodeTitle = make('span', 'aw-block-node-title');
  const nodeShape = make('span', 'aw-block-node-shape');
  node.append(nodeTitle, nodeShape);
  node.addEventListener('click', onToggle);
  const title = make('h4', 'aw-block-title');
  title.id = `${item.id}-title`;
  item.setAttribute('aria-labelledby', title.id);
  const text = make('div', 'aw-block-text');
  const formula = scrollBox(make, 'aw-formula-lines', '');
  const mats = make('div', 'aw-mh-mats');
  const heatBox = make('div', 'aw-heatmaps');
  const sums = make('details', 'aw-block-sums');
  const sumsLabel = make('summary', '', 'Entry by entry');
  const sumsBody = scrollBox(make, 'aw-formula-lines', '');
  sums.append(sumsLabel, sumsBody);
  item.append(title, text, formula, mats, heatBox, sums);
  return { item, node, nodeTitle, nodeShape, title, text, formula, mats, heatBox, sums, sumsBody, view: null,
      heatmaps: [] };
}

/** A card and its box filled in from a step of the engine's list and the run's result (tokens label the rows). */
function fillCard(make, card, step, { result, problem, tokens }) {
  const doc = card.item.ownerDocument;
  card.title.textContent = `${step.number}. ${step.title}`;
  card.nodeTitle.textContent = card.title.textContent;
  card.text.replaceChildren(...(step.text ?? []).map((sentence) => make('p', 'aw-small', sentence)));
  card.formula.setAttribute('aria-label', `${step.title}: the formula`);
  card.sumsBody.setAttribute('aria-label', `${step.title}: entry by entry`);
  card.formula.hidden = !step.formula;
  // KaTeX typesets a formula again only when it changes (post-norm and pre-norm differ).
  if (card.formula.firstChild?.dataset.tex !== step.formula?.tex) {
    card.formula.replaceChildren(...(step.formula ? [mathElement(doc, step.formula.tex, { display: true })] : []));
  }
  const table = step.tables?.[0];
  if (table) {
    const values = result[table.tensor] ?? problem[table.tensor];
    const title = `${table.name} (${shapeText(values)}${table.note ? `: ${table.note}` : ''})`;
    card.view ??= createMatrixView(card.mats, { title, name: table.name });
    card.mats.querySelector('.aw-matrix-title').textContent = title;
    card.view.update({ values, rowLabels: tokens, colLabels: numberedTokens(values[0].length, ''), input: !result[table.tensor] });
    card.nodeShape.textContent = `${table.name}: ${shapeText(values)}`;
  }
  const equations = step.equations ?? [];
  card.sums.hidden = equations.length === 0;
  card.sumsBody.replaceChildren(...equations.map((equation) => equationElement(doc, equation, { isInput: ([name]) => name === 'x' })));
  // The attention stage also shows each head's weights.
  const producesAttention = step.regions?.some((region) => region.produces && region.name === 'attention');
  if (producesAttention) {
    result.heads.forEach((head, h) => {
      card.heatmaps[h] ??= createHeatmap(card.heatBox, { title: `Head ${h + 1}: attention weights`, name: `head ${h + 1} weight` });
      card.heatmaps[h].update({ values: head.weights, rowLabels: tokens, colLabels: tokens, domain: [0, 1] });
    });
  }
}

/**
 * The flow laid out as one grid: per step a row for its box, one for its
 * card and one for the arrow to the next; the skip arrows in lanes on the left.
 */
function layOut(make, flow, cards, flowSteps) {
  const skips = flowSteps.flatMap(({ from }, k) => from.filter((i) => i < k - 1).map((i) => [i, k]));
  const lanes = skipLanes(skips);
  const laneCount = Math.max(1, ...lanes.map((lane) => lane + 1));
  flow.style.setProperty('--aw-steps', flowSteps.length);
  flow.style.setProperty('--aw-lanes', laneCount);
  const placed = flowSteps.map(({ step }, k) => {
    const card = cards.get(step.id);
    card.node.style.gridRow = String(3 * k + 1);
    card.item.style.setProperty('--aw-card-row', 3 * k + 2);
    const arrow = make('span', 'aw-block-arrow');
    arrow.setAttribute('aria-hidden', 'true');
    arrow.hidden = !flowSteps[k + 1]?.from.includes(k);
    arrow.style.gridRow = String(3 * k + 3);
    return [card.node, card.item, arrow];
  });
  const brackets = skips.map(([from, to], s) => {
    const bracket = make('span', 'aw-block-skip');
    bracket.setAttribute('aria-hidden', 'true');
    bracket.dataset.from = flowSteps[from].step.id;
    bracket.dataset.to = flowSteps[to].step.id;
    bracket.style.gridRow = `${3 * from + 1} / ${3 * to + 2}`;
    bracket.style.gridColumnStart = String(laneCount - lanes[s]);
    return bracket;
  });
  flow.replaceChildren(...placed.flat(), ...brackets);
}

function normalise(next) {
  return {
    norm: NORMS.some((n) => n.value === next.norm) ? next.norm : 'post',
    gradients: Boolean(next.gradients),
    seed: clampInt(next.seed, 0, 2 ** 31, 1),
    // A step id of the engine's; one it does not have opens no box.
    stage: typeof next.stage === 'string' && /^[a-z0-9-]{0,40}$/.test(next.stage) ? next.stage : 'inputs',
  };
}

export function mount(element, { engine, presets = null, state = {}, onChange = () => {} }) {
  const example = tokensOf(presets);
  const { doc, make, root, say, id: sectionId } = sectionRoot(element, {
    name: 'block',
    title: 'A whole transformer block',
    intro: [
      `The block of ${tutorialName('003_276ef66dffc1cb2c.txt')} (\u00a724.11) puts attention inside a larger unit: multi-head attention, `
      + 'a residual sum, LayerNorm, a small feed-forward network applied to each token, another residual sum and LayerNorm. '
      + `Here the engine runs it on the tokens of \u201c${example.tokens.join(' ')}\u201d (${example.source}) `
      + `with d_model = ${D_MODEL}, ${HEADS} heads and a feed-forward width d_ff = ${D_FF}; the weights are random (seeded), `
      + 'LayerNorm\u2019s gamma is 1 and beta 0.',
    ],
  });

  const store = sectionState({ initial: { norm: 'post', gradients: false, seed: 1, stage: 'inputs' }, normalise, show, onChange });

  const controls = make('div', 'aw-controls');
  const normChoice = choice(doc, {
    label: 'Order', name: 'norm', options: NORMS, value: store.current.norm,
    onChange: (value) => store.update({ norm: value }),
  });
  const gradientBox = checkbox(doc, {
    label: 'Show gradients', name: 'gradients', checked: store.current.gradients,
    onChange: (on) => store.update({ gradients: on }),
  });
  const reroll = button(doc, { label: 'New random weights', onClick: () => store.update({ seed: store.current.seed + 1 }) });
  controls.append(normChoice.element, gradientBox.element, reroll);
  root.append(controls);

  const overview = make('div', 'aw-block-overview');
  const key = make('p', 'aw-small aw-block-key', 'Each box is one of the engine\u2019s steps and the shape of what it computes; '
    + 'an arrow carries a stage\u2019s output to the next, and the bracket on the left is a residual connection: '
    + 'an earlier output added back. Open a box to see its matrices; a dashed outline marks the boxes it reads.');
  // The diagram is one grid: per step a row for its box, one for its card
  // (under the box on a narrow screen; beside the diagram on a wide one)
  // and one for the arrow to the next; the skip arrows run in lanes on the
  // left. Where everything goes comes from the step list.
  const flow = make('div', 'aw-block-flow');
  flow.setAttribute('role', 'group');
  flow.setAttribute('aria-label', 'The block, stage by stage');
  root.append(overview, key, flow);

  const gradientPanel = make('div', 'aw-panel aw-block-gradients');
  gradientPanel.append(make('h4', '', 'Gradients'),
    make('p', 'aw-small', 'The engine runs the block backward from dO, a random (seeded) gradient of the loss with respect to '
      + 'the block\u2019s output, and reports the gradient with respect to the input x and to every parameter.'));
  const gradientMats = make('div', 'aw-mh-mats');
  gradientPanel.append(gradientMats);
  root.append(gradientPanel);

  // One card per step id, kept while the learner changes the state, so its
  // matrix views and heatmaps update in place.
  const cards = new Map();
  const gradientViews = new Map();

  function cardFor(step) {
    if (!cards.has(step.id)) {
      cards.set(step.id, createCard(make, `${sectionId}-${step.id}`, step,
        () => store.update({ stage: store.current.stage === step.id ? '' : step.id })));
    }
    return cards.get(step.id);
  }

  function drawGradients(result, problem) {
    gradientPanel.hidden = !store.current.gradients;
    if (!store.current.gradients) return;
    const shown = [['dO', problem.gradOutput, true], ['gradX', result.gradX, false],
      ...PARAMETERS.map((name) => [gradientName(name), result[gradientName(name)], false])];
    for (const [name, value, input] of shown) {
      const rows = asRows(value);
      const title = `${name} (${shapeText(rows)})`;
      if (!gradientViews.has(name)) gradientViews.set(name, createMatrixView(gradientMats, { title, name }));
      const view = gradientViews.get(name);
      view.element.querySelector('.aw-matrix-title').textContent = title;
      view.update({ values: rows, rowLabels: rows.length === 1 ? [name] : rowLabelsFor(name, rows), colLabels: numberedTokens(rows[0].length, ''), input });
    }
  }

  // Rows of a gradient: the tokens for dO and gradX, numbers for a weight matrix.
  const rowLabelsFor = (name, rows) => (name === 'dO' || name === 'gradX' ? example.tokens : numberedTokens(rows.length, ''));

  // The flow last laid out, so that choosing a stage only marks the boxes
  // (a focused box stays where it is) and a new run refills them in place.
  let laidOut = '';
  let stageFlow = [];

  // The open stage's box is pressed and its card shown; the boxes it reads from are marked.
  function markStage() {
    const open = stageFlow.find(({ step }) => step.id === store.current.stage);
    const sources = new Set((open?.from ?? []).map((i) => stageFlow[i].step.id));
    for (const [stepId, card] of cards) {
      const isOpen = stepId === open?.step.id;
      card.node.setAttribute('aria-expanded', String(isOpen));
      card.node.classList.toggle('aw-block-source', sources.has(stepId));
      card.item.hidden = !isOpen;
    }
  }

  function draw() {
    const problem = blockProblem(example, store.current);
    const run = attempt(say, () => engine.walkthrough(problem));
    if (!run) return;
    const { result, steps } = run;
    overview.replaceChildren(make('p', 'aw-small', steps.intro));
    stageFlow = flowOf(steps.steps);
    for (const { step } of stageFlow) fillCard(make, cardFor(step), step, { result, problem, tokens: example.tokens });
    const layout = JSON.stringify(stageFlow.map(({ step, from }) => [step.id, from]));
    if (layout !== laidOut) layOut(make, flow, cards, stageFlow);
    laidOut = layout;
    drawGradients(result, problem);
  }

  function show(current, previous) {
    normChoice.select.value = current.norm;
    gradientBox.input.checked = current.gradients;
    const rerun = stageFlow.length === 0 || ['norm', 'gradients', 'seed'].some((name) => current[name] !== previous[name]);
    if (rerun) draw();
    markStage();
  }

  store.setState(state);
  return {
    getState: store.getState,
    setState: store.setState,
    destroy() {
      for (const card of cards.values()) for (const heatmap of card.heatmaps) heatmap.destroy();
      root.remove();
    },
  };
}
