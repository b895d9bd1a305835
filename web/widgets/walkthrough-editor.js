// The walkthrough's editor panel: where the computation starts from, the
// sizes, mask and scaling, a seeded random fill, the token labels and every
// input matrix. It builds controls for the problem on screen and hands each
// change to the controller (walkthrough.js) as a whole new problem; it
// computes nothing.
//
//   createEditor(panel, { widgetId, current, act }) -> editor
//   panel: layout.editPanel's boxes { status, error, modeBox, controls, tokenBox, editors }
//   current(): { problem, model, preset } on screen; every control reads it
//   when used, so a change builds on the edits made since it was built
//   act: { edit(next, { rebuildEditors?, report? }) -> ok, apply(next) -> ok,
//          notify(), relabel(next), reset() }
//   editor: { build(), showValues(field, values), showLabels(),
//             showStatus(edited), report(text) }

import { createMatrixEditor } from '../ui/matrix-editor.js';
import { parseNumber } from '../ui/format.js';
import { builder } from '../ui/dom.js';
import {
  MAX_LABEL, MAX_TOKENS, MAX_WIDTH, SDPA_MODES, convertedProblem, dimsOf, randomFilled, reshape, resized, shapesOf,
} from './walkthrough-problem.js';
import { canShowBackward } from './walkthrough-steps.js';

const MODE_LABELS = {
  projections: 'Start from X with W_Q, W_K, W_V',
  qkv: 'Enter Q, K, V directly',
  scores: 'Enter the scores directly',
};
const SIZE_LABELS = {
  T: 'Tokens (T)', nq: 'Queries', nk: 'Keys', din: 'Embedding width', dk: 'd_k', dv: 'd_v',
  rows: 'Rows', entries: 'Entries',
};

/** The row and column labels of an input matrix's editor. */
function editorLabels(problem, name) {
  const cols = (n) => Array.from({ length: n }, (_, i) => String(i + 1));
  const f = problem.fields;
  if (name === 'x' || name === 'q' || name === 'scores' || name === 'weights') {
    return [problem.qTokens, name === 'scores' || name === 'weights' || problem.mode === 'softmax' ? problem.kTokens : cols(f[name][0].length)];
  }
  if (name === 'k' || name === 'v') return [problem.kTokens, cols(f[name][0].length)];
  return [cols(f[name].length), cols(f[name][0].length)];
}

/**
 * A whole-number field with its own inline message; onValid(n, report) runs
 * for good values only, and report(message) shows a failure at the field.
 */
function integerControl(make, text, value, { min, max }, onValid) {
  const label = make('label', 'aw-size');
  label.append(label.ownerDocument.createTextNode(`${text} `));
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

/** A labelled <select> of [value, text] options. */
function selectControl(make, text, options, value, onSelect) {
  const label = make('label', 'aw-select');
  label.append(label.ownerDocument.createTextNode(`${text} `));
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

/** "Start from": X with projections, Q, K, V or the scores (the SDPA problems only). */
function fillModes(make, modeBox, { widgetId, current, seed, act }) {
  const { problem } = current();
  modeBox.replaceChildren();
  modeBox.hidden = !SDPA_MODES.includes(problem.mode);
  if (modeBox.hidden) return;
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
      if (!radio.checked) return;
      const now = current();
      act.edit(convertedProblem(now.problem, now.model, mode, seed()), { rebuildEditors: true });
    });
    label.append(radio, label.ownerDocument.createTextNode(` ${MODE_LABELS[mode]}`));
    modeBox.append(label);
  }
}

/** The mask and, with key padding, how many keys are real. */
function maskControls(make, { current, act }) {
  const { problem, preset } = current();
  const f = problem.fields;
  const maskOptions = [['none', 'none'], ['causal', 'causal (no looking ahead)']];
  const presetMask = preset.input.mask;
  if (Array.isArray(presetMask)) maskOptions.push(['custom', 'the example\u2019s own mask']);
  const maskValue = Array.isArray(f.mask) ? 'custom' : f.mask === 'causal' ? 'causal' : 'none';
  const controls = [selectControl(make, 'Mask', maskOptions, maskValue, (value) => {
    const now = current().problem;
    const fields = { ...now.fields };
    if (value === 'none') delete fields.mask;
    else if (value === 'causal') fields.mask = 'causal';
    else fields.mask = reshape(presetMask, now.qTokens.length, now.kTokens.length, true);
    act.edit({ ...now, fields });
  })];
  if (f.keyLength !== undefined) {
    const keys = problem.kTokens.length;
    controls.push(integerControl(make, 'Real keys (the rest is padding)', f.keyLength, { min: 0, max: keys }, (n) => {
      const now = current().problem;
      act.edit({ ...now, fields: { ...now.fields, keyLength: n } });
    }));
  }
  return controls;
}

