// The step-by-step walkthrough widget: pick a preset, play through the
// computation with the engine's numbers, edit any input and watch every
// value follow.
//
//   mount(element, { engine, presets, state?, onChange? })
//     -> { destroy(), getState(), setState(state), exportInput() }
//   state: { preset, step, values? } (values: the edited problem, for URLs)
//
// Everything lives inside `element`; nothing here touches the page around it.

import { createPlayer } from '../ui/player.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createMatrixEditor, createMatrixView } from '../ui/matrix-editor.js';
import { parseNumber } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import { appendClaims } from '../ui/claims.js';
import { tutorialName } from '../presets.js';
import { createStepFigure } from '../ui/step-figure.js';
import { buildModel, buildSteps, canShowBackward, cellName, describeCell, engineInput, sourcesOf, stagesOf } from './walkthrough-steps.js';
import { mount as mountLines } from './walkthrough-lines.js';
import { mount as mountOverview } from './walkthrough-overview.js';
import {
  ROUNDING_MEANS, causeText, errataOf, errataSection, erratumName, erratumText, groupErrata, roundingCount, roundingDifferences,
} from './walkthrough-errata.js';
import { mount as mountCheck } from './walkthrough-check.js';
import {
  MAX_LABEL, MAX_TOKENS, MAX_WIDTH, SDPA_MODES, convertedProblem, dimsOf, problemFromPreset,
  problemFromValues, randomFilled, reshape, resized, shapesOf,
} from './walkthrough-problem.js';
import { builder } from '../ui/dom.js';

let widgets = 0;

const WALKTHROUGH_MODES = ['projections', 'qkv', 'scores', 'softmax', 'weightedSum'];
const MODE_LABELS = {
  projections: 'Start from X with W_Q, W_K, W_V',
  qkv: 'Enter Q, K, V directly',
  scores: 'Enter the scores directly',
};
const SIZE_LABELS = {
  T: 'Tokens (T)', nq: 'Queries', nk: 'Keys', din: 'Embedding width', dk: 'd_k', dv: 'd_v',
  rows: 'Rows', entries: 'Entries',
};

// ---- The widget ----

