// The described-problem calls: run, format, steps, walkthrough, check and answer.
// Each builds an attn_problem (attention.h, "Problems") from a plain object
// of numbers, strings, booleans and nested arrays, runs it, and hands back
// what the engine writes (JSON parsed into plain objects, or text); every
// check of the input's values and the arithmetic are the engine's.

import { inputError } from './errors.js';
import {
  MAX_INT32, allStrings, checkFlag, checkWhole, checkLabelCount, describe, describeValue, isList, leafValue, onlyKnown,
  printedLeaf, readInput, stringsOf, tensorOf,
} from './describe-input.js';
import {
  ATTN_ERR_OPTION, ATTN_ERR_RANGE, FORMAT_CHOICES, FORMAT_STEP_OUTLINE, FORMATS, KIND_NAMES, REPORT_FORMAT_CHOICES,
} from './engine-constants.js';

function problemError(core, problem, status) {
  return core.engineError(status, core.readCString(core.engine.attn_problem_error(problem)));
}

// For an array that mixes strings with other things: 1 when the field
// takes a list of strings (an empty list set as a probe; the problem is
// discarded after the error anyway), 0 when it takes a tensor; an
// unknown field is reported as such.
function takesStrings(core, problem, name) {
  const status = core.engine.attn_problem_set_strings(problem, name, 0, 0);
  if (status === 0) return true;
  if (core.readCString(core.engine.attn_problem_error(problem)).includes(': unknown field for kind')) {
    throw problemError(core, problem, status);
  }
  return false;
}

const isLabelList = (value) => isList(value) && value.length > 0 && typeof value[0] === 'string';

// budget: { held, maxBytes, longest }: bytes of tensor fields set so far,
// and the longest of their dimensions.
function setField(core, problem, field, value, memory, budget) {
  const { engine } = core;
  const name = memory.string(field, `${JSON.stringify(field)} (a field name)`);
  let status;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw inputError(`${field}: expected a finite number, got ${value}`);
    }
    status = engine.attn_problem_set_number(problem, name, value);
  } else if (typeof value === 'boolean') {
    status = engine.attn_problem_set_bool(problem, name, value ? 1 : 0);
  } else if (typeof value === 'string') {
    status = engine.attn_problem_set_string(problem, name, memory.string(value, field));
  } else if (isLabelList(value)
             && (allStrings(value) || takesStrings(core, problem, name))) {
    // Strings, or a mix for a field of labels (the probe above: the field
    // takes a list of strings), reported at the first entry that is not
    // one. A mix for a tensor field is read as a tensor below, which
    // reports its first entry that is not a number.
    checkLabelCount(field, value.length, budget);
    const strings = stringsOf(field, value).map((text, i) => memory.string(text, `${field}[${i}]`));
    status = engine.attn_problem_set_strings(problem, name, strings.length, memory.pointers(strings));
  } else if (isList(value)) {
    const { dims, data } = tensorOf(field, value, budget);
    budget.held += 8 * data.length;
    budget.longest = Math.max(budget.longest, ...dims);
    status = engine.attn_problem_set_tensor(problem, name, dims.length, memory.ints(dims, `${field} (its shape)`),
                                            memory.doubles(data));
  } else {
    throw inputError(`${field}: expected a number, a boolean, a string or an array, got ${describe(value)}`);
  }
  if (status !== 0) throw problemError(core, problem, status);
}

// The problem's kind, checked before the engine is asked for one.
function kindOf(input) {
  if (input === null || typeof input !== 'object' || isList(input)) {
    throw inputError(`expected a problem object, got ${describe(input)}`);
  }
  const kind = readInput('kind', () => input.kind);
  if (kind === undefined) throw inputError(`kind: missing; expected one of ${KIND_NAMES}`);
  if (typeof kind !== 'string') {
    throw inputError(`kind: expected one of ${KIND_NAMES}, got ${describe(kind)}`);
  }
  return kind;
}

