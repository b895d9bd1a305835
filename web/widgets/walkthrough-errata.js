// Errata: the numbers a tutorial printed, checked against the engine's.
// A printed value p with D decimals is an erratum when
// |p - exact| > 0.5·10^-D + 1e-12 (the rule of tests/vectors/README.md).
// Each is attached to the first step that computes its cell.
//
// Each erratum has one cause, decided here and nowhere else (groupErrata):
//   a rounding difference  p is the exact value rounded to D decimals give
//                          or take one unit in the last digit
//                          (|p - exact| <= 1.5·10^-D), or what the
//                          tutorial's own rounded earlier numbers give
//                          through the same equation;
//   a misprint             any other, and every value that follows from
//                          one through the tutorial's own arithmetic (even
//                          when it lands within a unit of the exact value).
// The page shows misprints where they happen and rounding differences as
// one quiet line per step.
//
// Printed values come as in tests/vectors: under the result's name
// (`weights`), for a multi-head result under `heads[0]`, and for one row
// under `<name>_row<i>` (`output_row2`, `terms_row0`). Three kinds of
// printed numbers the walkthrough does not show are checked on the softmax
// step of their row: the weights as percentages (`weightsPercent`) and the
// tutorial's own softmax arithmetic, exp of the scaled scores without
// subtracting the row's largest (`exp_row<i>`) and their sum (`sum_row<i>`).
// Other keys (√d_k, notes) are left alone.

import { evaluateWith } from '../ui/equation.js';
import { formatNumber } from '../ui/format.js';

const ROW_KEY = /^(scores|scaled|weights|output|terms|exp|sum)_row(\d+)$/;
const FIELDS = new Set(['q', 'k', 'v', 'scores', 'scaled', 'weights', 'output', 'exp', 'max', 'sum', 'terms', 'weightsPercent']);
// A printed row of exps or their sum is the tutorial's unshifted softmax.
const ROW_FIELDS = { exp: 'expUnshifted', sum: 'sumUnshifted' };
// Printed numbers checked with the cells of a field the steps produce:
// for weight [i, j], the percent at [i, j], the unshifted exp at [i, j] and the row's sum at [i].
const CHECKED_WITH = {
  weights: [['weightsPercent', (path) => path], ['expUnshifted', (path) => path], ['sumUnshifted', ([i]) => [i]]],
};

function decimalsTable(preset, key) {
  const d = preset.printedDecimals;
  if (typeof d === 'number' || Array.isArray(d)) return d;
  return d?.[key];
}

/**
 * The printed values and their decimals as { field: { values, decimals } },
 * indexed like the walkthrough's cells: [i, j] for matrices, [i] for the
 * per-row max and sum, [i, j, c] for the terms w_ij·v_j of output row i.
 */
export function normalisePrinted(preset, { vector }) {
  const printed = preset.printed;
  if (!printed || typeof printed !== 'object') return {};
  const out = {};
  const wrap = (value) => (vector ? [value] : value);
  const put = (field, values, decimals) => { out[field] = { values, decimals }; };
  for (const [key, value] of Object.entries(printed)) {
    if (FIELDS.has(key)) put(key, wrap(value), wrapDecimals(decimalsTable(preset, key), vector));
    const row = ROW_KEY.exec(key);
    if (row) {
      const sparse = [];
      sparse[Number(row[2])] = value;
      const decimals = decimalsTable(preset, key);
      const sparseDecimals = Array.isArray(decimals) ? Object.assign([], { [row[2]]: decimals }) : decimals;
      put(ROW_FIELDS[row[1]] ?? row[1], sparse, sparseDecimals);
    }
  }
  const head = Array.isArray(printed.heads) ? printed.heads[0] : null;
  if (head && typeof head === 'object') {
    for (const [key, value] of Object.entries(head)) {
      if (FIELDS.has(key)) put(key, value, decimalsTable(preset, `heads.0.${key}`) ?? decimalsTable(preset, key));
    }
  }
  return out;
}

function wrapDecimals(decimals, vector) {
  return vector && Array.isArray(decimals) ? [decimals] : decimals;
}

function at(nested, path) {
  let node = nested;
  for (const index of path) {
    if (!Array.isArray(node)) return node;
    node = node[index];
  }
  return node;
}

function decimalsAt(table, path, printed) {
  const found = typeof table === 'number' ? table : at(table, path);
  if (typeof found === 'number') return found;
  const text = String(printed);
  return text.includes('.') ? text.split('.')[1].length : 0;
}