export function mount(element, { engine, presets, state = {}, onChange = () => {} }) {
  const doc = element.ownerDocument;
  const widgetId = ++widgets;
  // Presets of other sections (several heads, Bahdanau, ...) belong to other widgets.
  const list = presets.presets.filter((preset) => WALKTHROUGH_MODES.includes(preset.mode)
    && !(preset.mode === 'projections' && preset.input.numHeads > 1));
  const byId = new Map(list.map((preset) => [preset.id, preset]));
  const make = builder(doc);

  const root = make('div', 'aw-root aw-walkthrough');
  element.append(root);

  // Header: preset choice and notes
  const header = make('div', 'aw-head');
  const presetLabel = make('label', 'aw-preset-label', 'Example ');
  const presetSelect = make('select', 'aw-preset');
  for (const preset of list) {
    const option = make('option', '', preset.title);
    option.value = preset.id;
    presetSelect.append(option);
  }
  presetLabel.append(presetSelect);
  const source = make('p', 'aw-source');
  const notes = make('p', 'aw-notes');
  const message = make('p', 'aw-message');
  message.setAttribute('role', 'status');
  header.append(presetLabel, source, message);
  root.append(header);

  // The whole computation at a glance, filled in as the player goes.
  const overview = mountOverview(root, { onJump: (index) => { player.pause(); showStep(index); notify(); } });

  // Player, and the example's notes under it.
  const playerSlot = make('div', 'aw-player-slot');
  root.append(playerSlot, notes);

  // The stages of the computation, X -> Q, K, V -> ... -> weights x V: where
  // the current step is, and a way to jump to any stage.
  const stagesNav = make('nav', 'aw-stages');
  stagesNav.setAttribute('aria-label', 'Stages of the computation');
  const stagesList = make('ol', 'aw-stages-list');
  stagesNav.append(stagesList);
  root.append(stagesNav);

  // Stage: the explanation and the matrices of the current step
  const stage = make('div', 'aw-stage');
  const explain = make('div', 'aw-explain');
  // Only the title and the sentence are announced on each step, not the arithmetic.
  const announced = make('div', 'aw-announced');
  announced.setAttribute('aria-live', 'polite');
  const stepTitle = make('h3', 'aw-step-title');
  const stepText = make('p', 'aw-step-text');
  announced.append(stepTitle, stepText);
  const stepFormula = make('div', 'aw-step-formula');
  const stepLines = make('div', 'aw-step-lines');
  const stepErrata = make('div', 'aw-step-errata');
  explain.append(announced, stepFormula);
  // What the step computes, moving (drawn from the step's equations).
  const figure = createStepFigure(explain);
  // The figure shows each value of the step once; its every equation is
  // one click away, and the choice holds while stepping.
  const linesToggle = make('button', 'aw-btn aw-lines-toggle');
  linesToggle.type = 'button';
  stepLines.id = `aw-step-lines-${widgetId}`;
  linesToggle.setAttribute('aria-controls', stepLines.id);
  let linesShown = false;
  let linesOf = null;
  function renderLines() {
    linesToggle.setAttribute('aria-expanded', String(linesShown));
    stepLines.hidden = !linesShown;
    stepLines.replaceChildren(...(linesShown && linesOf ? linesOf(doc) : []));
  }
  linesToggle.addEventListener('click', () => {
    linesShown = !linesShown;
    renderLines();
  });
  explain.append(linesToggle, stepLines, stepErrata);
  const visuals = make('div', 'aw-visuals');
  const matsBox = make('div', 'aw-mats');
  // Heatmaps
  const heatBox = make('div', 'aw-heatmaps');
  const heatDetail = make('p', 'aw-heatmap-detail');
  visuals.append(matsBox, heatBox, heatDetail);
  stage.append(explain, visuals);
  root.append(stage);

  const heatmaps = {
    scaled: createHeatmap(heatBox, { title: 'Scaled scores (before the softmax)', name: 'scaled score', detailElement: heatDetail }),
    weights: createHeatmap(heatBox, { title: 'Attention weights', name: 'weight', detailElement: heatDetail }),
  };
  const tokenLines = mountLines(heatBox);
  for (const [name, heatmap] of Object.entries(heatmaps)) heatmap.element.dataset.matrix = name;

  // Hovering or focusing a computed cell lights the cells it came from, in
  // every matrix and heatmap on screen.
  let lit = [];
  function lightSourcesOf(target) {
    for (const cell of lit) cell.classList.remove('aw-src');
    lit = [];
    const cell = target?.closest?.('[data-row][data-col]');
    const name = cell?.closest('[data-matrix]')?.dataset.matrix;
    if (!model || !name || cell.matches('.aw-future, .aw-heat-future')) return;
    // A source not on screen (a row's max, sum or exponentials) stands for
    // the cells it was computed from in turn.
    const pending = sourcesOf(model, name, Number(cell.dataset.row), Number(cell.dataset.col));
    const seen = new Set();
    while (pending.length > 0) {
      const ref = pending.pop();
      const [source, i, j] = ref;
      if (seen.has(ref.join(','))) continue;
      seen.add(ref.join(','));
      const nodes = j === undefined ? [] : [...visuals.querySelectorAll(`[data-matrix="${source}"] [data-row="${i}"][data-col="${j}"]`)]
        .filter((node) => !node.closest('[hidden]'));
      if (nodes.length === 0) pending.push(...sourcesOf(model, ...ref));
      for (const node of nodes) {
        node.classList.add('aw-src');
        lit.push(node);
      }
    }
  }
  visuals.addEventListener('pointerover', (event) => lightSourcesOf(event.target));
  visuals.addEventListener('focusin', (event) => lightSourcesOf(event.target));
  visuals.addEventListener('pointerleave', () => lightSourcesOf(null));
  visuals.addEventListener('focusout', () => lightSourcesOf(null));

  // Errata list
  const errataBox = make('details', 'aw-errata');
  const errataTitle = make('summary', 'aw-errata-summary');
  const errataBody = make('div', 'aw-errata-body');
  errataBox.append(errataTitle, errataBody);
  // The tutorial's other claims about this example (rows summing to 1, shapes).
  const claimsSlot = make('div', 'aw-claims-slot');
  root.append(errataBox, claimsSlot);

  // Editor
  // A disclosure, open from the start except on a phone, where the figure comes first.
  const editBox = make('details', 'aw-edit');
  editBox.open = !doc.defaultView.matchMedia?.('(max-width: 520px)').matches;
  const editSummary = make('summary', 'aw-edit-summary');
  const editTitle = make('h3', '', 'Change the numbers');
  editSummary.append(editTitle);
  const editStatus = make('p', 'aw-edit-status');
  editStatus.setAttribute('role', 'status');
  // What went wrong with the last edit, in the editor where it was made.
  const editError = make('p', 'aw-edit-error');
  editError.setAttribute('role', 'alert');
  const modeBox = make('fieldset', 'aw-modes');
  const controls = make('div', 'aw-controls');
  const tokenBox = make('fieldset', 'aw-tokens');
  const editors = make('div', 'aw-editors');
  editBox.append(editSummary, editStatus, editError, modeBox, controls, tokenBox, editors);
  root.append(editBox);

  // Check your own numbers: the learner's printed tables, checked by the
  // engine as the tutorials' are; null when none are given.
  let own = null;
  let ownError = ''; // why the engine could not check them
  let ownTexts = {}; // as typed, for the address, even those that do not read
  const checkSlot = make('div', 'aw-check-slot');
  root.append(checkSlot);
  const checker = mountCheck(checkSlot, {
    onChange({ texts, printed, decimals }) {
      ownTexts = texts;
      own = Object.keys(printed).length > 0 ? { printed, printedDecimals: decimals } : null;
      refreshErrata();
      notify();
    },
  });

  let preset = null;
  let problem = null;
  let model = null;
  let steps = [];
  let current = 0;
  let edited = false;
  let errata = [];
  // The errata by cause (walkthrough-errata.js decides), and the rounding differences among them.
  let errataGroups = [];
  let rounding = new Set();
  // What the summary picture outlines: the cells the tutorial misprints, and a sentence.
  let marks = {};
  let seed = 1;
  let matViews = {};
  let matLayout = '';
  let matrixEditors = {};

  const player = createPlayer(playerSlot, {
    count: 1,
    onStep: (index) => { showStep(index); notify(); },
    describeStep: (index) => steps[index]?.title ?? '',
    watch: stage,
    // Playing waits for the figure's movement, which plays at the chosen speed.
    settled: () => figure.settled(),
    onSpeed: (speed) => figure.setRate(speed),
  });

  // The view that steps draw on.
  const view = {
    show(names, marksByName = {}) {
      for (const [name, matView] of Object.entries(matViews)) {
        const visible = names.includes(name);
        matView.setVisible(visible);
        matView.mark(visible ? marksByName[name] ?? {} : {});
      }
      for (const name of names) if (matViews[name]) matsBox.append(matViews[name].element);
    },
    explain({ text, formula, lines, count = 0 }) {
      stepText.textContent = text;
      stepFormula.replaceChildren();
      if (formula) stepFormula.append(mathElement(doc, formula, { display: true }));
      linesOf = lines ?? null;
      linesToggle.hidden = count === 0;
      linesToggle.textContent = `Show every equation (${count})`;
      renderLines();
    },
    heat(cellsByName, futureByName = {}) {
      for (const [name, heatmap] of Object.entries(heatmaps)) heatmap.setHighlight(cellsByName[name] ?? [], futureByName[name]);
    },
    reset() {
      for (const matView of Object.values(matViews)) matView.mark({});
      view.heat({});
      linesOf = null;
      stepLines.replaceChildren();
    },
  };

  function notify() {
    onChange(getState());
  }

  function reportInEditor(text) {
    editError.textContent = text;
  }

  function say(text) {
    message.textContent = text;
    message.hidden = !text;
  }

  // still: the same step again after an edit, whose figure then shows its
  // new numbers at once.
  function showStep(index, { still = false } = {}) {
    if (steps.length === 0) return;
    steps[current]?.leave(view);
    current = Math.min(Math.max(0, index), steps.length - 1);
    player.setStep(current);
    const step = steps[current];
    stepTitle.textContent = `${current + 1}. ${step.title}`;
    step.enter(view);
    figure.show(step, { labelOf: (ref, part) => cellName(model, ref, part), still, ...marks });
    tokenLines.show(model, steps, current);
    overview.show(current);
    markStage();
    renderStepErrata(step);
  }

  function renderStages() {
    stagesList.replaceChildren();
    for (const { label, first } of stagesOf(steps)) {
      const item = make('li', 'aw-stages-item');
      const button = make('button', 'aw-stage-button', label);
      button.type = 'button';
      button.dataset.first = String(first);
      button.addEventListener('click', () => { player.pause(); showStep(first); notify(); });
      item.append(button);
      stagesList.append(item);
    }
  }

  function markStage() {
    const buttons = [...stagesList.querySelectorAll('button')];
    // The current stage is the last one that starts at or before the step.
    const at = buttons.findLastIndex((button) => Number(button.dataset.first) <= current);
    buttons.forEach((button, k) => {
      if (k === at) button.setAttribute('aria-current', 'step');
      else button.removeAttribute('aria-current');
    });
  }

  // A step's misprints each get a callout; its rounding differences, one quiet line.
  function renderStepErrata() {
    stepErrata.replaceChildren();
    const here = errata.filter((e) => e.stepIndex === current);
    for (const item of here.filter((e) => !rounding.has(e))) stepErrata.append(errataLine(item, false));
    const rounded = here.filter((e) => rounding.has(e));
    if (rounded.length === 0) return;
    const line = make('details', 'aw-rounding');
    const list = make('ul', 'aw-rounding-items');
    for (const item of rounded) {
      const entry = make('li');
      entry.append(make('span', 'aw-erratum-where', erratumName(model, item)), doc.createTextNode(`: ${erratumText(item)}`));
      list.append(entry);
    }
    line.append(make('summary', 'aw-rounding-summary', roundingCount(rounded.length)),
                make('p', '', `The tutorial\u2019s printed value differs from the exact one; ${ROUNDING_MEANS}`), list);
    stepErrata.append(line);
  }

  // The misprints (not the rounding differences) as cells to outline, and
  // what the outline means, naming the tutorial's first slip.
  function misprintMarks() {
    const misprints = errata.filter((item) => !rounding.has(item));
    const marked = new Set(misprints.map((item) => [item.field, ...item.path].join(',')));
    const first = misprints[0];
    const markedNote = first
      ? `Outlined: values the tutorial prints wrong. Its first slip is ${erratumName(model, first)} at step ${first.stepIndex + 1}; the errata below list every one.`
      : '';
    return { marked, markedNote };
  }

  function errataLine(item, withLink) {
    const line = make(withLink ? 'li' : 'p', 'aw-erratum');
    const where = make('span', 'aw-erratum-where', erratumName(model, item));
    line.append(where, doc.createTextNode(`: ${erratumText(item, own ? 'you wrote' : undefined)}`));
    if (withLink) {
      const go = make('button', 'aw-link', `Go to step ${item.stepIndex + 1}`);
      go.type = 'button';
      go.addEventListener('click', () => { player.pause(); showStep(item.stepIndex); notify(); });
      line.append(doc.createTextNode(' '), go);
    }
    return line;
  }

  function renderErrataList() {
    errataBody.replaceChildren();
    if (!preset.printed && !own) {
      errataBox.hidden = true;
      return;
    }
    errataBox.hidden = false;
    if (own) {
      renderOwnErrata();
      return;
    }
    if (edited) {
      errataTitle.textContent = 'Tutorial comparison: not for edited inputs';
      errataBody.append(make('p', '', 'You have changed the inputs, so the comparison with the tutorial\u2019s printed numbers no longer applies. Reset to the example to see it again.'));
      return;
    }
    if (errata.length === 0) {
      errataTitle.textContent = 'Tutorial comparison: every printed number agrees';
      errataBody.append(make('p', '', 'Every number the tutorial prints for this example agrees with the exact value to the decimals it shows.'));
      return;
    }
    const groups = errataGroups;
    const slips = groups.filter((group) => group.cause !== 'rounding').length;
    errataTitle.textContent = `Errata: ${errata.length} of the tutorial\u2019s printed ${errata.length === 1 ? 'values differs' : 'values differ'} from the exact ones`
      + (slips > 0 ? `, from ${slips} ${slips === 1 ? 'slip' : 'slips'}` : '');
    errataBody.append(make('p', '', 'Each differs from the exact value by more than the rounding of its printed decimals allows. '
      + 'They are grouped by cause: a misprint, then what the tutorial computed from it; rounding differences last.'));
    for (const group of groups) {
      const box = make('div', `aw-errata-group aw-errata-${group.cause}`);
      const ul = make('ul', 'aw-errata-items');
      for (const item of group.items) ul.append(errataLine(item, true));
      box.append(make('p', 'aw-errata-cause', causeText(group)), ul);
      errataBody.append(box);
    }
  }

  // The learner's own numbers: the same list, in their words.
  function renderOwnErrata() {
    if (ownError) {
      errataTitle.textContent = 'Your numbers: not checked';
      errataBody.append(make('p', '', ownError));
      return;
    }
    if (errata.length === 0) {
      errataTitle.textContent = 'Your numbers: every number you wrote agrees';
      errataBody.append(make('p', '', 'Each number you pasted is the exact value rounded to the decimals you wrote.'));
      return;
    }
    errataBox.open = true;
    errataTitle.textContent = `Your numbers: ${errata.length} of them ${errata.length === 1 ? 'differs' : 'differ'} from the exact ones`;
    for (const group of errataGroups) {
      const box = make('div', `aw-errata-group aw-errata-${group.cause}`);
      const ul = make('ul', 'aw-errata-items');
      for (const item of group.items) ul.append(errataLine(item, true));
      box.append(make('p', 'aw-errata-cause', causeText(group)), ul);
      errataBody.append(box);
    }
  }

  // The printed keys of the results on screen, not the inputs ("weights";
  // a multi-head problem's are its first head's, "heads.0.weights").
  function checkFields() {
    const head = problem.mode === 'projections';
    return ['q', 'k', 'v', 'scores', 'scaled', 'weights', 'output']
      .filter((name) => model.mats[name] && !Object.hasOwn(problem.fields, name)).map((name) => {
      const perHead = head && !['q', 'k', 'v'].includes(name);
      return { key: perHead ? `heads.0.${name}` : name, label: perHead ? `${name} (head 1)` : name };
    });
  }

  // The engine's check of the learner's numbers, else of the tutorial's.
  function errataFor() {
    ownError = '';
    if (own) {
      try {
        return errataOf(own, model, steps, { vector: problem.vector, engine, input: engineInput(problem) });
      } catch (error) {
        ownError = `The engine could not check these numbers: ${error.message}`;
        checker.report(ownError);
        return [];
      }
    }
    return edited ? [] : errataOf(preset, model, steps, { vector: problem.vector, engine, input: engineInput(problem) });
  }

  // The errata, their groups (the engine's causes), the rounding
  // differences among them and the misprints the summary outlines.
  function setErrata(next) {
    errata = next;
    errataGroups = groupErrata(errata);
    rounding = roundingDifferences(errataGroups);
    marks = misprintMarks();
  }

  function refreshErrata() {
    setErrata(errataFor());
    renderStepErrata();
    renderErrataList();
  }

  function rebuildViews() {
    // The same matrices as before (an edit of values) are updated in place.
    const layout = JSON.stringify(Object.entries(model.mats).map(([name, mat]) => [name, mat.title]));
    if (layout !== matLayout) {
      for (const matView of Object.values(matViews)) matView.destroy();
      matViews = {};
      for (const [name, mat] of Object.entries(model.mats)) {
        matViews[name] = createMatrixView(matsBox, { title: mat.title, name, onEdit: (i, j, value) => editCell(name, i, j, value) });
      }
      matLayout = layout;
    }
    for (const [name, mat] of Object.entries(model.mats)) {
      matViews[name].update(mat);
      matViews[name].setVisible(false);
    }
    const hasScaled = Boolean(model.mats.scaled) && model.mode !== 'weightedSum';
    heatmaps.scaled.element.hidden = !hasScaled;
    if (hasScaled) {
      heatmaps.scaled.setTitle(model.mode === 'softmax'
        ? (problem.fields.scale === undefined ? 'Inputs to the softmax' : 'Scaled inputs to the softmax')
        : 'Scaled scores (before the softmax)');
      heatmaps.scaled.update({
        values: model.mats.scaled.values, rowLabels: model.qTokens, colLabels: model.kTokens,
        describe: (i, j) => describeCell(model, 'scaled', i, j),
      });
    }
    heatmaps.weights.setTitle(model.mode === 'softmax' ? 'Softmax weights' : 'Attention weights');
    heatmaps.weights.update({
      values: model.mats.weights.values, rowLabels: model.qTokens, colLabels: model.kTokens,
      domain: model.mode === 'weightedSum' ? undefined : [0, 1],
      describe: (i, j) => describeCell(model, 'weights', i, j),
    });
  }

  /**
   * Computes `next` through the engine; on failure keeps the last good state
   * and hands the engine's message to report (by default, the header's line).
   */
  function apply(next, { keepStep = true, report = say } = {}) {
    let nextModel;
    try {
      nextModel = buildModel(engine, next);
    } catch (error) {
      report(`The engine could not use this input (${error.message}); the last good result stays on screen.`);
      return false;
    }
    const stepId = steps[current]?.id;
    problem = next;
    model = nextModel;
    steps = buildSteps(model);
    checker.setFields(checkFields());
    setErrata(errataFor());
    rebuildViews();
    overview.update(model, steps);
    renderStages();
    player.setCount(steps.length);
    let index = keepStep ? steps.findIndex((step) => step.id === stepId) : 0;
    if (index < 0) index = Math.min(current, steps.length - 1);
    current = Math.min(current, steps.length - 1);
    showStep(index, { still: steps[index]?.id === stepId });
    renderErrataList();
    editStatus.textContent = edited
      ? 'Edited: every value below comes from your inputs.'
      : 'These are the example\u2019s own numbers. Change any of them; the walkthrough stays on its step.';
    say('');
    return true;
  }

  /** An edit from the editor: a failure is reported next to the control that made it. */
  function edit(next, { rebuildEditors = false, report = reportInEditor } = {}) {
    const wasEdited = edited;
    edited = true;
    if (!apply(next, { report })) {
      edited = wasEdited;
      return false;
    }
    editError.textContent = '';
    if (rebuildEditors) buildEditor();
    notify();
    return true;
  }

  /**
   * One cell of an input matrix, edited in place in the figure: the editor
   * panel follows. Returns the engine's reason when it refuses the value,
   * for the cell to show.
   */
  function editCell(name, i, j, value) {
    const field = name === 'input' ? 'x' : name;
    const values = problem.fields[field].map((row) => [...row]);
    values[i][j] = value;
    let refused = '';
    if (!edit({ ...problem, fields: { ...problem.fields, [field]: values } }, { report: (text) => { refused = text; } })) return refused;
    const editor = matrixEditors[field];
    editor?.setValues(values, ...editorLabels(field));
    return '';
  }

  // ---- Editor panel ----

  /**
   * A whole-number field with its own inline message; onValid(n, report) runs
   * for good values only, and report(message) shows a failure at the field.
   */
  function integerControl(text, value, { min, max }, onValid) {
    const label = make('label', 'aw-size');
    label.append(doc.createTextNode(`${text} `));
    const input = make('input', 'aw-size-input');
    input.type = 'number';
    input.min = String(min);
    if (max !== undefined) input.max = String(max);
    input.value = String(value);
    const error = make('span', 'aw-field-error');
    error.setAttribute('role', 'alert');
    input.addEventListener('change', () => {
      const n = parseNumber(input.value);
      if (!Number.isInteger(n) || n < min || (max !== undefined && n > max)) {
        error.textContent = max === undefined
          ? `Must be a whole number of at least ${min}`
          : `Must be a whole number from ${min} to ${max}`;
        input.setAttribute('aria-invalid', 'true');
        return;
      }
      error.textContent = '';
      input.removeAttribute('aria-invalid');
      onValid(n, (message) => {
        error.textContent = message;
        input.setAttribute('aria-invalid', 'true');
      });
    });
    label.append(input, error);
    return label;
  }

  function sizeControl(key, value) {
    const max = ['T', 'nq', 'nk', 'rows', 'entries'].includes(key) ? MAX_TOKENS : MAX_WIDTH;
    return integerControl(SIZE_LABELS[key], value, { min: 1, max }, (n, report) => {
      edit(resized(problem, { ...dimsOf(problem), [key]: n }), { rebuildEditors: true, report });
    });
  }

  function selectControl(text, options, value, onSelect) {
    const label = make('label', 'aw-select');
    label.append(doc.createTextNode(`${text} `));
    const select = make('select');
    for (const [optionValue, optionText] of options) {
      const option = make('option', '', optionText);
      option.value = optionValue;
      select.append(option);
    }
    select.value = value;
    select.addEventListener('change', () => onSelect(select.value));
    label.append(select);
    return label;
  }

  function buildEditor() {
    const f = problem.fields;
    // Modes
    modeBox.replaceChildren();
    modeBox.hidden = !SDPA_MODES.includes(problem.mode);
    if (!modeBox.hidden) {
      modeBox.append(make('legend', '', 'Start from'));
      for (const mode of SDPA_MODES) {
        const label = make('label', 'aw-mode');
        const radio = make('input');
        radio.type = 'radio';
        radio.name = `aw-mode-${widgetId}`;
        radio.value = mode;
        radio.checked = problem.mode === mode;
        const square = problem.qTokens.length === problem.kTokens.length;
        radio.disabled = mode === 'projections' && !square;
        radio.addEventListener('change', () => {
          if (radio.checked) edit(convertedProblem(problem, model, mode, seed), { rebuildEditors: true });
        });
        label.append(radio, doc.createTextNode(` ${MODE_LABELS[mode]}`));
        modeBox.append(label);
      }
    }
    // Sizes, mask, scale, random fill, reset
    controls.replaceChildren();
    const sizes = make('div', 'aw-sizes');
    for (const [key, value] of Object.entries(dimsOf(problem))) sizes.append(sizeControl(key, value));
    controls.append(sizes);
    const options = make('div', 'aw-options');
    if (SDPA_MODES.includes(problem.mode)) {
      const maskOptions = [['none', 'none'], ['causal', 'causal (no looking ahead)']];
      const presetMask = preset.input.mask;
      if (Array.isArray(presetMask)) maskOptions.push(['custom', 'the example\u2019s own mask']);
      const maskValue = Array.isArray(f.mask) ? 'custom' : f.mask === 'causal' ? 'causal' : 'none';
      options.append(selectControl('Mask', maskOptions, maskValue, (value) => {
        const fields = { ...problem.fields };
        if (value === 'none') delete fields.mask;
        else if (value === 'causal') fields.mask = 'causal';
        else fields.mask = reshape(presetMask, problem.qTokens.length, problem.kTokens.length, true);
        edit({ ...problem, fields });
      }));
      if (f.keyLength !== undefined) {
        const keys = problem.kTokens.length;
        options.append(integerControl('Real keys (the rest is padding)', f.keyLength, { min: 0, max: keys }, (n) => {
          edit({ ...problem, fields: { ...problem.fields, keyLength: n } });
        }));
      }
    }
    const scaleOptions = [['none', 'none']];
    if (problem.mode !== 'softmax' && problem.mode !== 'weightedSum') scaleOptions.unshift(['sqrt', 'divide by \u221ad_k']);
    const presetScale = preset.input.scale;
    if (typeof presetScale === 'number') scaleOptions.push(['factor', `multiply by ${presetScale}`]);
    const scaleValue = f.scale === false ? 'none' : typeof f.scale === 'number' ? 'factor' : (problem.mode === 'softmax' ? 'none' : 'sqrt');
    if (problem.mode !== 'weightedSum') {
      options.append(selectControl('Scaling', scaleOptions, scaleValue, (value) => {
        const fields = { ...problem.fields };
        if (value === 'sqrt') {
          delete fields.scale;
          if (problem.mode === 'scores') fields.dk ??= problem.kTokens.length;
        }
        else if (value === 'none') fields.scale = false;
        else fields.scale = presetScale;
        edit({ ...problem, fields });
      }));
    }
    if (problem.mode === 'scores' && f.scale !== false && typeof f.scale !== 'number') {
      options.append(integerControl('d_k for the scaling', f.dk ?? problem.kTokens.length, { min: 1 }, (n) => {
        edit({ ...problem, fields: { ...problem.fields, dk: n } });
      }));
    }
    if (canShowBackward(problem)) options.append(backwardControl());
    controls.append(options);

    const actions = make('div', 'aw-actions');
    const seedLabel = make('label', 'aw-seed', 'Seed ');
    const seedInput = make('input');
    seedInput.type = 'number';
    seedInput.value = String(seed);
    seedInput.min = '0';
    seedInput.addEventListener('change', () => {
      const n = parseNumber(seedInput.value);
      if (Number.isInteger(n) && n >= 0) seed = n;
      else seedInput.value = String(seed);
    });
    seedLabel.append(seedInput);
    const fill = make('button', 'aw-btn aw-fill', 'Fill with random numbers');
    fill.type = 'button';
    fill.addEventListener('click', () => edit(randomFilled(problem, seed), { rebuildEditors: true }));
    const reset = make('button', 'aw-btn aw-reset', 'Reset to the example');
    reset.type = 'button';
    reset.addEventListener('click', () => loadPreset(preset.id, { step: current }));
    actions.append(seedLabel, fill, reset);
    controls.append(actions);

    // Token labels
    tokenBox.replaceChildren(make('legend', '', problem.self ? 'Token labels' : 'Labels'));
    const labelRow = (axis, labels, caption) => {
      const row = make('div', 'aw-token-row');
      if (caption) row.append(make('span', 'aw-token-caption', caption));
      labels.forEach((text, index) => {
        const input = make('input', 'aw-token-input');
        input.type = 'text';
        input.value = text;
        input.maxLength = MAX_LABEL;
        input.setAttribute('aria-label', `${caption || 'Token'} ${index + 1} label`);
        input.addEventListener('input', () => {
          const next = { ...problem, [axis]: [...problem[axis]] };
          next[axis][index] = input.value;
          if (problem.self) next.kTokens = next.qTokens;
          relabel(next);
        });
        row.append(input);
      });
      tokenBox.append(row);
    };
    labelRow('qTokens', problem.qTokens, problem.self ? '' : (problem.mode === 'softmax' ? 'Rows' : 'Queries'));
    if (!problem.self) labelRow('kTokens', problem.kTokens, problem.mode === 'softmax' ? 'Entries' : 'Keys');

    // Matrices
    editors.replaceChildren();
    matrixEditors = {};
    const titles = { x: problem.mode === 'softmax' ? 'x' : 'X', wq: 'W_Q', wk: 'W_K', wv: 'W_V', q: 'Q', k: 'K', v: 'V', scores: 'Scores', weights: 'Weights' };
    for (const name of Object.keys(shapesOf(problem.mode, dimsOf(problem), f))) {
      const editor = createMatrixEditor(editors, {
        title: titles[name], name: titles[name],
        onChange: (values) => edit({ ...problem, fields: { ...problem.fields, [name]: values } }),
      });
      const [rowLabels, colLabels] = editorLabels(name);
      editor.setValues(f[name], rowLabels, colLabels);
      matrixEditors[name] = editor;
    }
  }

  function backwardControl() {
    const label = make('label', 'aw-backward');
    const box = make('input');
    box.type = 'checkbox';
    box.checked = Boolean(problem.backward);
    box.addEventListener('change', () => {
      if (apply({ ...problem, backward: box.checked })) notify();
    });
    label.append(box, doc.createTextNode(' Backward pass: how the loss ½\u2016output \u2212 target\u2016\u00b2 changes with every number, '
      + 'where the target asks each token\u2019s output to be its own value row'));
    return label;
  }

  function editorLabels(name) {
    const cols = (n) => Array.from({ length: n }, (_, i) => String(i + 1));
    const f = problem.fields;
    if (name === 'x' || name === 'q' || name === 'scores' || name === 'weights') {
      return [problem.qTokens, name === 'scores' || name === 'weights' || problem.mode === 'softmax' ? problem.kTokens : cols(f[name][0].length)];
    }
    if (name === 'k' || name === 'v') return [problem.kTokens, cols(f[name][0].length)];
    return [cols(f[name].length), cols(f[name][0].length)];
  }

  // Labels are page text, but steps and heatmaps carry them: rebuild those,
  // keeping the matrix editors (and the learner's focus) as they are.
  function relabel(next) {
    edited = true;
    problem = next;
    apply(next);
    for (const [name, editor] of Object.entries(matrixEditors)) editor.setLabels(...editorLabels(name));
    notify();
  }

  // ---- Presets and state ----

  function loadPreset(id, { step = 0, values, backward = false } = {}) {
    const known = byId.get(id);
    const previous = { preset, edited };
    preset = known ?? byId.get(presets.default) ?? list[0];
    const notices = [];
    const elsewhere = presets.presets.find((candidate) => candidate.id === id);
    if (elsewhere && !known) {
      // Known, but not a walkthrough example: today only the multi-head shapes presets.
      notices.push(`\u201c${elsewhere.id}\u201d has ${elsewhere.input.numHeads} heads, more than a step-by-step walk can show: `
        + 'it is shown in the Multi-head attention section below.');
    } else if (id !== undefined && !known) {
      notices.push(`There is no example called \u201c${String(id).slice(0, 40)}\u201d; showing \u201c${preset.title}\u201d instead.`);
    }
    let shown = false;
    if (values) {
      const fromUrl = withBackward(problemFromValues(values, preset), backward);
      edited = true;
      shown = Boolean(fromUrl) && apply(fromUrl, { keepStep: false });
      if (!shown) notices.push('The edited values in the link could not be used; showing the example\u2019s own numbers.');
    }
    if (!shown) {
      edited = false;
      shown = apply(withBackward(problemFromPreset(preset), backward), { keepStep: false });
    }
    if (!shown) {
      // Only a broken preset gets here: keep what was on screen.
      ({ preset, edited } = previous);
      if (preset) presetSelect.value = preset.id;
      return;
    }
    presetSelect.value = preset.id;
    source.textContent = preset.tutorial ? `From ${tutorialName(preset.tutorial)}` : 'Our own example';
    notes.textContent = preset.notes ?? '';
    claimsSlot.replaceChildren();
    appendClaims(claimsSlot, presets, `preset:${preset.id}`);
    buildEditor();
    showStep(Math.min(Number.isInteger(step) ? step : 0, steps.length - 1));
    say(notices.join(' '));
  }

  function withBackward(next, backward) {
    return next && backward ? { ...next, backward: true } : next;
  }

  function getState() {
    const state = { preset: preset.id, step: current };
    if (problem.backward) state.backward = true;
    if (Object.keys(ownTexts).length > 0) state.check = ownTexts;
    if (edited) {
      state.values = { mode: problem.mode, fields: problem.fields, tokens: problem.qTokens };
      if (!problem.self) state.values.keyTokens = problem.kTokens;
      if (problem.vector) state.values.vector = true;
    }
    return state;
  }

  function setState(next = {}) {
    player.pause();
    const step = Number.isInteger(next.step) ? next.step : Number.parseInt(next.step ?? '0', 10);
    own = null;
    ownTexts = {};
    loadPreset(next.preset, { step: Number.isNaN(step) ? 0 : Math.max(0, step), values: next.values, backward: Boolean(next.backward) });
    const { texts, printed, decimals } = checker.setTexts(next.check ?? {});
    ownTexts = texts;
    if (Object.keys(printed).length > 0) {
      own = { printed, printedDecimals: decimals };
      refreshErrata();
    }
  }

  presetSelect.addEventListener('change', () => {
    player.pause();
    own = null; // numbers checked against another example
    ownTexts = checker.setTexts({}).texts;
    loadPreset(presetSelect.value);
    notify();
  });

  setState(state);

  return {
    getState,
    setState,
    /** The engine input of the problem on screen, token labels included (for exports). */
    exportInput() {
      return engineInput(problem);
    },
    /** The errata section that follows the engine's Markdown or LaTeX ('' when none apply). */
    exportErrata(style) {
      if ((edited && !own) || errata.length === 0) return '';
      return errataSection(style, model, steps, errataGroups, { own: Boolean(own) });
    },
    destroy() {
      player.destroy();
      for (const heatmap of Object.values(heatmaps)) heatmap.destroy();
      root.remove();
    },
  };
}