// Builds a problem from `input`, runs it and returns what `use(problem,
// memory)` makes of it; `document` ({ title, headingLevel }) places a
// walkthrough in a document.
function withRunProblem(core, input, document, use) {
  const kind = kindOf(input);
  if (kind.includes('\0')) {
    throw core.engineError(ATTN_ERR_OPTION, `kind: unknown kind ${JSON.stringify(kind)} (it holds a NUL character); expected one of ${KIND_NAMES}`);
  }
  const { engine } = core;
  return core.withMemory((memory) => {
    let problem = 0;
    try {
      const slot = memory.bytes(4);
      const created = engine.attn_problem_create(slot, memory.string(kind, 'kind'), 0);
      problem = core.readU32(slot);
      if (created === 0) engine.attn_problem_set_max_bytes(problem, core.maxBytes);
      if (created === ATTN_ERR_OPTION) {
        throw core.engineError(created, `kind: unknown kind "${kind}"; expected one of ${KIND_NAMES}`);
      }
      if (created !== 0) throw core.engineError(created, `kind: ${core.statusText(created)}`);
      const budget = { held: 0, maxBytes: core.maxBytes, longest: 0 };
      // Lists of labels go last, so that their count is weighed against the
      // tensors' sizes before a single label is encoded.
      const later = [];
      for (const field of Object.keys(input)) {
        if (field === 'kind') continue;
        // Reading a field (and its entries) can run the caller's getters.
        readInput(field, () => {
          const value = input[field];
          if (isLabelList(value)) later.push([field, value]);
          else if (value !== undefined) setField(core, problem, field, value, memory, budget);
        });
      }
      for (const [field, value] of later) readInput(field, () => setField(core, problem, field, value, memory, budget));
      setDocument(core, problem, document, memory);
      const ran = engine.attn_problem_run(problem);
      if (ran !== 0) throw problemError(core, problem, ran);
      return use(problem, memory);
    } finally {
      if (problem !== 0) engine.attn_problem_destroy(problem);
    }
  });
}

// attn_problem_set_document: the walkthrough's title and heading level.
function setDocument(core, problem, { title, headingLevel } = {}, memory) {
  if (title === undefined && headingLevel === undefined) return;
  if (title !== undefined && (typeof title !== 'string' || title.includes('\0'))) {
    throw inputError(`title: expected text without control characters, got ${describe(title)}`);
  }
  // 1 to 4, as build/attn's --heading-level: C's 0 ("the default, 1") is
  // what leaving headingLevel out means here.
  if (headingLevel !== undefined && !(Number.isInteger(headingLevel) && headingLevel >= 1 && headingLevel <= 4)) {
    const got = typeof headingLevel === 'number' ? headingLevel : describe(headingLevel);
    throw core.engineError(ATTN_ERR_RANGE, `heading level: must be 1 to 4, got ${got}`);
  }
  const status = core.engine.attn_problem_set_document(problem, title === undefined ? 0 : memory.string(title, 'title'),
                                                       headingLevel ?? 0);
  if (status !== 0) throw problemError(core, problem, status);
}

// The problem's result in each of `formats` (attn_format numbers).
function runAndFormat(core, input, formats, document = {}) {
  return withRunProblem(core, input, document, (problem, memory) => formats.map(
    (format) => core.formatted(core.engine.attn_problem_format, problem, format, memory,
                               (status) => problemError(core, problem, status))));
}

// JSON has no infinity: the engine writes a masked -Infinity as null, in
// results' arrays and as a step node's value "v".
// A reviver makes JSON.parse several times slower, so only text that has
// a null goes through one.
export const parseResult = (text) => (text.includes('null') ? JSON.parse(text, function (key, value) {
  return value === null && Array.isArray(this) ? -Infinity : value;
}) : JSON.parse(text));
export const parseSteps = (text) => (text.includes('null')
  ? JSON.parse(text, (key, value) => (key === 'v' && value === null ? -Infinity : value))
  : JSON.parse(text));

// { results: [name, ...] }: only those results (attn_problem_result's
// names: "weights", "gradScaled", "heads.1.scores"), read from the engine's
// memory; a run whose other results are large writes and parses no JSON.
export function run(core, input, options) {
  const names = resultNames(options);
  if (names === undefined) return parseResult(runAndFormat(core, input, [FORMATS.json])[0]);
  return withRunProblem(core, input, {}, (problem, memory) => Object.fromEntries(names.map((name) => [
    name, core.result(problem, name, memory, (status) => problemError(core, problem, status))])));
}

function resultNames(options) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object' || isList(options)) {
    throw inputError(`run: options must be an object { results }, got ${describe(options)}`);
  }
  const { results, ...others } = readInput('run: options', () => ({ ...options }));
  const unknown = Object.keys(others)[0];
  if (unknown !== undefined) throw inputError(`run: unknown option ${JSON.stringify(unknown)}; expected results`);
  if (results === undefined) return undefined;
  if (!isList(results) || !allStrings(results)) {
    throw inputError(`run: results must be a list of result names ("weights", "heads.0.scores"), got ${describe(results)}`);
  }
  const bad = results.find((name) => name === '' || name.includes('\0'));
  if (bad !== undefined) throw inputError(`run: results: ${JSON.stringify(bad)} is not a result name`);
  return [...results];
}

export function steps(core, input) {
  return parseSteps(runAndFormat(core, input, [FORMATS.steps])[0]);
}

