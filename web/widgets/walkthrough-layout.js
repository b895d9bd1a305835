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
  // "Your turn": the walkthrough asks for values before it shows them.
  const turnLabel = make('label', 'aw-turn');
  const turn = make('input', 'aw-turn-toggle');
  turn.type = 'checkbox';
  // On a phone only "Your turn" shows, beside "Example" (style.css): a line
  // more would push the player's scrubber below the first screen.
  turnLabel.title = 'Your turn: compute a score, a weight and an output before they appear';
  turnLabel.append(turn, make('span', '', 'Your turn'),
    make('span', 'aw-turn-why', ': compute a score, a weight and an output before they appear'));
  element.append(presetLabel, turnLabel, source, message);
  return { element, presetSelect, turn, turnLabel, source, notes, message };
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

/** The explanation of the current step: its title and sentence, formula and errata. */
function createExplain(make) {
  const element = make('div', 'aw-explain');
  // Only the title and the sentence are announced on each step, not the arithmetic.
  const announced = make('div', 'aw-announced');
  announced.setAttribute('aria-live', 'polite');
  const title = make('h3', 'aw-step-title');
  const text = make('p', 'aw-step-text');
  announced.append(title, text);
  const formula = make('div', 'aw-step-formula');
  const errata = make('div', 'aw-step-errata');
  element.append(announced, formula, errata);
  return { element, title, text, formula, errata };
}

// The views of a step, one on screen at a time so that each number has one
// home: its figure (what it computes, moving), the matrices, the heatmaps,
// the attention as lines and its every equation. A tab list chooses; the
// choice holds while stepping, and a step without the view chosen shows
// its figure, or its matrices when it has no figure either.
const VIEWS = [
  ['figure', 'Figure'], ['matrices', 'Matrices'], ['heatmaps', 'Heatmaps'], ['lines', 'Lines'], ['equations', 'Equations'],
];

/** The views' names, as a link or a host names them (view=matrices). */
export const VIEW_NAMES = VIEWS.map(([name]) => name);

function createViews(make, visuals, widgetId, onChoose) {
  const tablist = make('div', 'aw-views');
  tablist.setAttribute('role', 'tablist');
  tablist.setAttribute('aria-label', 'Show this step as');
  visuals.append(tablist);
  const tabs = {};
  const panels = {};
  for (const [name, label] of VIEWS) {
    const tab = make('button', 'aw-view-tab', label);
    tab.type = 'button';
    tab.id = `aw-view-${widgetId}-${name}`;
    tab.dataset.view = name;
    tab.setAttribute('role', 'tab');
    const panel = make('div', `aw-view-panel aw-view-${name}`);
    panel.id = `${tab.id}-panel`;
    panel.dataset.view = name;
    panel.setAttribute('role', 'tabpanel');
    panel.setAttribute('aria-labelledby', tab.id);
    tab.setAttribute('aria-controls', panel.id);
    tablist.append(tab);
    visuals.append(panel);
    tabs[name] = tab;
    panels[name] = panel;
  }
  let chosen = 'figure';
  let has = () => true;
  const onShow = new Set();

  function render() {
    const fallback = ['figure', 'matrices'].find(has);
    const current = has(chosen) ? chosen : fallback;
    for (const [name] of VIEWS) {
      const on = name === current;
      tabs[name].hidden = !has(name);
      tabs[name].setAttribute('aria-selected', String(on));
      tabs[name].tabIndex = on ? 0 : -1;
      // The figure keeps its time while another view is shown (Play waits
      // for its movement, and the results appear as it lands), so it is
      // only made invisible; the other views are not drawn at all.
      if (name === 'figure') panels[name].classList.toggle('aw-view-off', !on);
      else panels[name].hidden = !on;
    }
    for (const listener of onShow) listener(current);
    return current;
  }
  // A learner's choice is reported (onChoose): the address keeps it.
  function choose(name, { focus = false } = {}) {
    chosen = name;
    render();
    if (focus) tabs[name].focus();
    onChoose(name);
  }
  tablist.addEventListener('click', (event) => {
    const tab = event.target.closest('[role="tab"]');
    if (tab) choose(tab.dataset.view);
  });
  // Arrow keys, Home and End move along the tabs shown, each chosen as it is reached.
  tablist.addEventListener('keydown', (event) => {
    const shown = VIEWS.map(([name]) => name).filter(has);
    const at = shown.indexOf(event.target.dataset.view);
    const moves = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: shown.length - 1 };
    if (at < 0 || !(event.key in moves)) return;
    event.preventDefault();
    choose(shown[(moves[event.key] + shown.length) % shown.length], { focus: true });
  });
  return {
    tablist, panels,
    /** The views this step has (has(name) -> boolean); shows the chosen one, or its stand-in. */
    offer(available) {
      has = available;
      return render();
    },
    /** listener(name) hears which view is on screen after every change. */
    onShow(listener) { onShow.add(listener); },
    tab: (name) => tabs[name],
    /** The view chosen (shown whenever the step has it). */
    chosen: () => chosen,
    /** Chooses a view by name, as a link or a host does; an unknown name leaves the choice as it is. */
    set(name) {
      if (!VIEW_NAMES.includes(name)) return false;
      chosen = name;
      render();
      return true;
    },
  };
}

/**
 * A step's every equation, in the Equations view: its tab counts them,
 * and they are drawn only while the view is on screen.
 */
