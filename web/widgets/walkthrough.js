// The step-by-step walkthrough widget: pick a preset, play through the
// computation with the engine's numbers, edit any input and watch every
// value follow.
//
//   mount(element, { engine, presets, state?, onChange?, exercises? })
//   exercises: 'off' (the default: "Your turn" is the learner's to switch
//   on), 'on', or the cells to ask for ("weights:0:1,output:0:0", or
//   [{ matrix, row, col }]), which switch it on; by default a score, a
//   weight and an output of the first query. onStatement(statement): an
//   xAPI statement (ui/xapi.js) as each is answered, and when all are.
//     -> { destroy(), getState(), setState(state), exportInput(), exportErrata(style) }
//   state: { preset, step, values?, backward?, check? } (values: the edited problem, for URLs)
//
// Everything lives inside `element`; nothing here touches the page around it.
// This file is the controller: what is on screen (the preset, the problem,
// the engine's model and steps, the current step) and what each change does
// to it. walkthrough-layout.js builds and draws the elements,
// walkthrough-editor.js the editor panel.

import { buildModel, buildSteps, cellName, engineInput, firstComputed } from './walkthrough-steps.js';
import { exercisesFor, mount as mountExercise, parseExercises } from './walkthrough-exercise.js';
import { answeredStatement, completedStatement, walkthroughActivity } from '../ui/xapi.js';
import {
  errataOf, errataSection, groupErrata, misprintMarks, renderErrataList, renderStepErrata, roundingDifferences,
} from './walkthrough-errata.js';
import { problemFromPreset, problemFromValues, walkthroughPresets } from './walkthrough-problem.js';
import { VIEW_NAMES, createLayout } from './walkthrough-layout.js';
import { createEditor } from './walkthrough-editor.js';
import { NeedsEngine } from './walkthrough-built.js';

let widgets = 0;

/**
 * The printed numbers the engine checks for the problem on screen: the
 * learner's own (Check your own numbers) when they gave some, else the
 * example's tutorial's. report(text) shows why the engine could not check
 * the learner's. state holds the errata, their groups (the engine's causes),
 * the rounding differences among them and the misprints the summary
 * picture outlines.
 */
function createChecks(engine, report) {
  const state = {
    own: null, // { printed, printedDecimals }: the learner's numbers, or null
    ownError: '', // why the engine could not check them
    ownTexts: {}, // as typed, for the address, even those that do not read
    errata: [], groups: [], rounding: new Set(), marks: {},
  };

  // The engine's check of the learner's numbers, else of the tutorial's.
  function errataFor({ preset, problem, model, steps, edited }) {
    state.ownError = '';
    const options = { vector: problem.vector, engine, input: engineInput(problem) };
    if (state.own) {
      try {
        return errataOf(state.own, model, steps, options);
      } catch (error) {
        state.ownError = `The engine could not check these numbers: ${error.message}`;
        report(state.ownError);
        return [];
      }
    }
    return edited ? [] : errataOf(preset, model, steps, options);
  }

  /** What the errata views draw (walkthrough-errata.js's check). */
  function view({ preset, model, edited }) {
    const { errata, groups, rounding, own, ownError } = state;
    return { errata, groups, rounding, model, own: Boolean(own), ownError, edited, printed: Boolean(preset.printed) };
  }

  return {
    state,
    view,
    /** The learner's tables as the check box reads them ({ texts, printed, decimals }). */
    setOwn({ texts, printed, decimals }) {
      state.ownTexts = texts;
      state.own = Object.keys(printed).length > 0 ? { printed, printedDecimals: decimals } : null;
    },
    /** Checks again for `shown`, what is on screen. */
    refresh(shown) {
      state.errata = errataFor(shown);
      state.groups = groupErrata(state.errata);
      state.rounding = roundingDifferences(state.groups);
      state.marks = misprintMarks(view(shown));
    },
    /** The errata as a section of the engine's Markdown or LaTeX ('' when none apply). */
    section(style, { model, steps, edited }) {
      if ((edited && !state.own) || state.errata.length === 0) return '';
      return errataSection(style, model, steps, state.groups, { own: Boolean(state.own) });
    },
  };
}

