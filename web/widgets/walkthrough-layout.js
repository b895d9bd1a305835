// The walkthrough's layout: every element the widget shows, built once and
// in page order, and the drawing of a step, a model and a preset on them.
// It decides nothing: the controller (walkthrough.js) says what to show and
// hears what the learner does through `on`; the editor
// (walkthrough-editor.js) fills the boxes of `editPanel`.
//
//   createLayout(element, { list, widgetId, on }) -> layout
//   list: the walkthrough's presets, for the example menu
//   on: { jump(index), step(index, reason), describeStep(index) -> title,
//         editCell(name, i, j, value) -> the engine's refusal or '',
//         check({ texts, printed, decimals }) }
//
// The view (`layout.view`) is what the steps of walkthrough-steps.js draw on:
// show(names, marksByName), explain({ text, formula, lines, count }),
// heat(cellsByName, futureByName), reset().

import { createPlayer } from '../ui/player.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createMatrixView } from '../ui/matrix-editor.js';
import { mathElement } from '../ui/math.js';
import { appendClaims } from '../ui/claims.js';
import { createStepFigure } from '../ui/step-figure.js';
import { builder } from '../ui/dom.js';
import { tutorialName } from '../presets.js';
import { cellName, describeCell, sourcesOf, stagesOf } from './walkthrough-steps.js';
import { mount as mountLines } from './walkthrough-lines.js';
import { mount as mountOverview } from './walkthrough-overview.js';
import { mount as mountCheck } from './walkthrough-check.js';

/** The example menu, where it comes from, the widget's message line, and the notes that go under the player. */
function createHeader(make, list) {
  const element = make('div', 'aw-head');
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
  element.append(presetLabel, source, message);
  return { element, presetSelect, source, notes, message };
}

// The stages of the computation, X -> Q, K, V -> ... -> weights x V: where
// the current step is, and a way to jump to any stage.
function createStages(make, jump) {
  const element = make('nav', 'aw-stages');
  element.setAttribute('aria-label', 'Stages of the computation');
  const list = make('ol', 'aw-stages-list');
  element.append(list);
  return {
    element,
    render(steps) {
      list.replaceChildren();
      for (const { label, first } of stagesOf(steps)) {
        const item = make('li', 'aw-stages-item');
        const button = make('button', 'aw-stage-button', label);
        button.type = 'button';
        button.dataset.first = String(first);
        button.addEventListener('click', () => jump(first));
        item.append(button);
        list.append(item);
      }
    },
    mark(current) {
      const buttons = [...list.querySelectorAll('button')];
      // The current stage is the last one that starts at or before the step.
      const at = buttons.findLastIndex((button) => Number(button.dataset.first) <= current);
      buttons.forEach((button, k) => {
        if (k === at) button.setAttribute('aria-current', 'step');
        else button.removeAttribute('aria-current');
      });
    },
  };
}

/** The explanation of the current step: its title and sentence, formula, figure, equations and errata. */
function createExplain(make, doc, widgetId) {
  const element = make('div', 'aw-explain');
  // Only the title and the sentence are announced on each step, not the arithmetic.
  const announced = make('div', 'aw-announced');
  announced.setAttribute('aria-live', 'polite');
  const title = make('h3', 'aw-step-title');
  const text = make('p', 'aw-step-text');
  announced.append(title, text);
  const formula = make('div', 'aw-step-formula');
  const lines = make('div', 'aw-step-lines');
  const errata = make('div', 'aw-step-errata');
  element.append(announced, formula);
  // What the step computes, moving (drawn from the step's equations).
  const figure = createStepFigure(element);
  // The figure shows each value of the step once; its every equation is
  // one click away, and the choice holds while stepping.
  const linesToggle = make('button', 'aw-btn aw-lines-toggle');
  linesToggle.type = 'button';
  lines.id = `aw-step-lines-${widgetId}`;
  linesToggle.setAttribute('aria-controls', lines.id);
  let linesShown = false;
  let linesOf = null;
  function renderLines() {
    linesToggle.setAttribute('aria-expanded', String(linesShown));
    lines.hidden = !linesShown;
    lines.replaceChildren(...(linesShown && linesOf ? linesOf(doc) : []));
  }
  linesToggle.addEventListener('click', () => {
    linesShown = !linesShown;
    renderLines();
  });
  element.append(linesToggle, lines, errata);
  return {
    element, title, figure, errata,
    explain({ text: sentence, formula: tex, lines: linesOfStep, count = 0 }) {
      text.textContent = sentence;
      formula.replaceChildren();
      if (tex) formula.append(mathElement(doc, tex, { display: true }));
      linesOf = linesOfStep ?? null;
      linesToggle.hidden = count === 0;
      linesToggle.textContent = `Show every equation (${count})`;
      renderLines();
    },
    clearLines() {
      linesOf = null;
      lines.replaceChildren();
    },
  };
}