// { equations: false }: each step without its equations (stepEquations
// gives one step's), so an edit writes none that the page does not show.
export function walkthrough(core, input, { equations = true } = {}) {
  checkFlag('walkthrough', 'equations', equations);
  const [result, list] = runAndFormat(core, input, [FORMATS.json, equations ? FORMATS.steps : FORMAT_STEP_OUTLINE]);
  return { result: parseResult(result), steps: parseSteps(list) };
}

// Step `step`'s equations (from 1), the same as in steps(input).
export function stepEquations(core, input, step) {
  // Checked as the number it is: the engine's int would take 2^32 + 1 as 1.
  if (!Number.isInteger(step) || Math.abs(step) > MAX_INT32) {
    throw core.engineError(ATTN_ERR_RANGE, `step: expected a step number from 1, got ${describeValue(step)}`);
  }
  return parseSteps(withRunProblem(core, input, {}, (problem, memory) => core.formatted(
    core.engine.attn_problem_format_equations, problem, step, memory, (status) => problemError(core, problem, status),
    'equations')));
}

// document: { title?, headingLevel? }; undefined or null for neither.
export function format(core, input, style = 'json', document) {
  if (!Object.hasOwn(FORMATS, style)) {
    const got = typeof style === 'string' ? JSON.stringify(style) : describe(style);
    throw core.engineError(ATTN_ERR_OPTION,
                           `format: expected ${FORMAT_CHOICES}, got ${got}`);
  }
  if (document !== undefined && document !== null && (typeof document !== 'object' || isList(document))) {
    throw inputError(`format: document must be an object { title, headingLevel }, got ${describe(document)}`);
  }
  const placed = document === undefined || document === null ? {}
    : onlyKnown('format: document', readInput('format: document', () => ({ ...document })), DOCUMENT_OPTIONS);
  return runAndFormat(core, input, [FORMATS[style]], placed)[0];
}

const DOCUMENT_OPTIONS = new Set(['title', 'headingLevel']);
const CHECK_OPTIONS = new Set(['decimals', 'format']);

// ---- Checking printed numbers (attn_check_*) ----

// printed: tables by key ({ weights: [[...]], output_row2: [...], heads:
// [{ scores }] }; null for a masked -Infinity; strings, such as notes,
// skipped), as [key, plain name, table] (a head's table is keyed
// heads.h.name).
function printedTables(printed) {
  const tables = [];
  for (const [key, value] of Object.entries(printed)) {
    if (key === 'heads' && isList(value)) {
      Array.from(value).forEach((head, h) => {
        if (head === null || typeof head !== 'object' || isList(head)) {
          throw inputError(`printed.heads[${h}]: expected an object of that head's tables, got ${describe(head)}`);
        }
        for (const [name, table] of Object.entries(head)) tables.push([`heads.${h}.${name}`, name, table]);
      });
    } else {
      tables.push([key, key, value]);
    }
  }
  return tables;
}

// The printed numbers against the exact ones, with their decimals:
// options.decimals is a number, or { key: a number or nested arrays shaped
// like the numbers }; otherwise each number's shortest form says.
export function check(core, input, printed, options = {}) {
  if (options === null || typeof options !== 'object' || isList(options)) {
    throw inputError(`check: options must be an object { decimals, format }, got ${describe(options)}`);
  }
  const { decimals, format: style = 'json' } = onlyKnown('check', readInput('check: options', () => ({ ...options })),
                                                          CHECK_OPTIONS);
  if (!Object.hasOwn(FORMATS, style) || style === 'steps') {
    const got = typeof style === 'string' ? JSON.stringify(style) : describe(style);
    throw core.engineError(ATTN_ERR_OPTION, `check: format must be ${REPORT_FORMAT_CHOICES}, got ${got}`);
  }
  if (printed === null || typeof printed !== 'object' || isList(printed)) {
    throw inputError(`printed: expected an object of printed tables by result name, got ${describe(printed)}`);
  }
  if (decimals !== undefined && typeof decimals !== 'number'
      && (decimals === null || typeof decimals !== 'object' || isList(decimals))) {
    throw inputError(`printedDecimals: expected a number or an object by printed key, got ${describe(decimals)}`);
  }
  const tables = printedTables(printed);
  if (typeof decimals === 'object') {
    // A misspelt key there would leave its table's decimals guessed.
    const names = new Set([...Object.keys(printed), ...tables.flatMap(([key, plain]) => [key, plain])]);
    const stray = Object.keys(decimals).find((name) => !names.has(name));
    if (stray !== undefined) throw inputError(`printedDecimals.${stray}: no printed table is named ${JSON.stringify(stray)}`);
  }
  const { engine } = core;
  return withRunProblem(core, input, {}, (problem, memory) => {
    const slot = memory.bytes(4);
    const created = engine.attn_check_create(slot, problem);
    if (created !== 0) throw core.engineError(created);
    const made = core.readU32(slot);
    const fail = (status) => core.engineError(status, core.readCString(engine.attn_check_error(made)));
    try {
      for (const [key, plain, value] of tables) {
        if (value === undefined) continue;
        if (typeof value === 'string') { // a note, unless the key names a result
          const noted = engine.attn_check_set_note(made, memory.string(key, `printed key ${JSON.stringify(key)}`));
          if (noted !== 0) throw fail(noted);
          continue;
        }
        const path = `printed.${key}`;
        const { dims, data } = isList(value) ? tensorOf(path, value, { held: 0, maxBytes: core.maxBytes }, printedLeaf)
          : { dims: [], data: [printedLeaf(value, path)] };
        const places = decimalsOf(core, key, plain, decimals, data.length);
        const status = engine.attn_check_set_printed(made, memory.string(key, `printed key ${JSON.stringify(key)}`), dims.length,
                                                     memory.ints(dims, `${path} (its shape)`), memory.doubles(data),
                                                     places ? memory.ints(places, `printedDecimals.${key}`) : 0);
        if (status !== 0) throw fail(status);
      }
      const ran = engine.attn_check_run(made, 0);
      if (ran !== 0) throw fail(ran);
      const text = core.formatted(engine.attn_check_format, made, FORMATS[style], memory, fail, 'check');
      return style === 'json' ? parseReport(text) : text;
    } finally {
      engine.attn_check_destroy(made);
    }
  });
}