// The printed keys of the results on screen, not the inputs ("weights";
// a multi-head problem's are its first head's, "heads.0.weights").
function checkFields(problem, model) {
  const head = problem.mode === 'projections';
  return ['q', 'k', 'v', 'scores', 'scaled', 'weights', 'output']
    .filter((name) => model.mats[name] && !Object.hasOwn(problem.fields, name)).map((name) => {
    const perHead = head && !['q', 'k', 'v'].includes(name);
    return { key: perHead ? `heads.0.${name}` : name, label: perHead ? `${name} (head 1)` : name };
  });
}

/** Why the example asked for (id) is not the one shown, if it is not. */
function presetNotices(presets, id, known, preset) {
  const elsewhere = presets.presets.find((candidate) => candidate.id === id);
  if (elsewhere && !known) {
    // Known, but not a walkthrough example: today only the multi-head shapes presets.
    return [`\u201c${elsewhere.id}\u201d has ${elsewhere.input.numHeads} heads, more than a step-by-step walk can show: `
      + 'it is shown in the Multi-head attention section below.'];
  }
  if (id !== undefined && !known) {
    return [`There is no example called \u201c${String(id).slice(0, 40)}\u201d; showing \u201c${preset.title}\u201d instead.`];
  }
  return [];
}

function withBackward(next, backward) {
  return next && backward ? { ...next, backward: true } : next;
}

/**
 * The step to open at, counted from 0, for a step asked for from outside
 * (a link, an attribute, a host's setState): counted from 0 as a number,
 * or the text given where it was not a number. A step this example does
 * not have opens the nearest one, with a notice saying so in the learner's
 * count, from 1.
 */
function openingStep(asked, count) {
  if (Number.isInteger(asked) && asked >= 0 && asked < count) return { index: asked, notices: [] };
  if (!Number.isInteger(asked)) {
    const text = typeof asked === 'string' ? `\u201c${asked.slice(0, 40)}\u201d` : String(asked);
    return { index: 0, notices: [`step ${text} is not a step number (they count from 1); showing step 1.`] };
  }
  const index = asked < 0 ? 0 : count - 1;
  const has = count === 1 ? 'one step' : `steps 1 to ${count}`;
  return { index, notices: [`There is no step ${asked + 1}: this example has ${has}; showing step ${index + 1}.`] };
}

/**
 * Puts the example `id` on screen through apply: the edited values of a
 * link when they work, else the example's own numbers. Returns the notices
 * to show, or null when not even those work (a broken preset), `shown`
 * then being as it was.
 */
function showPresetProblem({ presets, byId, list, shown, apply }, id, { values, backward }) {
  const known = byId.get(id);
  const previous = { preset: shown.preset, edited: shown.edited };
  shown.preset = known ?? byId.get(presets.default) ?? list[0];
  const notices = presetNotices(presets, id, known, shown.preset);
  let ok = false;
  if (values) {
    const fromUrl = withBackward(problemFromValues(values, shown.preset), backward);
    shown.edited = true;
    ok = Boolean(fromUrl) && apply(fromUrl, { keepStep: false });
    if (!ok) notices.push('The edited values in the link could not be used; showing the example\u2019s own numbers.');
  }
  if (!ok) {
    shown.edited = false;
    ok = apply(withBackward(problemFromPreset(shown.preset), backward), { keepStep: false });
  }
  if (ok) return notices;
  Object.assign(shown, previous);
  return null;
}

/** The widget's state, for the address: the edited problem only when it is edited. */
function stateOf({ preset, problem, current, edited }, ownTexts, view) {
  const state = { preset: preset.id, step: current };
  if (view !== 'figure') state.view = view;
  if (problem.backward) state.backward = true;
  if (Object.keys(ownTexts).length > 0) state.check = ownTexts;
  if (edited) {
    state.values = { mode: problem.mode, fields: problem.fields, tokens: problem.qTokens };
    if (!problem.self) state.values.keyTokens = problem.kTokens;
    if (problem.vector) state.values.vector = true;
  }
  return state;
}

/**
 * "Your turn": the exercises of the problem on screen and the step that
 * asks each (the first that computes its cell), while the learner has it on.
 */
