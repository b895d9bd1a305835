// The multi-head section: X projected to Q, K, V; their columns split into
// heads (each block its own colour); every head attending on its own; the
// head outputs concatenated and mixed by W_O. A small player steps through
// the stages; a shape diagram sets the tutorial's 512 / 8 = 64 next to the
// sizes used here.
//
//   mount(element, { engine, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   onChange(state) after each change the learner makes
//   state: { numHeads, seed, step }
//
// Every number comes from the engine's multiHead.

import { createHeatmap } from '../ui/heatmap.js';
import { createMatrixView } from '../ui/matrix-editor.js';
import { createPlayer } from '../ui/player.js';
import { formatNumber } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import {
  attempt, button, choice, clampInt, normalDraws, randomMatrix, sectionRoot, seededRandom,
} from './sections-common.js';

const TOKENS = ['The', 'cat', 'sat', 'down'];
const D_MODEL = 8;
const HEAD_CHOICES = [1, 2, 4, 8]; // the divisors of d_model
const TUTORIAL = { tokens: 4, dModel: 512, heads: 8 }; // tutorial 004's shapes

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

const columnLabels = (n) => Array.from({ length: n }, (_, j) => String(j + 1));

export function mount(element, { engine, state = {}, onChange = () => {} }) {
  const { doc, make, root, say } = sectionRoot(element, {
    name: 'multihead',
    title: 'Multi-head attention: several smaller attentions side by side',
    intro: [
      'One attention computes one weighted average per token. Multi-head attention cuts the model width into h slices and '
      + 'lets each slice attend separately, so one head can follow one relation while another follows a different one. '
      + `Here ${TOKENS.length} tokens have d_model = ${D_MODEL}; choose how many heads share it and step through the stages.`,
    ],
  });

  let current = { numHeads: 2, seed: 5, step: 0 };
  let inputs = inputsFor(current.seed);
  let result = null;

  const controls = make('div', 'aw-controls');
  const headChoice = choice(doc, {
    label: 'Heads (h)', name: 'numHeads', value: current.numHeads,
    options: HEAD_CHOICES.map((h) => ({ value: h, label: `${h} (d_k = ${D_MODEL / h})` })),
    onChange: (value) => update({ numHeads: Number(value) }),
  });
  controls.append(headChoice.element,
    button(doc, { label: 'New random X and weights', onClick: () => update({ seed: current.seed + 1 }) }));
  root.append(controls);

  // Shape diagram: the tutorial's sizes and ours.
  const shapes = make('section', 'aw-panel');
  shapes.append(make('h4', '', 'The shapes'));
  const shapeTutorial = make('div', 'aw-shape-diagram');
  const shapeHere = make('div', 'aw-shape-diagram');
  const tutorialLabel = make('p', 'aw-small', `Tutorial 004 (004_ad55b564bf9e6848.txt): ${TUTORIAL.tokens} tokens, d_model = ${TUTORIAL.dModel}, `
    + `${TUTORIAL.heads} heads, so d_k = ${TUTORIAL.dModel} / ${TUTORIAL.heads} = ${TUTORIAL.dModel / TUTORIAL.heads}.`);
  const hereLabel = make('p', 'aw-small');
  shapes.append(tutorialLabel, shapeTutorial, hereLabel, shapeHere);
  root.append(shapes);

  function drawShapes(target, tokens, dModel, heads) {
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
  drawShapes(shapeTutorial, TUTORIAL.tokens, TUTORIAL.dModel, TUTORIAL.heads);

  // Player and stage
  const playerSlot = make('div');
  root.append(playerSlot);
  const stage = make('div', 'aw-mh-stage');
  const stepTitle = make('p', 'aw-mh-step');
  stepTitle.setAttribute('aria-live', 'polite');
  const stepText = make('p', 'aw-mh-text');
  const stepFormula = make('div', 'aw-formula-lines');
  const mats = make('div', 'aw-mh-mats');
  const headsRow = make('div', 'aw-mh-heads');
  const heatDetail = make('p', 'aw-heatmap-detail');
  stage.append(stepTitle, stepText, stepFormula, mats, headsRow, heatDetail);
  root.append(stage);

  const views = {
    x: createMatrixView(mats, { title: 'X (tokens \u00d7 d_model)', name: 'X' }),
    q: createMatrixView(mats, { title: 'Q = XW_Q', name: 'Q' }),
    k: createMatrixView(mats, { title: 'K = XW_K', name: 'K' }),
    v: createMatrixView(mats, { title: 'V = XW_V', name: 'V' }),
    concat: createMatrixView(mats, { title: 'Concat of the head outputs', name: 'Concat' }),
    wo: createMatrixView(mats, { title: 'W_O', name: 'W_O' }),
    output: createMatrixView(mats, { title: 'Output = Concat \u00b7 W_O', name: 'Output' }),
  };
  let headParts = []; // per head: { box, heatmap, outView }

  const player = createPlayer(playerSlot, {
    count: STEPS.length,
    onStep: (index) => { current.step = index; showStep(); onChange({ ...current }); },
    describeStep: (index) => STEPS[index].title,
    watch: stage,
  });

  function headColumns(dModel = D_MODEL) {
    const dk = dModel / current.numHeads;
    return new Map(Array.from({ length: dModel }, (_, j) => [j, `aw-head-${Math.floor(j / dk)}`]));
  }

  function buildHeads() {
    for (const part of headParts) { part.heatmap.destroy(); part.outView.destroy(); part.box.remove(); }
    headParts = Array.from({ length: current.numHeads }, (_, h) => {
      const box = make('div', `aw-mh-head aw-head-${h}`);
      box.dataset.head = String(h);
      headsRow.append(box);
      const heatmap = createHeatmap(box, { title: `Head ${h + 1}: weights`, name: `head ${h + 1} weight`, detailElement: heatDetail });
      const outView = createMatrixView(box, { title: `Head ${h + 1}: output (${TOKENS.length} \u00d7 ${D_MODEL / current.numHeads})`, name: `head ${h + 1} output` });
      return { box, heatmap, outView };
    });
  }

  function draw() {
    const next = attempt(say, () => engine.multiHead({ ...inputs, numHeads: current.numHeads }));
    if (!next) return;
    result = next;
    const dk = D_MODEL / current.numHeads;
    hereLabel.textContent = `Here: ${TOKENS.length} tokens, d_model = ${D_MODEL}, ${current.numHeads} head${current.numHeads > 1 ? 's' : ''}, `
      + `so d_k = ${D_MODEL} / ${current.numHeads} = ${dk}.`;
    drawShapes(shapeHere, TOKENS.length, D_MODEL, current.numHeads);
    const cols = columnLabels(D_MODEL);
    views.x.update({ values: inputs.x, rowLabels: TOKENS, colLabels: cols, input: true });
    views.q.update({ values: result.q, rowLabels: TOKENS, colLabels: cols });
    views.k.update({ values: result.k, rowLabels: TOKENS, colLabels: cols });
    views.v.update({ values: result.v, rowLabels: TOKENS, colLabels: cols });
    views.concat.update({ values: result.concat, rowLabels: TOKENS, colLabels: cols });
    views.wo.update({ values: inputs.wo, rowLabels: cols, colLabels: cols, input: true });
    views.output.update({ values: result.output, rowLabels: TOKENS, colLabels: cols });
    if (headParts.length !== current.numHeads) buildHeads();
    result.heads.forEach((head, h) => {
      const part = headParts[h];
      part.heatmap.update({
        values: head.weights, rowLabels: TOKENS, colLabels: TOKENS, domain: [0, 1],
        describe: (i, j) => `head ${h + 1}: score ${formatNumber(head.scores[i][j])} (Q block \u00b7 K block), `
          + `scaled by 1/\u221a${dk} to ${formatNumber(head.scaled[i][j])}, then the row softmax`,
      });
      part.outView.update({ values: head.output, rowLabels: TOKENS, colLabels: columnLabels(dk).map((c, j) => String(h * dk + j + 1)) });
      part.outView.mark({ cols: new Map(Array.from({ length: dk }, (_, j) => [j, `aw-head-${h}`])) });
    });
    showStep();
  }

  const show = (names) => {
    for (const [name, view] of Object.entries(views)) view.setVisible(names.includes(name));
    for (const name of names) mats.append(views[name].element); // in the order of the step
  };

  function showStep() {
    const step = STEPS[current.step];
    stepTitle.textContent = `${current.step + 1}. ${step.title}`;
    stepText.textContent = step.text;
    stepFormula.replaceChildren(mathElement(doc, step.formula, { display: true }));
    player.setStep(current.step);
    const byHead = { cols: headColumns() };
    for (const view of Object.values(views)) view.mark({});
    const showHeads = (heatmaps, outputs) => {
      headsRow.classList.toggle('aw-mh-hidden', !heatmaps && !outputs);
      for (const part of headParts) {
        part.heatmap.element.classList.toggle('aw-mh-hidden', !heatmaps);
        part.outView.setVisible(outputs);
      }
    };
    switch (current.step) {
      case 0:
        show(['x', 'q', 'k', 'v']);
        showHeads(false, false);
        break;
      case 1:
        show(['q', 'k', 'v']);
        for (const name of ['q', 'k', 'v']) views[name].mark(byHead);
        showHeads(false, false);
        break;
      case 2:
        show([]);
        showHeads(true, true);
        break;
      case 3:
        show(['concat']);
        views.concat.mark(byHead);
        showHeads(false, true);
        break;
      default:
        show(['concat', 'wo', 'output']);
        views.concat.mark(byHead);
        showHeads(false, false);
    }
    // At the concat step the head outputs come first, then their concatenation.
    if (current.step === 3) headsRow.after(mats); else mats.after(headsRow);
  }

  function normalise(next) {
    return {
      numHeads: HEAD_CHOICES.includes(Number(next.numHeads)) ? Number(next.numHeads) : 2,
      seed: clampInt(next.seed, 0, 2 ** 31, 5),
      step: clampInt(next.step, 0, STEPS.length - 1, 0),
    };
  }

  function update(change) {
    setState({ ...current, ...change });
    onChange({ ...current });
  }

  function setState(next = {}) {
    const previous = current;
    current = normalise({ ...current, ...next });
    if (current.seed !== previous.seed) inputs = inputsFor(current.seed);
    headChoice.select.value = String(current.numHeads);
    draw();
  }

  setState(state);

  return {
    getState: () => ({ ...current }),
    setState,
    destroy() {
      player.destroy();
      for (const part of headParts) { part.heatmap.destroy(); part.outView.destroy(); }
      for (const view of Object.values(views)) view.destroy();
      root.remove();
    },
  };
}