/** value × factor, or undefined when either is missing. */
function product(value, factor) {
  return typeof value === 'number' && typeof factor === 'number' ? value * factor : undefined;
}

// The engine's value of a cell: a matrix on the page, or a number its steps
// name (a row's max, exp and sum, a product w_ij·v_jc of an output row).
function valueAt(model, field, path) {
  return model.mats[field]?.values[path[0]]?.[path[1]] ?? model.values.get([field, ...path].join(','));
}

function exactAt(model, field, path) {
  const [i, j] = path;
  if (field === 'weightsPercent') return product(valueAt(model, 'weights', [i, j]), 100);
  // e^(x - m) · e^m and Σ e^(x - m) · e^m: the engine's shifted softmax, unshifted.
  const max = valueAt(model, 'max', [i]);
  const rowFactor = typeof max === 'number' ? Math.exp(max) : undefined;
  if (field === 'expUnshifted') return product(valueAt(model, 'exp', [i, j]), rowFactor);
  if (field === 'sumUnshifted') return product(valueAt(model, 'sum', [i]), rowFactor);
  return valueAt(model, field, path);
}

/** Every erratum of the preset, in step order: { stepIndex, field, path, printed, exact, decimals }. */
export function errataOf(preset, model, steps, { vector = false } = {}) {
  const printed = normalisePrinted(preset, { vector });
  const seen = new Set();
  const list = [];
  steps.forEach((step, stepIndex) => {
    const checks = step.produces.flatMap(({ field, cells }) => [
      ...cells.map((path) => [field, path]),
      ...(CHECKED_WITH[field] ?? []).flatMap(([derived, pathOf]) => cells.map((path) => [derived, pathOf(path)])),
    ]);
    for (const [field, path] of checks) {
      const table = printed[field];
      const key = `${field}:${path.join(',')}`;
      if (!table || seen.has(key)) continue;
      seen.add(key);
      const value = at(table.values, path);
      const exact = exactAt(model, field, path);
      if (typeof value !== 'number' || typeof exact !== 'number') continue;
      const decimals = decimalsAt(table.decimals, path, value);
      if (!Number.isFinite(exact) || Math.abs(value - exact) > 0.5 * 10 ** -decimals + 1e-12) {
        list.push({ stepIndex, field, path, printed: value, exact, decimals });
      }
    }
  });
  return list;
}

/** "weights[cat][sat]", "max of row 1", "term sat of output[cat], entry 2". */
export function erratumName(model, { field, path }) {
  const [i, j, c] = path;
  const rows = model.qTokens;
  const cols = model.kTokens;
  if (field === 'max' || field === 'sum') return `${field} of ${rows[i]}`;
  if (field === 'terms') return `weight \u00d7 value ${cols[j]} in output[${rows[i]}], entry ${c + 1}`;
  if (field === 'weightsPercent') return `weights[${rows[i]}][${cols[j]}] in percent`;
  if (field === 'expUnshifted') return `e^scaled[${rows[i]}][${cols[j]}] (the tutorial's softmax, without subtracting the row's largest)`;
  if (field === 'sumUnshifted') return `sum of e^scaled over the row of ${rows[i]} (without subtracting the row's largest)`;
  const mat = model.mats[field];
  return mat ? `${field}[${mat.rowLabels[i]}][${mat.colLabels[j]}]` : `${field}[${path.join('][')}]`;
}

/** The sentence for one erratum, e.g. "the tutorial prints 0.38; the exact value is 0.401." */
export function erratumText(item) {
  return `the tutorial prints ${item.printed.toFixed(item.decimals)}; the exact value is ${formatNumber(item.exact)}.`;
}

// ---- Causes ----

const slack = (decimals) => 0.5 * 10 ** -decimals + 1e-12;
// The exact value rounded to the printed decimals, give or take one unit of
// the last digit: a rounding difference.
const isRounding = (item) => Math.abs(item.printed - item.exact) <= 1.5 * 10 ** -item.decimals + 1e-12;
// Printed numbers that restate another printed value (the weights in percent,
// the tutorial's softmax before the shift): they carry that value's cause.
const RESTATES = { weightsPercent: 'weights', expUnshifted: 'weights', sumUnshifted: 'weights' };

/**
 * The tutorial's own arithmetic: each cell as the tutorial printed it, else
 * as the engine's equation for it gives it from the tutorial's numbers.
 * Returns "field,i,j" -> the value the equation gives from those numbers.
 */
