// Errata: the numbers a tutorial printed, checked against the engine's.
// A printed value p with D decimals is an erratum when
// |p - exact| > 0.5·10^-D + 1e-12 (the rule of tests/vectors/README.md).
// Each is attached to the first step that computes its cell.
//
// Printed values come as in tests/vectors: under the result's name
// (`weights`), for a multi-head result under `heads[0]`, and for one row
// under `<name>_row<i>` (`output_row2`, `terms_row0`). Keys for numbers the
// walkthrough computes differently (exp of unshifted scores, √d_k, percents)
// are left alone.

import { formatNumber } from '../ui/format.js';

const ROW_KEY = /^(scores|scaled|weights|output|terms)_row(\d+)$/;
const FIELDS = new Set(['q', 'k', 'v', 'scores', 'scaled', 'weights', 'output', 'exp', 'max', 'sum', 'terms']);

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
      put(row[1], sparse, sparseDecimals);
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

function exactAt(model, field, path) {
  const [i, j, c] = path;
  if (field === 'max' || field === 'sum') return model.softmax?.[field]?.[i];
  if (field === 'terms') return model.mats.v ? model.terms(i)?.[j]?.[c] : undefined;
  return model.mats[field]?.values[i]?.[j];
}

/** Every erratum of the preset, in step order: { stepIndex, field, path, printed, exact, decimals }. */
export function errataOf(preset, model, steps, { vector = false } = {}) {
  const printed = normalisePrinted(preset, { vector });
  const seen = new Set();
  const list = [];
  steps.forEach((step, stepIndex) => {
    for (const { field, cells } of step.produces) {
      const table = printed[field];
      if (!table) continue;
      for (const path of cells) {
        const key = `${field}:${path.join(',')}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const value = at(table.values, path);
        const exact = exactAt(model, field, path);
        if (typeof value !== 'number' || typeof exact !== 'number') continue;
        const decimals = decimalsAt(table.decimals, path, value);
        if (!Number.isFinite(exact) || Math.abs(value - exact) > 0.5 * 10 ** -decimals + 1e-12) {
          list.push({ stepIndex, field, path, printed: value, exact, decimals });
        }
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
  const mat = model.mats[field];
  return mat ? `${field}[${mat.rowLabels[i]}][${mat.colLabels[j]}]` : `${field}[${path.join('][')}]`;
}

/** The sentence for one erratum, e.g. "the tutorial prints 0.38; the exact value is 0.401." */
export function erratumText(item) {
  return `the tutorial prints ${item.printed.toFixed(item.decimals)}; the exact value is ${formatNumber(item.exact)}.`;
}