function createEquations(make, doc, panel, tab) {
  const lines = make('div', 'aw-step-lines');
  panel.append(lines);
  let linesOf = null;
  let count = 0;
  let shown = false;
  const render = () => lines.replaceChildren(...(shown && linesOf ? linesOf(doc) : []));
  return {
    get count() { return count; },
    set({ lines: linesOfStep, count: next = 0 }) {
      linesOf = linesOfStep ?? null;
      count = next;
      // The count goes on a phone, where five tabs just fit on one line.
      tab.replaceChildren('Equations', make('span', 'aw-view-count', ` (${count})`));
      render();
    },
    clear() {
      linesOf = null;
      count = 0;
      lines.replaceChildren();
    },
    show(on) {
      if (on === shown) return;
      shown = on;
      render();
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
 * The matrices, heatmaps and attention lines of the stage, each in its
 * view's panel. update(model, problem) draws a model's values (the same
 * matrices as before, after an edit of values, are updated in place);
 * show, heat and reset are the view's.
 */
function createMatrices(make, panels, editCell) {
  const matsBox = make('div', 'aw-mats');
  const heatBox = make('div', 'aw-heatmaps');
  const heatDetail = make('p', 'aw-heatmap-detail');
  panels.matrices.append(matsBox);
  panels.heatmaps.append(heatBox, heatDetail);
  const heatmaps = {
    scaled: createHeatmap(heatBox, { title: 'Scaled scores (before the softmax)', name: 'scaled score', detailElement: heatDetail }),
    weights: createHeatmap(heatBox, { title: 'Attention weights', name: 'weight', detailElement: heatDetail }),
  };
  const tokenLines = mountLines(panels.lines);
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
      // In the step's order; an element already in place is not moved, for
      // moving it would take the focus from a cell being edited in it.
      const order = names.filter((name) => matViews[name]).map((name) => matViews[name].element);
      let before = matsBox.firstElementChild;
      for (const element of order) {
        if (element === before) before = before.nextElementSibling;
        else matsBox.insertBefore(element, before);
      }
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
  const explain = createExplain(make);
  const visuals = make('div', 'aw-visuals');
  stage.append(explain.element, visuals);
  root.append(stage);
  const views = createViews(make, visuals, widgetId, on.view);
  // What the step computes, moving (drawn from the step's equations).
  const figure = createStepFigure(views.panels.figure);
  // Your turn's exercise, in the figure where the value will appear.
  const exerciseSlot = make('div', 'aw-exercise-slot');
  views.panels.figure.prepend(exerciseSlot);
  const equations = createEquations(make, doc, views.panels.equations, views.tab('equations'));
  views.onShow((name) => equations.show(name === 'equations'));
  const matrices = createMatrices(make, views.panels, on.editCell);
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
    settled: () => figure.settled(),
    onSpeed: (speed) => figure.setRate(speed),
    // Play brings the step's explanation and figure on screen under the player.
    onPlay: () => inView.step(),
  });
  const inView = keepInView({ root, playerSlot, player: player.element, explain: explain.element, figure: visuals });

  const view = {
    show: matrices.show,
    explain({ text, formula, lines, count }) {
      explain.text.textContent = text;
      // The same formula stays as it is typeset: an edit, or a step of the same formula, sets no markup.
      if (explain.formula.firstChild?.dataset.tex !== formula) {
        explain.formula.replaceChildren(...(formula ? [mathElement(doc, formula, { display: true })] : []));
      }
      equations.set({ lines, count });
    },
    heat: matrices.heat,
    reset() {
      matrices.unmark();
      matrices.heat({});
      equations.clear();
    },
  };

  return {
    // The learner's own numbers are checked in the check box's verdict.
    presetSelect: header.presetSelect, turn: header.turn, turnLabel: header.turnLabel, exerciseSlot, player, checker,
    editPanel, view, views, errataBox: { ...errata, own: checker.verdict },
        stepErrataBox: explain.errata,
    /** Shows the figure with the step's repeat `index` opened onto its own figure. */
    openRepeat(index) {
      views.set('figure');
      figure.openRepeat(index);
    },
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
     * keeps the figure on screen. held: an exercise asks for a value of the
     * step first, so its figure and what it computes wait (shown again
     * without it once answered).
     */
    showStep(model, steps, current, { reason, held = false, ...figureOptions }) {
      player.setStep(current);
      const step = steps[current];
      explain.title.textContent = `${current + 1}. ${step.title}`;
      const moves = !held && figure.show(step,
          { labelOf: (ref, part) => cellName(model, ref, part), scale: model.barScale, ...figureOptions });
      if (held) figure.element.hidden = true;
      // What the step computes shows its numbers once the figure's movement
      // that computes them has landed: until then the other views (the
      // matrices, heatmaps, attention lines and the overview) show the steps
      // before it, with this step's cells marked. The equation list, which
      // the learner opens to read them all at once, is not held back.
      step.enter(view, { pending: moves || held });
      const lines = Boolean(model.mats.weights) && model.mode !== 'softmax';
      views.offer((name) => ({
        figure: held || !figure.element.hidden, lines, equations: equations.count > 0,
      })[name] ?? true);
      const through = moves || held ? current - 1 : current;
      matrices.tokenLines.show(model, steps, through);
      overview.show(current, { through });
      stages.mark(current);
      if (reason === 'play') inView.figure();
      if (!moves) {
        player.measured(current, 0);
        return;
      }
      figure.landed().then((landed) => {
        if (!landed) return;
        player.measured(current, figure.movementMs());
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