function tutorialArithmetic(model, printedAt) {
  const world = new Map();
  const recomputed = new Map();
  const key = (ref) => model.refOf(ref).join(',');
  const valueOf = (leaf) => (leaf.ref && world.has(key(leaf.ref)) ? world.get(key(leaf.ref)) : leaf.v);
  const settle = (ref, value) => {
    if (!ref || typeof value !== 'number') return;
    const [field, ...path] = model.refOf(ref);
    recomputed.set(key(ref), value);
    world.set(key(ref), printedAt(field, path) ?? value);
  };
  const settleAll = (node, value) => {
    if (node.ref) settle(node.ref, value);
    else if (node.op === 'vec' && Array.isArray(value)) node.args.forEach((arg, c) => settle(arg.ref, value[c]));
  };
  for (const step of model.list.steps) {
    for (const { chain } of step.equations ?? []) {
      if (chain.length < 2) continue; // a value stated, not computed
      const [first] = chain;
      // A sum of named products (an output row's terms w_ij·v_j) settles them too.
      const middle = chain.length > 2 ? chain[1] : null;
      if (middle && first.op === 'add' && middle.op === 'add' && first.args.length === middle.args.length) {
        first.args.forEach((arg, k) => settleAll(middle.args[k], evaluateWith(arg, valueOf)));
      }
      settleAll(chain[chain.length - 1], evaluateWith(first, valueOf));
    }
  }
  return recomputed;
}

/** The cells a cell was computed from, at every distance. */
function ancestorsOf(model, cellKey, memo = new Map()) {
  if (memo.has(cellKey)) return memo.get(cellKey);
  const found = new Set();
  memo.set(cellKey, found);
  const equation = model.producers.get(cellKey);
  const visit = (node) => {
    if (node.ref) {
      const key = model.refOf(node.ref).join(',');
      if (key !== cellKey && !found.has(key)) {
        found.add(key);
        for (const further of ancestorsOf(model, key, memo)) found.add(further);
      }
    }
    for (const arg of node.args ?? []) visit(arg);
  };
  if (equation && equation.chain.length > 1) visit(equation.chain[0]);
  return found;
}

/**
 * The errata grouped by cause, misprints first in step order, then the
 * rounding differences: [{ cause: 'misprint' | 'rounding', root?, items,
 * recomputed }]. An erratum is carried when the tutorial's own earlier
 * numbers, put through the engine's equation for it, give what it printed:
 * it belongs to the misprint it comes from.
 */
export function groupErrata(preset, model, errata, { vector = false } = {}) {
  const printed = normalisePrinted(preset, { vector });
  const printedAt = (field, path) => {
    const value = printed[field] ? at(printed[field].values, path) : undefined;
    return typeof value === 'number' ? value : undefined;
  };
  const recomputed = tutorialArithmetic(model, printedAt);
  const cellKey = (item) => [item.field, ...item.path].join(',');
  const erring = new Set(errata.map(cellKey));
  const carried = (item) => {
    if (RESTATES[item.field]) return erring.has([RESTATES[item.field], ...item.path.slice(0, 2)].join(','));
    const value = recomputed.get(cellKey(item));
    return typeof value === 'number' && Math.abs(value - item.printed) <= 2 * slack(item.decimals);
  };
  const groups = [];
  const rounding = { cause: 'rounding', items: [] };
  const memo = new Map();
  for (const item of errata) {
    if (!carried(item)) {
      if (isRounding(item)) {
        rounding.items.push(item);
        continue;
      }
      // Misprints of one step and one result (a row of weights) are one slip.
      const same = groups.find((group) => group.roots[0].stepIndex === item.stepIndex && group.roots[0].field === item.field);
      const group = same ?? { cause: 'misprint', roots: [], items: [], recomputed: [] };
      if (!same) groups.push(group);
      group.roots.push(item);
      group.items.push(item);
      group.recomputed.push(recomputed.get(cellKey(item)));
      continue;
    }
    const base = RESTATES[item.field] ? [RESTATES[item.field], ...item.path.slice(0, 2)].join(',') : cellKey(item);
    const ancestors = RESTATES[item.field] ? new Set([base, ...ancestorsOf(model, base, memo)]) : ancestorsOf(model, base, memo);
    const group = groups.find((candidate) => candidate.roots.some((root) => ancestors.has(cellKey(root))));
    (group ?? rounding).items.push(item);
  }
  return rounding.items.length > 0 ? [...groups, rounding] : groups;
}

/** The errata that groupErrata found to be rounding differences. */
export function roundingDifferences(groups) {
  return new Set(groups.filter((group) => group.cause === 'rounding').flatMap((group) => group.items));
}