function createTurn(shown, cells, onStatement) {
  let list = [];
  let stepOf = new Map();
  let outcomes = new Map();
  let started = 0;
  const keyOf = ({ matrix, row, col }) => `${matrix},${row},${col}`;
  return {
    on: false,
    /** The problem on screen changed: its exercises, asked afresh. */
    update() {
      list = exercisesFor(shown.model, cells);
      stepOf = firstComputed(shown.model, shown.steps);
      outcomes = new Map();
      started = 0;
    },
    /** An exercise asked: the time to complete them all counts from the first. */
    asked() {
      started ||= Date.now();
    },
    /** An exercise answered or shown: its statement, and once all are, the walkthrough's. */
    answered(exercise, label, outcome) {
      const walkthrough = walkthroughActivity(shown.preset.id);
      outcomes.set(keyOf(exercise), outcome);
      onStatement(answeredStatement({ walkthrough, exercise, label, outcome }));
      if (outcomes.size === list.length) {
        onStatement(completedStatement({ walkthrough, outcomes: [...outcomes.values()], ms: Date.now() - started }));
      }
    },
    /** Each exercise with its outcome: { matrix, row, col, state: 'right' | 'shown' | null, response }. */
    outcomes: () => list.map((exercise) => {
      const outcome = outcomes.get(keyOf(exercise));
      return { ...exercise, state: outcome?.state ?? null, response: outcome?.response ?? '' };
    }),
    /** Outcomes given before, kept without statements (they were sent then). */
    restore(saved) {
      for (const { matrix, row, col, state, response } of saved) {
        const exercise = list.find((e) => keyOf(e) === keyOf({ matrix, row, col }));
        if (exercise && (state === 'right' || state === 'shown')) outcomes.set(keyOf(exercise), { state, response });
      }
    },
    /** The exercise step `index` asks for, while on. */
    at(index) {
      return this.on ? list.find((exercise) => stepOf.get(keyOf(exercise)) === index) : undefined;
    },
    count: () => list.length,
  };
}

/** The engine's name of a page matrix: the projections' one head is heads.0. */
const resultName = (model, matrix) => (model.mode === 'projections' ? `heads.0.${matrix}` : matrix);

/**
 * What each change does to what is on screen (`shown`): a step shown, a
 * problem applied through the engine, an edit, a cell, a label. ui holds
 * the layout and the editor, made after this (they call back into it);
 * notify() reports the new state.
 */