// Hovering or focusing a computed cell lights the cells it came from, in
// every matrix and heatmap on screen. modelOf() is the model on screen.
function lightSources(visuals, modelOf) {
  let lit = [];
  function light(target) {
    for (const cell of lit) cell.classList.remove('aw-src');
    lit = [];
    const model = modelOf();
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
  visuals.addEventListener('pointerover', (event) => light(event.target));
  visuals.addEventListener('focusin', (event) => light(event.target));
  visuals.addEventListener('pointerleave', () => light(null));
  visuals.addEventListener('focusout', () => light(null));
}

/**
 * The matrices and heatmaps of the stage, in `visuals`. update(model,
 * problem) draws a model's values (the same matrices as before, after an
 * edit of values, are updated in place); show, heat and reset are the view's.
 */
function createMatrices(make, visuals, editCell) {
  const matsBox = make('div', 'aw-mats');
  const heatBox = make('div', 'aw-heatmaps');
  const heatDetail = make('p', 'aw-heatmap-detail');
  visuals.append(matsBox, heatBox, heatDetail);
  const heatmaps = {
    scaled: createHeatmap(heatBox, { title: 'Scaled scores (before the softmax)', name: 'scaled score', detailElement: heatDetail }),
    weights: createHeatmap(heatBox, { title: 'Attention weights', name: 'weight', detailElement: heatDetail }),
  };
  const tokenLines = mountLines(heatBox);
  for (const [name, heatmap] of Object.entries(heatmaps)) heatmap.element.dataset.matrix = name;
  let matViews = {};
  let matLayout = '';

  function updateViews(model) {
    const layout = JSON.stringify(Object.entries(model.mats).map(([name, mat]) => [name, mat.title]));
    if (layout !== matLayout) {
      for (const matView of Object.values(matViews)) matView.destroy();
      matViews = {};
      for (const [name, mat] of Object.entries(model.mats)) {
        matViews[name] = createMatrixView(matsBox,
            { title: mat.title, name, onEdit: (i, j, value) => editCell(name, i, j, value) });
      }
      matLayout = layout;
    }
    for (const [name, mat] of Object.entries(model.mats)) {
      matViews[name].update(mat);
      matViews[name].setVisible(false);
    }
  }

  function updateHeatmaps(model, problem) {
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

  return {
    tokenLines,
    update(model, problem) {
      updateViews(model);
      updateHeatmaps(model, problem);
    },
    show(names, marksByName = {}) {
      for (const [name, matView] of Object.entries(matViews)) {
        const visible = names.includes(name);
        matView.mark(visible ? marksByName[name] ?? {} : {});
        matView.setVisible(visible);
      }
      for (const name of names) if (matViews[name]) matsBox.append(matViews[name].element);
    },
    heat(cellsByName, futureByName = {}) {
      for (const [name, heatmap] of Object.entries(heatmaps)) heatmap.setHighlight(cellsByName[name] ?? [],
          futureByName[name]);
    },
    unmark() {
      for (const matView of Object.values(matViews)) matView.mark({});
    },
    destroy() {
      for (const heatmap of Object.values(heatmaps)) heatmap.destroy();
    },
  };
}

/**
 * Keeps the step on screen while the walkthrough plays, on the page's own
 * scroll (a compact layout scrolls its stage itself). step(): the step's
 * explanation moves up under the player (sticky at the top of the view),
 * as far as its figure needs to be seen whole; figure(): the least scroll
 * that shows the figure whole, only while the stage is in view (a learner
 * who scrolled away is not pulled back). The bottom is the page's
 * scroll-padding-bottom (its path bar).
 */
function keepInView({ root, playerSlot, player, explain, figure }) {
  const doc = root.ownerDocument;
  const view = doc.defaultView;
  const limits = () => {
    // The sticky one of the player and its slot covers the top of the view.
    const sticky = [playerSlot, player].find((element) => view.getComputedStyle(element).position === 'sticky');
    const top = sticky ? sticky.getBoundingClientRect().height : 0;
    const padding = parseFloat(view.getComputedStyle(doc.documentElement).scrollPaddingBottom) || 0;
    return { top, bottom: view.innerHeight - padding };
  };
  const active = () => root.dataset.awLayout !== 'compact' && !figure.hidden;
  // The scroll that shows the figure whole, or its top when it is taller than the room.
  const figureScroll = (by, { top, bottom }) => {
    const box = figure.getBoundingClientRect();
    const below = box.bottom - by - bottom;
    const above = box.top - by - top;
    if (above < 0) return by + above;
    return below > 0 ? by + Math.min(below, above) : by;
  };
  return {
    step() {
      if (!active()) return;
      const room = limits();
      const by = figureScroll(explain.getBoundingClientRect().top - room.top, room);
      if (Math.abs(by) >= 1) view.scrollBy({ top: by, behavior: 'instant' });
    },
    figure() {
      if (!active()) return;
      const stage = figure.getBoundingClientRect();
      if (stage.bottom < 0 || stage.top > view.innerHeight) return;
      const by = figureScroll(0, limits());
      if (Math.abs(by) >= 1) view.scrollBy({ top: by, behavior: 'instant' });
    },
  };
}

/** The errata under the stage: a disclosure whose summary counts them. */
function createErrataBox(make) {
  const box = make('details', 'aw-errata');
  const title = make('summary', 'aw-errata-summary');
  const body = make('div', 'aw-errata-body');
  box.append(title, body);
  return { box, title, body };
}

/** The editor's disclosure and its empty boxes, which walkthrough-editor.js fills. */
function createEditPanel(make) {
  // A disclosure, open from the start except on a phone, where the figure comes first.
  const box = make('details', 'aw-edit');
  box.open = !box.ownerDocument.defaultView.matchMedia?.('(max-width: 520px)').matches;
  const summary = make('summary', 'aw-edit-summary');
  summary.append(make('h3', '', 'Change the numbers'));
  const status = make('p', 'aw-edit-status');
  status.setAttribute('role', 'status');
  // What went wrong with the last edit, in the editor where it was made.
  const error = make('p', 'aw-edit-error');
  error.setAttribute('role', 'alert');
  const modeBox = make('fieldset', 'aw-modes');
  const controls = make('div', 'aw-controls');
  const tokenBox = make('fieldset', 'aw-tokens');
  const editors = make('div', 'aw-editors');
  box.append(summary, status, error, modeBox, controls, tokenBox, editors);
  return { box, status, error, modeBox, controls, tokenBox, editors };
}

export function createLayout(element, { list, widgetId, on }) {
  const doc = element.ownerDocument;
  const make = builder(doc);
  const root = make('div', 'aw-root aw-walkthrough');
  element.append(root);
  const header = createHeader(make, list);
  root.append(header.element);
  // The whole computation at a glance, filled in as the player goes.
  const overview = mountOverview(root, { onJump: on.jump });
  // Player, and the example's notes under it.
  const playerSlot = make('div', 'aw-player-slot');
  root.append(playerSlot, header.notes);
  const stages = createStages(make, on.jump);
  root.append(stages.element);
  // Stage: the explanation and the matrices of the current step.
  const stage = make('div', 'aw-stage');
  const explain = createExplain(make, doc, widgetId);
  const visuals = make('div', 'aw-visuals');
  stage.append(explain.element, visuals);
  root.append(stage);
  const matrices = createMatrices(make, visuals, on.editCell);
  let shownModel = null;
  lightSources(visuals, () => shownModel);
  const errata = createErrataBox(make);
  // The tutorial's other claims about this example (rows summing to 1, shapes).
  const claimsSlot = make('div', 'aw-claims-slot');
  let shownPreset = null;
  root.append(errata.box, claimsSlot);
  const editPanel = createEditPanel(make);
  root.append(editPanel.box);
  // Check your own numbers: the learner's printed tables, checked by the
  // engine as the tutorials' are.
  const checkSlot = make('div', 'aw-check-slot');
  root.append(checkSlot);
  const checker = mountCheck(checkSlot, { onChange: on.check });
  const player = createPlayer(playerSlot, {
    count: 1,
    onStep: on.step,
    describeStep: on.describeStep,
    watch: stage,
    // Playing waits for the figure's movement, which plays at the chosen speed.
    settled: () => explain.figure.settled(),
    onSpeed: (speed) => explain.figure.setRate(speed),
    // Play brings the step's explanation and figure on screen under the player.
    onPlay: () => inView.step(),
  });
  const inView = keepInView({ root, playerSlot, player: player.element, explain: explain.element,
    figure: explain.figure.element });

  const view = {
    show: matrices.show,
    explain: explain.explain,
    heat: matrices.heat,
    reset() {
      matrices.unmark();
      matrices.heat({});
      explain.clearLines();
    },
  };

  return {
    // The learner's own numbers are checked in the check box's verdict.
    presetSelect: header.presetSelect, player, checker, editPanel, view, errataBox: { ...errata, own: checker.verdict },
        stepErrataBox: explain.errata,
    /** Shows text in the widget's message line; empty text hides it. */
    say(text) {
      header.message.textContent = text;
      header.message.hidden = !text;
    },
    /** A new model on screen: its matrices, heatmaps, overview, stages and step count. */
    showModel(model, problem, steps) {
      shownModel = model;
      matrices.update(model, problem);
      overview.update(model, steps);
      stages.render(steps);
      player.setCount(steps.length);
    },
    /**
     * Step `current` of `steps` (the one before it has left the view): the
     * player's place, its title, what it draws on the view, its figure
     * (figureOptions: { still, marked, markedNote }), the attention lines,
     * the overview and the stage; a step that playing shows (reason 'play')
     * keeps the figure on screen.
     */
    showStep(model, steps, current, { reason, ...figureOptions }) {
      player.setStep(current);
      const step = steps[current];
      explain.title.textContent = `${current + 1}. ${step.title}`;
      const moves = explain.figure.show(step,
          { labelOf: (ref, part) => cellName(model, ref, part), scale: model.barScale, ...figureOptions });
      // What the step computes shows its numbers once the figure's movement
      // that computes them has landed: until then the other views (the
      // matrices, heatmaps, attention lines and the overview) show the steps
      // before it, with this step's cells marked. The equation list, which
      // the learner opens to read them all at once, is not held back.
      step.enter(view, { pending: moves });
      const through = moves ? current - 1 : current;
      matrices.tokenLines.show(model, steps, through);
      overview.show(current, { through });
      stages.mark(current);
      if (reason === 'play') inView.figure();
      if (!moves) {
        player.measured(current, 0);
        return;
      }
      explain.figure.landed().then((landed) => {
        if (!landed) return;
        player.measured(current, explain.figure.movementMs());
        step.reveal(view);
        matrices.tokenLines.show(model, steps, current);
        overview.show(current);
      });
    },
    /** Where the preset comes from, its notes and the tutorial's claims about it. */
    showPreset(preset, presets, edited) {
      header.presetSelect.value = preset.id;
      shownPreset = preset;
      this.showEdited(edited);
      claimsSlot.replaceChildren();
      appendClaims(claimsSlot, presets, `preset:${preset.id}`);
    },
    /** Numbers edited, opened from the trainer or given by a host are not the
     * example's: its source line says so, and its notes and the tutorial's
     * claims, which are about its own numbers, go. */
    showEdited(edited) {
      if (!shownPreset) return;
      const from = shownPreset.tutorial ? `From ${tutorialName(shownPreset.tutorial)}` : 'Our own example';
      header.source.textContent = edited
        ? 'Not the example\u2019s numbers: choose it in the menu for its own.'
        : from;
      header.notes.textContent = edited ? '' : shownPreset.notes ?? '';
      claimsSlot.hidden = edited;
    },
    destroy() {
      player.destroy();
      matrices.destroy();
      root.remove();
    },
  };
}