/** What a rounding difference is, in the words of the page and the exports. */
export const ROUNDING_MEANS = 'each is the exact value rounded to the printed decimals give or take one unit '
  + 'in the last digit, or what the tutorial\u2019s own rounded earlier numbers give: rounding, not a mistake.';

/** "3 last-digit rounding differences" */
export function roundingCount(count) {
  return `${count} last-digit rounding ${count === 1 ? 'difference' : 'differences'}`;
}

/** What a group says about its cause. */
export function causeText(model, group) {
  if (group.cause === 'rounding') return `Rounding: ${ROUNDING_MEANS}`;
  const { roots } = group;
  const list = (values) => values.join(', ');
  const names = list(roots.map((root) => erratumName(model, root)));
  const prints = list(roots.map((root) => root.printed.toFixed(root.decimals)));
  const own = group.recomputed.every((value) => typeof value === 'number')
    ? `its own numbers give ${list(group.recomputed.map((value) => formatNumber(value)))} by the same arithmetic: a slip in the arithmetic or in the copying`
    : `the exact ${roots.length === 1 ? 'value is' : 'values are'} ${list(roots.map((root) => formatNumber(root.exact)))}`;
  const later = group.items.length - roots.length;
  return `${names}: the tutorial prints ${prints}, but ${own}.`
    + (later > 0 ? ` ${later} later ${later === 1 ? 'value follows' : 'values follow'} from ${roots.length === 1 ? 'it' : 'them'}: the tutorial's own arithmetic on the misprint gives what it prints.` : '');
}

// ---- The errata as a section of the Markdown and LaTeX exports ----

const MARKDOWN_SPECIAL = /[\\`*_[\]<>#|]/g;
const LATEX_SPECIAL = { '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', $: '\\$', '&': '\\&', '#': '\\#',
  '%': '\\%', _: '\\_', '~': '\\textasciitilde{}', '^': '\\textasciicircum{}', '\u2212': '\\ensuremath{-}',
  '\u00d7': '\\ensuremath{\\times}', '\u221a': '\\ensuremath{\\surd}', '\u2192': '\\ensuremath{\\to}',
  '\u2019': "'", '\u201c': '``', '\u201d': "''", '\u2026': '\\ldots{}' };
const LATEX_PATTERN = /[\\{}$&#%_~^\u2212\u00d7\u221a\u2192\u2019\u201c\u201d\u2026]/g;

const EXPORT_STYLES = {
  markdown: {
    escape: (text) => text.replace(MARKDOWN_SPECIAL, '\\$&'),
    heading: (text) => `## ${text}\n\n`,
    paragraph: (text) => `${text}\n\n`,
    list: (items) => `${items.map((item) => `- ${item}`).join('\n')}\n\n`,
  },
  latex: {
    escape: (text) => text.replace(LATEX_PATTERN, (c) => LATEX_SPECIAL[c]),
    heading: (text) => `\\subsubsection*{${text}}\n\n`,
    paragraph: (text) => `${text}\n\n`,
    list: (items) => `\\begin{itemize}\n${items.map((item) => `  \\item ${item}`).join('\n')}\n\\end{itemize}\n\n`,
  },
};

/**
 * The errata of a preset as a section to append to the engine's Markdown or
 * LaTeX walkthrough: the same groups and sentences as the page's list, each
 * erratum with the step that computes its value. '' when there are none.
 */
export function errataSection(style, model, steps, groups) {
  const out = EXPORT_STYLES[style];
  const count = groups.reduce((sum, group) => sum + group.items.length, 0);
  if (!out || count === 0) return '';
  const slips = groups.filter((group) => group.cause === 'misprint').length;
  let text = out.heading(out.escape(`Errata: ${count} of the tutorial\u2019s printed ${count === 1 ? 'values differs' : 'values differ'} from the exact ones`));
  text += out.paragraph(out.escape('Each differs from the exact value by more than the rounding of its printed decimals allows. '
    + (slips > 0 ? `They come from ${slips} ${slips === 1 ? 'slip' : 'slips'}, each followed by what the tutorial computed from it; rounding differences last.` : 'All are rounding differences.')));
  for (const group of groups) {
    text += out.paragraph(out.escape(causeText(model, group)));
    text += out.list(group.items.map((item) => out.escape(`${erratumName(model, item)}: ${erratumText(item)} (step ${item.stepIndex + 1}, ${steps[item.stepIndex].title})`)));
  }
  return text;
}