function createController({ engine, shown, checks, ui, notify, turn }) {
  // To a step, and with `repeat` (an erratum's), open onto that repeat's figure.
  const jump = (index, repeat) => {
    ui.layout.player.pause();
    showStep(index);
    if (repeat !== undefined) ui.layout.openRepeat(repeat);
    notify();
  };

  // still: the same step again after an edit, whose figure then shows its
  // new numbers at once; reason: the player's, 'play' for a step playing
  // shows. A step whose exercise is not answered yet asks it first (and
  // pauses the player); once answered, the step shows, moving.
  function showStep(index, { still = false, reason } = {}) {
    const { steps } = shown;
    if (steps.length === 0) return;
    steps[shown.current]?.leave(ui.layout.view);
    shown.current = Math.min(Math.max(0, index), steps.length - 1);
    const exercise = turn.at(shown.current);
    const held = Boolean(exercise) && !ui.exercise.solved(exercise);
    if (held) ui.layout.player.pause();
    ui.layout.showStep(shown.model, steps, shown.current, { still, reason, held, ...checks.state.marks });
    renderStepErrata(ui.layout.stepErrataBox, checks.view(shown), shown.current);
    // The step's errata name its exact values: they wait with the figure.
    ui.layout.stepErrataBox.hidden = held;
    if (!exercise) {
      ui.exercise.hide();
      return;
    }
    const label = cellName(shown.model, [exercise.matrix, exercise.row, exercise.col]);
    if (!held) ui.exercise.show(exercise, { label });
    else {
      turn.asked();
      ui.exercise.ask(exercise, {
        label,
        onSolved(outcome) {
          turn.answered(exercise, label, outcome);
          showStep(shown.current, { reason: 'exercise' });
        },
      });
    }
  }

  function refreshErrata() {
    checks.refresh(shown);
    renderStepErrata(ui.layout.stepErrataBox, checks.view(shown), shown.current);
    renderErrataList(ui.layout.errataBox, checks.view(shown), jump);
  }

  /**
   * Computes `next` through the engine; on failure keeps the last good state
   * and hands the engine's message to report (by default, the header's line).
   */
  function apply(next, { keepStep = true, report = ui.layout.say } = {}) {
    let model;
    try {
      model = buildModel(engine, next);
    } catch (error) {
      // Before the engine (walkthrough-built.js), what it would take says why.
      report(error instanceof NeedsEngine ? error.message
        : `The engine could not use this input (${error.message}); the last good result stays on screen.`);
      return false;
    }
    const stepId = shown.steps[shown.current]?.id;
    Object.assign(shown, { problem: next, model, steps: buildSteps(model) });
    const { steps } = shown;
    turn.update();
    ui.exercise.reset();
    ui.layout.turnLabel.hidden = turn.count() === 0;
    ui.layout.checker.setFields(checkFields(next, model));
    checks.refresh(shown);
    ui.layout.showModel(model, next, steps);
    let index = keepStep ? steps.findIndex((step) => step.id === stepId) : 0;
    if (index < 0) index = Math.min(shown.current, steps.length - 1);
    shown.current = Math.min(shown.current, steps.length - 1);
    showStep(index, { still: steps[index]?.id === stepId });
    renderErrataList(ui.layout.errataBox, checks.view(shown), jump);
    ui.editor.showStatus(shown.edited);
    ui.layout.showEdited(shown.edited);
    ui.layout.say('');
    return true;
  }

  /** An edit from the editor: a failure is reported next to the control that made it. */
  function edit(next, { rebuildEditors = false, report = ui.editor.report } = {}) {
    const wasEdited = shown.edited;
    shown.edited = true;
    if (!apply(next, { report })) {
      shown.edited = wasEdited;
      return false;
    }
    ui.editor.report('');
    if (rebuildEditors) ui.editor.build();
    notify();
    return true;
  }

  /**
   * One cell of an input matrix, edited in place in the figure: the editor
   * panel follows. Returns the engine's reason when it refuses the value,
   * for the cell to show.
   */
  function editCell(name, i, j, value) {
    const { problem } = shown;
    const field = name === 'input' ? 'x' : name;
    const values = problem.fields[field].map((row) => [...row]);
    values[i][j] = value;
    let refused = '';
    if (!edit({ ...problem, fields: { ...problem.fields, [field]: values } },
        { report: (text) => { refused = text; } })) return refused;
    ui.editor.showValues(field, values);
    return '';
  }

  // Labels are page text, but steps and heatmaps carry them: rebuild those,
  // keeping the matrix editors (and the learner's focus) as they are.
  function relabel(next) {
    shown.edited = true;
    shown.problem = next;
    apply(next);
    ui.editor.showLabels();
    notify();
  }

  return { showStep, jump, refreshErrata, apply, edit, editCell, relabel };
}

// The exercises a mount asks for: { on, cells } (cells null: the defaults).
function exerciseOption(exercises) {
  if (exercises === 'off' || exercises === 'on') return { on: exercises === 'on', cells: null };
  const cells = typeof exercises === 'string' ? parseExercises(exercises) : exercises;
  return { on: true, cells };
}