const ANSWER_FIELDS = new Set(['result', 'row', 'col', 'typed']);

// A learner's answer for one cell, graded by the engine (attn_check_answer):
// { result, row, col, typed } -> { right, cause, verdict, hint, rounded, ... }.
export function answer(core, input, cell) {
  if (cell === null || typeof cell !== 'object' || isList(cell)) {
    throw inputError(`answer: expected { result, row, col, typed }, got ${describe(cell)}`);
  }
  const { result, row, col, typed } = onlyKnown('answer', readInput('answer', () => ({ ...cell })), ANSWER_FIELDS,
                                                'fields');
  for (const [name, value] of [['result', result], ['typed', typed]]) {
    if (typeof value !== 'string') throw inputError(`answer: ${name} must be a string, got ${describe(value)}`);
  }
  checkWhole('answer', 'row', row, 0, MAX_INT32);
  checkWhole('answer', 'col', col, 0, MAX_INT32);
  const { engine } = core;
  return withRunProblem(core, input, {}, (problem, memory) => {
    const slot = memory.bytes(4);
    const created = engine.attn_check_create(slot, problem);
    if (created !== 0) throw core.engineError(created);
    const made = core.readU32(slot);
    const fail = (status) => core.engineError(status, core.readCString(engine.attn_check_error(made)));
    try {
      const name = memory.string(result, 'answer.result');
      const text = memory.string(typed, 'answer.typed');
      const grade = (check, _format, buffer, capacity, length) => engine.attn_check_answer(check, name, row, col, text,
                                                                                            buffer, capacity, length);
      return JSON.parse(core.formatted(grade, made, 0, memory, fail, 'answer'));
    } finally {
      engine.attn_check_destroy(made);
    }
  });
}

// The decimals options.decimals gives a printed key (a head's table also
// under its plain name), one per number; null when none are given.
function decimalsOf(core, key, plain, decimals, count) {
  // Own keys only: a printed table named "constructor" or "toString" must not
  // find Object.prototype's.
  const own = (name) => (decimals != null && Object.hasOwn(decimals, name) ? decimals[name] : undefined);
  const given = typeof decimals === 'number' ? decimals : own(key) ?? own(plain);
  if (given === undefined) return null;
  const path = `printedDecimals.${key}`;
  const values = isList(given) ? tensorOf(path, given, { held: 0, maxBytes: core.maxBytes }).data
    : [leafValue(given, path)];
  if (values.length !== 1 && values.length !== count) {
    throw inputError(`${path}: expected one number or ${count} (one per printed number), got ${values.length}`);
  }
  return Array.from({ length: count }, (_, i) => {
    const d = values[values.length === 1 ? 0 : i];
    if (!Number.isInteger(d) || d < 0 || d > 17) {
      throw inputError(`${path}: expected a whole number of decimals from 0 to 17, got ${d}`);
    }
    return d;
  });
}

// A report's printed and exact values: null is a masked -Infinity.
export const parseReport = (text) => JSON.parse(text, (key, value) => (
  (key === 'printed' || key === 'exact') && value === null ? -Infinity : value));