/** The scaling (by √d_k, none or the example's factor) and, for given scores, their d_k. */
function scaleControls(make, { current, act }) {
  const { problem, preset } = current();
  const f = problem.fields;
  const controls = [];
  const scaleOptions = [['none', 'none']];
  if (problem.mode !== 'softmax' && problem.mode !== 'weightedSum') scaleOptions.unshift(['sqrt', 'divide by \u221ad_k']);
  const presetScale = preset.input.scale;
  if (typeof presetScale === 'number') scaleOptions.push(['factor', `multiply by ${presetScale}`]);
  const scaleValue = f.scale === false ? 'none' : typeof f.scale === 'number' ? 'factor' : (problem.mode === 'softmax' ? 'none' : 'sqrt');
  if (problem.mode !== 'weightedSum') {
    controls.push(selectControl(make, 'Scaling', scaleOptions, scaleValue, (value) => {
      const now = current().problem;
      const fields = { ...now.fields };
      if (value === 'sqrt') {
        delete fields.scale;
        if (now.mode === 'scores') fields.dk ??= now.kTokens.length;
      }
      else if (value === 'none') fields.scale = false;
      else fields.scale = presetScale;
      act.edit({ ...now, fields });
    }));
  }
  if (problem.mode === 'scores' && f.scale !== false && typeof f.scale !== 'number') {
    controls.push(integerControl(make, 'd_k for the scaling', f.dk ?? problem.kTokens.length, { min: 1 }, (n) => {
      const now = current().problem;
      act.edit({ ...now, fields: { ...now.fields, dk: n } });
    }));
  }
  return controls;
}

function backwardControl(make, { current, act }) {
  const { problem } = current();
  const label = make('label', 'aw-backward');
  const box = make('input');
  box.type = 'checkbox';
  box.checked = Boolean(problem.backward);
  box.addEventListener('change', () => {
    if (act.apply({ ...current().problem, backward: box.checked })) act.notify();
  });
  label.append(box, label.ownerDocument.createTextNode(' Backward pass: how the loss ½\u2016output \u2212 target\u2016\u00b2 changes with every number, '
    + 'where the target asks each token\u2019s output to be its own value row'));
  return label;
}

/** The seed, the random fill and the way back to the example's own numbers. */
function actionControls(make, { current, seed, setSeed, act }) {
  const actions = make('div', 'aw-actions');
  const seedLabel = make('label', 'aw-seed', 'Seed ');
  const seedInput = make('input');
  seedInput.type = 'number';
  seedInput.value = String(seed());
  seedInput.min = '0';
  seedInput.addEventListener('change', () => {
    const n = parseNumber(seedInput.value);
    if (Number.isInteger(n) && n >= 0) setSeed(n);
    else seedInput.value = String(seed());
  });
  seedLabel.append(seedInput);
  const fill = make('button', 'aw-btn aw-fill', 'Fill with random numbers');
  fill.type = 'button';
  fill.addEventListener('click', () => act.edit(randomFilled(current().problem, seed()), { rebuildEditors: true }));
  const reset = make('button', 'aw-btn aw-reset', 'Reset to the example');
  reset.type = 'button';
  reset.addEventListener('click', () => act.reset());
  actions.append(seedLabel, fill, reset);
  return actions;
}

/** Sizes, mask, scale, the backward pass, random fill and reset. */
function fillControls(make, controls, editorState) {
  const { current, act } = editorState;
  const { problem } = current();
  controls.replaceChildren();
  const sizes = make('div', 'aw-sizes');
  for (const [key, value] of Object.entries(dimsOf(problem))) {
    const max = ['T', 'nq', 'nk', 'rows', 'entries'].includes(key) ? MAX_TOKENS : MAX_WIDTH;
    sizes.append(integerControl(make, SIZE_LABELS[key], value, { min: 1, max }, (n, report) => {
      const now = current().problem;
      act.edit(resized(now, { ...dimsOf(now), [key]: n }), { rebuildEditors: true, report });
    }));
  }
  controls.append(sizes);
  const options = make('div', 'aw-options');
  if (SDPA_MODES.includes(problem.mode)) options.append(...maskControls(make, editorState));
  options.append(...scaleControls(make, editorState));
  if (canShowBackward(problem)) options.append(backwardControl(make, editorState));
  controls.append(options);
  controls.append(actionControls(make, editorState));
}

