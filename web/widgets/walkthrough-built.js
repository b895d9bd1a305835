// The walkthrough before its engine, or without one: each example as the
// native engine wrote it when the page was built
// (scripts/build-walkthroughs.mjs, web/dist/walkthroughs/<preset>.json), so
// that the first screen shows its figure and numbers before the
// WebAssembly engine arrives, and every example reads step by step where
// WebAssembly is off. Nothing is computed here: each answer is the engine's
// text, parsed as the JS API parses it.
//
//   loadBuilt(ids, folder?) -> Promise<the examples' files> (from web/dist/walkthroughs/,
//     or the folder given: the custom element's, found as its engine is)
//   createBuiltEngine(files, why) -> the engine calls the walkthrough makes
//     (walkthrough, stepEquations, check, format, answer), answered from the build
//     for an example's own input (any other throws a NeedsEngine error
//     saying why), and by the engine itself once arrive(engine) hands it over
//   holdControls(root, why) -> release(): the walkthrough's controls that
//     need the engine (changing the numbers, Check your own numbers, the
//     Markdown and LaTeX exports) disabled, each saying why

import { parseReport, parseResult, parseSteps } from '../lib/api/problems.js';

const BUILT = new URL('../dist/walkthroughs/', import.meta.url);

/** What a control that needs the engine says where WebAssembly is off. */
export const BUILT_OFFLINE = 'This needs the engine, which runs on WebAssembly, and WebAssembly is turned off in this '
  + 'browser.';

/** What a walkthrough alone (an embed, the element) says above it where WebAssembly is off. */
export const BUILT_OFFLINE_WALKTHROUGH = 'WebAssembly is turned off in this browser, so the engine cannot run here: the '
  + 'walkthrough reads step by step with the numbers it computed when the page was built. Changing them needs WebAssembly.';

/** What a control that needs the engine is, before the engine arrives. */
export class NeedsEngine extends Error {
  constructor(message) {
    super(message);
    this.name = 'NeedsEngine';
  }
}

export async function loadBuilt(ids, folder = BUILT) {
  return Promise.all(ids.map(async (id) => {
    const response = await fetch(new URL(`${encodeURIComponent(id)}.json`, folder));
    if (!response.ok) throw new Error(`the build's walkthrough of ${id}: HTTP ${response.status}`);
    return response.json();
  }));
}

export function createBuiltEngine(files, why) {
  const byInput = new Map(files.map((file) => [JSON.stringify(file.input), file]));
  let engine = null;
  const builtFor = (input) => {
    const file = byInput.get(JSON.stringify(input));
    if (!file) throw new NeedsEngine(why);
    return file;
  };
  return {
    // The page asks for the outline only ({ equations: false }), then each step's equations.
    walkthrough(input, options) {
      if (engine) return engine.walkthrough(input, options);
      if (options?.equations !== false) throw new NeedsEngine(why);
      const file = builtFor(input);
      return { result: parseResult(file.result), steps: parseSteps(file.outline) };
    },
    stepEquations(input, step) {
      if (engine) return engine.stepEquations(input, step);
      const { equations } = builtFor(input);
      if (!Number.isInteger(step) || step < 1 || step > equations.length) throw new NeedsEngine(why);
      return parseSteps(equations[step - 1]);
    },
    // The tutorial's printed numbers only; a learner's own need the engine.
    check(input, printed, options = {}) {
      if (engine) return engine.check(input, printed, options);
      const { check } = builtFor(input);
      const asked = JSON.stringify([printed, options.decimals, options.format ?? 'json']);
      if (!check || asked !== JSON.stringify([check.printed, check.decimals, 'json'])) throw new NeedsEngine(why);
      return parseReport(check.report);
    },
    format(input, style, document) {
      if (engine) return engine.format(input, style, document);
      throw new NeedsEngine(why);
    },
    // A learner's answer is graded by the engine only ("Your turn").
    answer(input, cell) {
      if (engine) return engine.answer(input, cell);
      throw new NeedsEngine(why);
    },
    arrive(next) {
      engine = next;
    },
  };
}

// The parts of each control that act (its summary still opens it, to read why).
const HELD = [['.aw-edit', ':scope > :not(summary)'], ['.aw-check', ':scope > :not(summary)'],
  ['.aw-export', ':scope > button']];

export function holdControls(root, why) {
  const notes = [];
  const held = [];
  for (const [control, parts] of HELD) {
    const box = root.querySelector(control);
    if (!box) continue;
    for (const part of box.querySelectorAll(parts)) {
      part.inert = true;
      held.push(part);
    }
    const note = root.ownerDocument.createElement('p');
    note.className = 'aw-needs-engine';
    note.textContent = why;
    const summary = box.querySelector(':scope > summary');
    if (summary) summary.after(note);
    else box.append(note);
    notes.push(note);
  }
  return () => {
    for (const part of held) part.inert = false;
    for (const note of notes) note.remove();
  };
}
