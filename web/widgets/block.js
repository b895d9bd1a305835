// The transformer block section: tutorial 003 §24.11's block (multi-head
// attention, a residual sum, LayerNorm, a ReLU feed-forward network, a
// second residual sum and LayerNorm) run by the engine on the tokens of the
// "cat sat mat" example, every stage in the engine's own order with its
// shape and values, post-norm or pre-norm, and on request the gradients of
// the input and of every parameter.
//
//   mount(element, { engine, presets?, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   presets: presets.json, whose "cat-sat-mat-projections" gives x and the tokens (seeded ones without it)
//   onChange(state) after each change the learner makes
//   state: { norm: 'post'|'pre', gradients: boolean, seed }
//
// The stages, their titles, sentences, formulas and sums are the engine's
// step list (attn.walkthrough of kind transformerBlock); this file lays them
// out and computes nothing.

import { equationElement } from '../ui/equation.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createMatrixView } from '../ui/matrix-editor.js';
import { mathElement } from '../ui/math.js';
import { tutorialName } from '../presets.js';
import {
  attempt, checkbox, choice, button, clampInt, normalDraws, numberedTokens, randomMatrix, scrollBox, sectionRoot, sectionState,
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

const asRows = (value) => (Array.isArray(value[0]) ? value : [value]);
const shapeText = (rows) => `${rows.length} \u00d7 ${rows[0].length}`;

export function mount(element, { engine, presets = null, state = {}, onChange = () => {} }) {
  const example = tokensOf(presets);
  const { doc, make, root, say } = sectionRoot(element, {
    name: 'block',
    title: 'A whole transformer block',
    intro: [
      `The block of ${tutorialName('003_276ef66dffc1cb2c.txt')} (\u00a724.11) puts attention inside a larger unit: multi-head attention, `
      + 'a residual sum, LayerNorm, a small feed-forward network applied to each token, another residual sum and LayerNorm. '
      + `Here the engine runs it on the tokens of \u201c${example.tokens.join(' ')}\u201d (${example.source}) `
      + `with d_model = ${D_MODEL}, ${HEADS} heads and a feed-forward width d_ff = ${D_FF}; the weights are random (seeded), `
      + 'LayerNorm\u2019s gamma is 1 and beta 0. Every stage below is one of the engine\u2019s steps, with its shape and values.',
    ],
  });

  const store = sectionState({ initial: { norm: 'post', gradients: false, seed: 1 }, normalise, show, onChange });

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
  const stagesBox = make('ol', 'aw-block-stages');
  root.append(overview, stagesBox);

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
    if (cards.has(step.id)) return cards.get(step.id);
    const item = make('li', 'aw-panel aw-block-stage');
    item.dataset.step = step.id;
    const title = make('h4', 'aw-block-title');
    const text = make('div', 'aw-block-text');
    const formula = scrollBox(make, 'aw-formula-lines', '');
    const mats = make('div', 'aw-mh-mats');
    const heatBox = make('div', 'aw-heatmaps');
    const sums = make('details', 'aw-block-sums');
    const sumsLabel = make('summary', '', 'Entry by entry');
    const sumsBody = scrollBox(make, 'aw-formula-lines', '');
    sums.append(sumsLabel, sumsBody);
    item.append(title, text, formula, mats, heatBox, sums);
    const card = { item, title, text, formula, mats, heatBox, sums, sumsBody, view: null, heatmaps: [] };
    cards.set(step.id, card);
    return card;
  }

  function fillCard(card, step, result, problem) {
    card.title.textContent = `${step.number}. ${step.title}`;
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
      card.view.update({ values, rowLabels: example.tokens, colLabels: numberedTokens(values[0].length, ''), input: !result[table.tensor] });
    }
    const equations = step.equations ?? [];
    card.sums.hidden = equations.length === 0;
    card.sumsBody.replaceChildren(...equations.map((equation) => equationElement(doc, equation, { isInput: ([name]) => name === 'x' })));
    // The attention stage also shows each head's weights.
    const producesAttention = step.regions?.some((region) => region.produces && region.name === 'attention');
    if (producesAttention) {
      result.heads.forEach((head, h) => {
        card.heatmaps[h] ??= createHeatmap(card.heatBox, { title: `Head ${h + 1}: attention weights`, name: `head ${h + 1} weight` });
        card.heatmaps[h].update({ values: head.weights, rowLabels: example.tokens, colLabels: example.tokens, domain: [0, 1] });
      });
    }
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
      view.update({ values: rows, rowLabels: rows.length === 1 ? [''] : rowLabelsFor(name, rows), colLabels: numberedTokens(rows[0].length, ''), input });
    }
  }

  // Rows of a gradient: the tokens for dO and gradX, numbers for a weight matrix.
  const rowLabelsFor = (name, rows) => (name === 'dO' || name === 'gradX' ? example.tokens : numberedTokens(rows.length, ''));

  function draw() {
    const problem = blockProblem(example, store.current);
    const run = attempt(say, () => engine.walkthrough(problem));
    if (!run) return;
    const { result, steps } = run;
    overview.replaceChildren(make('p', 'aw-small', steps.intro));
    const order = steps.steps.map((step) => {
      const card = cardFor(step);
      fillCard(card, step, result, problem);
      return card.item;
    });
    stagesBox.replaceChildren(...order);
    drawGradients(result, problem);
  }

  function normalise(next) {
    return {
      norm: NORMS.some((n) => n.value === next.norm) ? next.norm : 'post',
      gradients: Boolean(next.gradients),
      seed: clampInt(next.seed, 0, 2 ** 31, 1),
    };
  }

  function show(current) {
    normChoice.select.value = current.norm;
    gradientBox.input.checked = current.gradients;
    draw();
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