/** One text field per token label; the keys get their own row unless the problem is self-attention. */
function fillTokens(make, tokenBox, { current, act }) {
  const { problem } = current();
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
        const now = current().problem;
        const next = { ...now, [axis]: [...now[axis]] };
        next[axis][index] = input.value;
        if (now.self) next.kTokens = next.qTokens;
        act.relabel(next);
      });
      row.append(input);
    });
    tokenBox.append(row);
  };
  labelRow('qTokens', problem.qTokens, problem.self ? '' : (problem.mode === 'softmax' ? 'Rows' : 'Queries'));
  if (!problem.self) labelRow('kTokens', problem.kTokens, problem.mode === 'softmax' ? 'Entries' : 'Keys');
}

/** What a control in box is, so that it can be found again once rebuilt
 * (its kind, label and, for a radio, its value); null for one outside box. */
function focusKey(box, control = box.ownerDocument.activeElement) {
  if (!control || control === box || !box.contains(control)) return null;
  const label = control.getAttribute('aria-label') ?? control.labels?.[0]?.textContent ?? control.textContent;
  return [control.tagName, control.type, control.type === 'radio' ? control.value : '', label].join('|');
}

export function createEditor(panel, { widgetId, current, act }) {
  const make = builder(panel.editors.ownerDocument);
  let seed = 1;
  let matrixEditors = {};
  const editorState = { widgetId, current, act, seed: () => seed, setSeed: (n) => { seed = n; } };

  function fillMatrices(problem) {
    const { editors } = panel;
    editors.replaceChildren();
    matrixEditors = {};
    const titles = { x: problem.mode === 'softmax' ? 'x' : 'X', wq: 'W_Q', wk: 'W_K', wv: 'W_V', q: 'Q', k: 'K', v: 'V', scores: 'Scores', weights: 'Weights' };
    for (const name of Object.keys(shapesOf(problem.mode, dimsOf(problem), problem.fields))) {
      const editor = createMatrixEditor(editors, {
        title: titles[name], name: titles[name],
        // The engine's refusal (an overflow, say) shows at the cell typed in,
        // where the learner is looking, not at the top of the panel.
        onChange: (values) => {
          const now = current().problem;
          let refused = '';
          act.edit({ ...now, fields: { ...now.fields, [name]: values } }, { report: (text) => { refused = text; } });
          return refused;
        },
      });
      const [rowLabels, colLabels] = editorLabels(problem, name);
      editor.setValues(problem.fields[name], rowLabels, colLabels);
      matrixEditors[name] = editor;
    }
  }

  return {
    /** Builds every control for the problem on screen; the control that had
     * the focus (the size field, the button, the radio just used) has it
     * again in its new self. */
    build() {
      const focused = focusKey(panel.box);
      fillModes(make, panel.modeBox, editorState);
      fillControls(make, panel.controls, editorState);
      fillTokens(make, panel.tokenBox, editorState);
      fillMatrices(current().problem);
      if (focused) [...panel.box.querySelectorAll('input, select, button')]
        .find((control) => focusKey(panel.box, control) === focused)?.focus({ preventScroll: true });
    },
    /** An input matrix changed elsewhere (in the figure): its editor follows. */
    showValues(field, values) {
      matrixEditors[field]?.setValues(values, ...editorLabels(current().problem, field));
    },
    /** The token labels changed: every matrix editor's labels follow, the editors (and the focus) stay. */
    showLabels() {
      const { problem } = current();
      for (const [name, editor] of Object.entries(matrixEditors)) editor.setLabels(...editorLabels(problem, name));
    },
    showStatus(edited) {
      panel.status.textContent = edited
        ? 'Edited: every value below comes from your inputs.'
        : 'These are the example\u2019s own numbers. Change any of them; the walkthrough stays on its step.';
    },
    /** What went wrong with the last edit ('' clears it), in the editor where it was made. */
    report(text) {
      panel.error.textContent = text;
    },
  };
}