export function mount(element, {
  engine, presets, state = {}, onChange = () => {}, exercises = 'off', onStatement = () => {},
}) {
  const widgetId = ++widgets;
  const list = walkthroughPresets(presets);
  const byId = new Map(list.map((preset) => [preset.id, preset]));
  // What is on screen; the editor reads it too.
  const shown = { preset: null, problem: null, model: null, steps: [], current: 0, edited: false };
  const ui = {};
  const checks = createChecks(engine, (text) => ui.layout.checker.report(text));
  const asked = exerciseOption(exercises);
  const turn = createTurn(shown, asked.cells, onStatement);
  turn.on = asked.on;
  const {
    showStep, jump, refreshErrata, apply, edit, editCell, relabel,
  } = createController({ engine, shown, checks, ui, notify, turn });
  const layout = createLayout(element, {
    list,
    widgetId,
    on: {
      jump,
      step: (index, reason) => { showStep(index, { reason }); notify(); },
      describeStep: (index) => shown.steps[index]?.title ?? '',
      view: () => notify(),
      editCell,
      check(change) {
        checks.setOwn(change);
        refreshErrata();
        notify();
      },
    },
  });
  const editor = createEditor(layout.editPanel, {
    widgetId,
    current: () => shown,
    act: {
      edit, apply, notify, relabel,
      // The example's own numbers again, and the host told (the address drops them).
      reset: () => {
        loadPreset(shown.preset.id, { step: shown.current });
        notify();
      },
    },
  });
  const exercise = mountExercise(layout.exerciseSlot, {
    grade: ({ matrix, row, col }, typed) => engine.answer(engineInput(shown.problem),
                                                          { result: resultName(shown.model, matrix), row, col, typed }),
  });
  Object.assign(ui, { layout, editor, exercise });
  layout.turn.checked = turn.on;
  layout.turn.addEventListener('change', () => {
    turn.on = layout.turn.checked;
    showStep(shown.current);
  });

  function notify() {
    onChange(getState());
  }

  function loadPreset(id, { step = 0, values, backward = false, more = [] } = {}) {
    const notices = showPresetProblem({ presets, byId, list, shown, apply }, id, { values, backward });
    if (!notices) {
      if (shown.preset) layout.presetSelect.value = shown.preset.id;
      return;
    }
    layout.showPreset(shown.preset, presets, shown.edited);
    editor.build();
    const opened = openingStep(step, shown.steps.length);
    showStep(opened.index);
    layout.say([...notices, ...opened.notices, ...more].join(' '));
  }

  function getState() {
    return stateOf(shown, checks.state.ownTexts, layout.views.chosen());
  }

  function setState(next = {}) {
    layout.player.pause();
    checks.setOwn({ texts: {}, printed: {} });
    const view = String(next.view ?? 'figure');
    const more = layout.views.set(view) ? [] : [`There is no view called \u201c${view.slice(0, 40)}\u201d; `
      + `the views are ${VIEW_NAMES.join(', ')}.`];
    loadPreset(next.preset, { step: next.step ?? 0, values: next.values, backward: Boolean(next.backward), more });
    const read = layout.checker.setTexts(next.check ?? {});
    checks.setOwn(read);
    if (checks.state.own) refreshErrata();
  }

  layout.presetSelect.addEventListener('change', () => {
    layout.player.pause();
    checks.setOwn(layout.checker.setTexts({})); // numbers checked against another example
    loadPreset(layout.presetSelect.value);
    notify();
  });

  setState(state);

  return {
    getState,
    setState,
    /** Moves delta steps as the player's step buttons do (Infinity: to the last); true if it moved. */
    stepBy: (delta) => layout.player.stepBy(delta),
    /**
     * Your turn's score, as a graded host asks (H5P): { score, max,
     * exercises: turn.outcomes() }; restoreExercises(exercises) brings saved
     * answers back, showSolutions() shows every value not answered yet,
     * resetExercises() asks them all again from the first step.
     */
    exercises() {
      const exercises = turn.outcomes();
      return { score: exercises.filter((e) => e.state === 'right').length, max: exercises.length, exercises };
    },
    restoreExercises(saved) {
      turn.restore(saved);
      for (const outcome of turn.outcomes()) if (outcome.state) exercise.restore(outcome, outcome);
      showStep(shown.current);
    },
    showSolutions() {
      const open = turn.outcomes().filter((e) => !e.state).map((e) => ({ ...e, state: 'shown' }));
      turn.restore(open);
      for (const outcome of open) exercise.restore(outcome, outcome);
      showStep(shown.current);
    },
    resetExercises() {
      turn.update();
      exercise.reset();
      jump(0);
    },
    /** The engine input of the problem on screen, token labels included (for exports). */
    exportInput() {
      return engineInput(shown.problem);
    },
    /** The errata section that follows the engine's Markdown or LaTeX ('' when none apply). */
    exportErrata(style) {
      return checks.section(style, shown);
    },
    destroy() {
      layout.destroy();
    },
  };
}
