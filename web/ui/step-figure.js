// The moving part of a step: what the step computes, drawn from the
// engine's equations (the `equations` of a step in attn.steps()) and
// animated. Four shapes of equation have a figure:
//
//   a dot product   a sum of products of two numbers (a score, an entry of
//                   Q = X·W_Q, a backward product): each product appears as
//                   a bar, then the bars line up end to end into the sum;
//   a softmax row   exp(x − max) of each entry, then each divided by the
//                   row's sum: bars of the exponentials, which then shrink
//                   by the same factor into weights stacked to exactly 1;
//   a weighted sum  a sum of weight × vector (an output row): each value
//                   row shrinks by its weight, then the scaled rows stack
//                   into the output row;
//   a scaling       score ÷ √d_k (or × a factor) for each score: each
//                   score's bar shrinks to the scaled score;
//   repeats         a step that gathers the repeats of an operation (the
//                   other dot products, the other rows' softmax: each
//                   repeat's first equation names it, `repeat`): a line
//                   per repeat, all filling in at once in a fast sweep
//                   (its products or weights laid end to end into its
//                   result), each a <details> that opens onto that
//                   repeat's own figure and movement.
//
// Two steps without equations have a picture instead (step.picture, which
// walkthrough-steps.js makes from the engine's results):
//
//   the inputs      each tensor the step names, a row of small bars per
//                   token (its vector);
//   the summary     the whole computation at the end, every number
//                   named and shown (ui/summary-figure.js).
//
// Every length is a value the engine computed; nothing here computes one
// (a bar's length is a value over the largest value it is drawn with).
// The four figures of equations draw on one scale for the whole walkthrough
// (options.scale: the value a track's full length, var(--aw-bar), stands
// for), marked under each figure by a bar of a round unit; a track longer
// than that (products of both signs laid end to end) grows past it.
// Steps of any other shape have no figure. The movement is CSS keyframes
// between two lengths held in custom properties, so under
// prefers-reduced-motion the figure shows its final state at once, and so
// does it when `still` (the same step again after an edit: the new numbers
// at once, not the whole movement replayed on every keystroke).
//
//   createStepFigure(root) -> { element, show(step, { labelOf, scale, still, marked?, markedNote? }) -> moves,
//                               landed(), movementMs(), setRate(speed), settled() }
//   step: { equations, picture? }; scale: the walkthrough's one scale (the
//   largest value its figures draw); labelOf(ref) -> a short name for an
//   operand's cell ("sat", "d3"), from the page's tokens; marked and
//   markedNote: the summary's misprints (ui/summary-figure.js).

import { expressionText } from './equation.js';
import { formatNumber } from './format.js';
import { builder } from './dom.js';
import { drawSummary, largestOf } from './summary-figure.js';

// At most this many bars a figure draws; the equation lines list them all.
export const FIGURE_TERMS = 12;
export const FIGURE_DIMENSIONS = 8;

const isLeaf = (node) => node && !node.op;
const isProduct = (node) => node?.op === 'mul' && node.args.length === 2 && node.args.every(isLeaf);
const resultOf = (equation) => equation.chain[equation.chain.length - 1];
// A cell of tensor `name`, also inside a head ("heads.0.exp").
const isCellOf = (node, name) => Boolean(node.ref) && (node.ref[0] === name || node.ref[0].endsWith(`.${name}`));
// weight = exp / sum: a softmax entry divided by its row's sum.
const isNormalisation = (equation) => {
  const first = equation.chain[0];
  return first.op === 'div' && isCellOf(first.args[0], 'exp') && isCellOf(first.args[1], 'sum');
};
// scaled = score ÷ √d_k, or score × a factor.
const isScaling = (equation) => {
  const first = equation.chain[0];
  return (first.op === 'div' || first.op === 'mul') && isCellOf(first.args[0], 'scores')
    && isCellOf(resultOf(equation), 'scaled');
};
// A weight the engine sets to 0 without dividing: a masked key.
const isMaskedWeight = (equation) => !equation.chain[0].op && isCellOf(resultOf(equation), 'weights');

/** 'repeats' | 'dot' | 'softmax' | 'weighted-sum' | 'scale' | null: which figure the equations draw. */
export function figureKind(equations = []) {
  if (equations.length === 0) return null;
  if (equations[0].repeat !== undefined) return 'repeats';
  const first = equations[0].chain[0];
  if (first.op === 'add' && first.args.length > 1 && first.args.every(isProduct)) return 'dot';
  if (first.op === 'add' && first.args.every((arg) => arg.op === 'mul' && arg.args[1]?.op === 'vec')) return 'weighted-sum';
  if (equations.some(isNormalisation)) return 'softmax';
  if (equations.every(isScaling)) return 'scale';
  return null;
}

// A bar whose length moves from `from` to `to` (fractions of its track),
// starting after `delay` seconds; negative values are drawn leftwards or down.
function bar(make, className, from, to, delay) {
  const node = make('span', `aw-fig-bar ${className}${to < 0 ? ' aw-fig-neg' : ''}`);
  node.style.setProperty('--from', String(Math.abs(from)));
  node.style.setProperty('--to', String(Math.abs(to)));
  node.style.setProperty('--delay', `${delay}s`);
  return node;
}

// A stacked piece's start, moving from `from` to `to` (fractions of its track).
function place(piece, from, to) {
  piece.style.setProperty('--at-from', String(from));
  piece.style.setProperty('--at', String(to));
}

function caption(make, text) {
  return make('figcaption', 'aw-fig-caption', text);
}

// A track drawn over `local` (its bars are fractions of it), as long as
// `local` is on the walkthrough's one scale: every track's full length,
// var(--aw-bar), stands for `scale`, so a value is as many pixels in every
// figure of the walkthrough, whichever way its bar runs.
function sized(track, local, scale) {
  track.classList.add('aw-fig-scaled');
  track.style.setProperty('--extent', String(local / (scale ?? local)));
  return track;
}

// The scale's unit under a figure: a bar as long as a round number (the
// power of ten at or under the scale), and that number.
function unitNote(make, scale) {
  const unit = 10 ** Math.floor(Math.log10(scale));
  const note = make('p', 'aw-fig-unit');
  const length = make('span', 'aw-fig-unit-bar');
  sized(length, unit, scale);
  note.append(length, note.ownerDocument.createTextNode(
      ` = ${formatNumber(unit, unit < 1 ? -Math.floor(Math.log10(unit)) : 0)} (one scale for every bar of this walkthrough)`));
  return note;
}

function drawDot(make, equations, { labelOf, scale }) {
  // One row per product, then the sum; the engine's numbers throughout.
  // Every bar is on one scale, the products laid end to end (positives
  // rightwards from the zero line, negatives leftwards), so a product's bar
  // is as long as its piece of the sum and the sum is as long as its value.
  const equation = equations[0];
  const terms = equation.chain[0].args.slice(0, FIGURE_TERMS);
  const sum = resultOf(equation).v;
  const positive = terms.reduce((s, t) => s + Math.max(t.v, 0), 0);
  const negative = terms.reduce((s, t) => s + Math.max(-t.v, 0), 0);
  const span = Math.max(positive + negative, scale ?? 1e-300);
  const zero = negative / span;
  // A bar of `value` from the zero line, growing rightwards or leftwards.
  const fromZero = (className, value, delay) => {
    const node = bar(make, className, 0, value / span, delay);
    place(node, zero, value >= 0 ? zero : zero + value / span);
    return node;
  };
  const rows = make('div', 'aw-fig-dot');
  rows.style.setProperty('--terms', String(terms.length));
  terms.forEach((term, t) => {
    const [a, b] = term.args;
    const row = make('div', 'aw-fig-row');
    row.style.setProperty('--delay', `${0.25 * t}s`);
    const what = make('span', 'aw-fig-what', `${labelOf(a.ref)} \u00d7 ${labelOf(b.ref)}`);
    const arithmetic = make('span', 'aw-fig-term', expressionText(term));
    const track = sized(make('span', 'aw-fig-track'), span, scale);
    track.append(fromZero(`aw-fig-c${t % 8}`, term.v, 0.25 * t));
    row.dataset.value = String(term.v);
    row.append(what, track, arithmetic);
    rows.append(row);
  });
  // The sum: the same products laid end to end, so what is left is the score.
  const total = make('div', 'aw-fig-row aw-fig-total');
  const start = 0.25 * terms.length + 0.3;
  total.style.setProperty('--delay', `${start}s`);
  const stack = sized(make('span', 'aw-fig-track aw-fig-stack'), span, scale);
  let right = 0;
  let left = 0;
  terms.forEach((term, t) => {
    const piece = bar(make, `aw-fig-piece aw-fig-c${t % 8}`, 0, term.v / span, start + 0.12 * t);
    // Where the piece starts, as a fraction of the track from its left edge.
    const at = term.v >= 0 ? negative + right : negative - left - Math.abs(term.v);
    place(piece, at / span, at / span);
    if (term.v >= 0) right += term.v; else left += -term.v;
    stack.append(piece);
  });
  const end = start + 0.12 * terms.length + 0.2;
  // With products of both signs the pieces overlap at the zero line: the
  // net, the score itself, is drawn as its own bar under them.
  if (negative > 0) stack.append(fromZero('aw-fig-net', sum, end));
  const result = make('span', 'aw-fig-result', `= ${formatNumber(sum, 3)}`);
  result.style.setProperty('--delay', `${end}s`);
  total.dataset.value = String(sum);
  total.append(make('span', 'aw-fig-what', labelOf(resultOf(equation).ref)), stack, result);
  rows.append(total);
  const more = equation.chain[0].args.length - terms.length;
  const parts = [caption(make, `Each product of ${labelOf(terms[0].args[0].ref, 'row')} and ${labelOf(terms[0].args[1].ref, 'row')}, then their sum`
    + (more > 0 ? ` (the first ${terms.length} of ${terms.length + more} products)` : ''))];
  return [...parts, rows];
}

function drawSoftmax(make, equations, { labelOf, scale }) {
  // Each division exp / sum names its exponential, the row's sum and the
  // weight; a masked key's weight is a plain 0.
  const entries = equations.filter((e) => isNormalisation(e) || isMaskedWeight(e)).slice(0, FIGURE_TERMS);
  const divisions = entries.filter(isNormalisation);
  const sum = divisions[0].chain[0].args[1].v;
  // Bars share one scale, the largest exponential (1, for the row's maximum).
  const largest = Math.max(...divisions.map((e) => e.chain[0].args[0].v), 1e-300);
  const box = make('div', 'aw-fig-softmax');
  const bars = make('div', 'aw-fig-columns');
  bars.style.setProperty('--count', String(entries.length));
  // The stacked row is drawn over max(sum, 1): the exponentials laid end to
  // end, which then shrink into the weights, laid end to end to exactly 1.
  const over = Math.max(sum, 1);
  const stack = sized(make('span', 'aw-fig-track aw-fig-stack aw-fig-normalise'), over, scale);
  let at = 0;
  entries.forEach((equation, j) => {
    const weight = resultOf(equation);
    const column = make('div', 'aw-fig-column');
    column.dataset.weight = String(weight.v);
    const track = sized(make('span', 'aw-fig-vtrack'), largest, scale);
    const key = make('span', 'aw-fig-key', labelOf(weight.ref, 'col'));
    if (isMaskedWeight(equation)) {
      column.classList.add('aw-fig-masked');
      column.append(make('span', 'aw-fig-after', formatNumber(weight.v, 3)), make('span', 'aw-fig-before', 'masked'), track, key);
      bars.append(column);
      return;
    }
    const exp = equation.chain[0].args[0];
    column.dataset.exp = String(exp.v);
    track.append(bar(make, `aw-fig-c${j % 8}`, exp.v / largest, weight.v / largest, 1.2));
    column.append(make('span', 'aw-fig-after', formatNumber(weight.v, 3)),
                  make('span', 'aw-fig-before', formatNumber(exp.v, 3)), track, key);
    bars.append(column);
    const piece = bar(make, `aw-fig-piece aw-fig-c${j % 8}`, exp.v / over, weight.v / over, 1.2);
    place(piece, at / over, at / sum / over);
    at += exp.v;
    stack.append(piece);
  });
  box.append(caption(make, 'The exponentials e^(x \u2212 max) (grey numbers), then each divided by their sum: the weights (bold), which add up to 1'), bars);
  const row = make('div', 'aw-fig-row aw-fig-total');
  const result = make('span', 'aw-fig-result', `sum ${formatNumber(sum, 3)} \u2192 1`);
  result.style.setProperty('--delay', '1.4s');
  row.append(make('span', 'aw-fig-what', 'together'), stack, result);
  box.append(row);
  return [box];
}

function drawWeightedSum(make, equations, { labelOf, scale }) {
  const equation = equations[0];
  const terms = equation.chain[0].args.slice(0, FIGURE_TERMS);
  const output = resultOf(equation);
  const dims = Math.min(output.args.length, FIGURE_DIMENSIONS);
  // The scaled rows are the equation's middle link: weight × v_j, entry by entry.
  const scaled = equation.chain.length > 2 ? equation.chain[1].args : null;
  const scaledEntry = (j, d) => (scaled ? scaled[j].args[d].v : terms[j].args[1].args[d].v);
  // One scale for every bar: the longest value row entry or stack (half a track).
  let largest = 1e-300;
  let negative = false;
  for (let d = 0; d < dims; d++) {
    let up = 0;
    let down = 0;
    terms.forEach((term, j) => {
      largest = Math.max(largest, Math.abs(term.args[1].args[d].v));
      negative ||= term.args[1].args[d].v < 0;
      const value = scaledEntry(j, d);
      if (value >= 0) up += value; else down -= value;
    });
    largest = Math.max(largest, up, down);
  }
  // Tracks have a zero line in the middle only when something is negative.
  const trackClass = negative ? 'aw-fig-vtrack aw-fig-signed' : 'aw-fig-vtrack';
  const box = make('div', 'aw-fig-wsum');
  const rows = make('div', 'aw-fig-vectors');
  terms.forEach((term, j) => {
    const [weight, vector] = term.args;
    const row = make('div', 'aw-fig-vector');
    row.append(make('span', 'aw-fig-what', `${formatNumber(weight.v, 3)} \u00d7 ${labelOf(vector.args[0].ref, 'row')}`));
    const cells = make('span', 'aw-fig-cells');
    for (let d = 0; d < dims; d++) {
      const to = scaledEntry(j, d);
      const track = sized(make('span', trackClass), largest, scale);
      track.append(bar(make, `aw-fig-c${j % 8}`, vector.args[d].v / largest, to / largest, 0.3 + 0.15 * j));
      track.dataset.value = String(to);
      cells.append(track);
    }
    row.append(cells);
    rows.append(row);
  });
  // The output row: per entry, the scaled rows stacked (positives up from
  // zero, negatives down), each in its key's colour.
  const sumRow = make('div', 'aw-fig-vector aw-fig-total');
  sumRow.append(make('span', 'aw-fig-what', `= ${labelOf(output.args[0].ref, 'row')}`));
  const cells = make('span', 'aw-fig-cells');
  const start = 0.5 + 0.15 * terms.length;
  for (let d = 0; d < dims; d++) {
    const track = sized(make('span', `${trackClass} aw-fig-stack`), largest, scale);
    track.dataset.value = String(output.args[d].v);
    let up = 0;
    let down = 0;
    terms.forEach((term, j) => {
      const value = scaledEntry(j, d);
      const piece = bar(make, `aw-fig-piece aw-fig-c${j % 8}`, 0, value / largest, start + 0.1 * j);
      const at = (value >= 0 ? up : down) / largest;
      place(piece, at, at);
      if (value >= 0) up += value; else down -= value;
      track.append(piece);
    });
    const value = make('span', 'aw-fig-result', formatNumber(output.args[d].v, 3));
    value.style.setProperty('--delay', `${start + 0.1 * terms.length + 0.2}s`);
    track.append(value);
    cells.append(track);
  }
  sumRow.append(cells);
  rows.append(sumRow);
  const note = output.args.length > dims ? ` (the first ${dims} of ${output.args.length} entries)` : '';
  box.append(caption(make, `Each value row times its weight, then the scaled rows stacked into the output${note}`), rows);
  return [box];
}

function drawScale(make, equations, { labelOf, scale }) {
  // Each score's bar shrinks (or grows) to the scaled score, one scale for all.
  const shown = equations.slice(0, FIGURE_TERMS);
  const largest = Math.max(scale ?? 1e-300,
      ...shown.flatMap((e) => [Math.abs(e.chain[0].args[0].v), Math.abs(resultOf(e).v)]));
  const rows = make('div', 'aw-fig-dot');
  for (const equation of shown) {
    const score = equation.chain[0].args[0];
    const scaled = resultOf(equation);
    const row = make('div', 'aw-fig-row');
    const track = sized(make('span', 'aw-fig-track'), largest, scale);
    track.append(bar(make, 'aw-fig-c0', score.v / largest, scaled.v / largest, 0.3));
    row.append(make('span', 'aw-fig-what', labelOf(scaled.ref)), track,
               make('span', 'aw-fig-term', expressionText(equation.chain[0])));
    rows.append(row);
  }
  const more = equations.length - shown.length;
  return [caption(make, `Each score before and after the scaling${more > 0 ? ` (the first ${shown.length} of ${equations.length})` : ''}`), rows];
}

// A row of numbers as small vertical bars on one scale (a zero line in
// the middle when any is negative); its numbers are its accessible name.
function strip(make, label, values, largest, { delay }) {
  const box = make('span', 'aw-fig-strip');
  box.setAttribute('role', 'img');
  box.setAttribute('aria-label', `${label}: ${values.map((v) => formatNumber(v, 3)).join(', ')}`);
  const signed = values.some((v) => v < 0);
  values.slice(0, FIGURE_DIMENSIONS).forEach((value, c) => {
    const track = make('span', `aw-fig-vtrack aw-fig-mini${signed ? ' aw-fig-signed' : ''}`);
    if (Number.isFinite(value)) track.append(bar(make, 'aw-fig-plain', 0, value / largest, delay + 0.05 * c));
    track.dataset.value = String(value);
    box.append(track);
  });
  if (values.length > FIGURE_DIMENSIONS) box.append(make('span', 'aw-fig-more', '\u2026'));
  return box;
}

function drawInputs(make, picture) {
  // The tensors the computation starts from, a row of bars per token, all on one scale.
  const largest = largestOf(picture.tensors.flatMap((tensor) => tensor.rows.map((row) => row.values)));
  const blocks = make('div', 'aw-fig-inputs');
  picture.tensors.forEach((tensor, k) => {
    const block = make('div', 'aw-fig-block');
    block.style.setProperty('--delay', `${0.3 * k}s`);
    block.dataset.tensor = tensor.name;
    block.append(make('span', 'aw-fig-block-title', tensor.title));
    tensor.rows.slice(0, FIGURE_TERMS).forEach((row, i) => {
      const line = make('span', 'aw-fig-token-row');
      line.append(make('span', 'aw-fig-token', row.label), strip(make, `${tensor.name}[${row.label}]`, row.values, largest, { delay: 0.3 * k + 0.08 * i }));
      block.append(line);
    });
    if (tensor.rows.length > FIGURE_TERMS) block.append(make('span', 'aw-fig-more', `\u2026 ${tensor.rows.length - FIGURE_TERMS} more`));
    blocks.append(block);
  });
  return [caption(make, 'What the computation starts from: each token\u2019s vectors, one bar per entry (their numbers are in the matrices)'), blocks];
}


/** The repeats of a step that gathers them: [{ title, equations }], each from the equation naming it. */
export function repeatsOf(equations) {
  const repeats = [];
  for (const equation of equations) {
    if (equation.repeat !== undefined || repeats.length === 0) repeats.push({ title: equation.repeat ?? '', equations: [] });
    repeats.at(-1).equations.push(equation);
  }
  return repeats;
}

// The pieces a repeat's line lays end to end and the number it ends on: a
// dot product's products into its sum, a softmax row's weights into 1; any
// other repeat's results (an output row's entries, a gradient's row) are a
// strip of small bars.
function repeatLine(make, repeat, kind, { scale, delay }) {
  const { equations } = repeat;
  const stacked = kind === 'dot' || kind === 'softmax';
  if (!stacked) {
    const values = equations.flatMap((equation) => {
      const result = resultOf(equation);
      return result.op === 'vec' ? result.args.map((arg) => arg.v) : [result.v];
    });
    const shown = values.slice(0, FIGURE_DIMENSIONS).map((v) => formatNumber(v, 3)).join(', ');
    return [strip(make, repeat.title, values, scale ?? Math.max(...values.map(Math.abs), 1e-300), { delay }),
      `[${shown}${values.length > FIGURE_DIMENSIONS ? ', \u2026' : ''}]`];
  }
  const pieces = kind === 'dot'
    ? equations[0].chain[0].args.map((term) => term.v)
    : equations.filter((e) => isNormalisation(e) || isMaskedWeight(e)).map((e) => resultOf(e).v);
  const total = kind === 'dot' ? resultOf(equations[0]).v : pieces.reduce((s, v) => s + v, 0);
  const negative = pieces.reduce((s, v) => s + Math.max(-v, 0), 0);
  const span = Math.max(pieces.reduce((s, v) => s + Math.abs(v), 0), scale ?? 1e-300);
  const track = sized(make('span', 'aw-fig-track aw-fig-stack'), span, scale);
  let right = 0;
  let left = 0;
  pieces.slice(0, FIGURE_TERMS).forEach((value, t) => {
    const piece = bar(make, `aw-fig-piece aw-fig-c${t % 8}`, 0, value / span, delay + 0.05 * t);
    const at = value >= 0 ? negative + right : negative - left - Math.abs(value);
    place(piece, at / span, at / span);
    if (value >= 0) right += value; else left -= value;
    track.append(piece);
  });
  const text = kind === 'dot' ? `= ${formatNumber(total, 3)}` : pieces.map((v) => formatNumber(v, 3)).join(' + ');
  return [track, text];
}

function drawRepeats(make, equations, options) {
  // Every repeat at once, a fast sweep down the lines; each that has a
  // figure of its own opens onto it (drawn when first opened: a closed one
  // has nothing to move); the others are their line alone.
  const repeats = repeatsOf(equations);
  const list = make('div', 'aw-fig-repeats');
  let openable = 0;
  repeats.forEach((repeat, k) => {
    const kind = figureKind(repeat.equations.map((e) => ({ ...e, repeat: undefined })));
    const delay = 0.1 * k;
    const opens = Boolean(DRAW[kind]);
    const row = make(opens ? 'summary' : 'div', opens ? 'aw-fig-row' : 'aw-fig-row aw-fig-repeat-line');
    row.style.setProperty('--delay', `${delay}s`);
    const [line, text] = repeatLine(make, repeat, kind, { scale: options.scale, delay });
    const result = make('span', 'aw-fig-result', text);
    result.style.setProperty('--delay', `${delay + 0.5}s`);
    row.append(make('span', 'aw-fig-what', repeat.title), line, result);
    if (!opens) {
      list.append(row);
      return;
    }
    openable += 1;
    const details = make('details', 'aw-fig-repeat');
    const body = make('div', 'aw-fig-repeat-body');
    details.append(row, body);
    details.addEventListener('toggle', () => {
      if (!details.open || body.childElementCount > 0) return;
      body.append(...DRAW[kind](make, repeat.equations, options));
      const rate = options.rate?.() ?? 1;
      if (rate !== 1) for (const animation of body.getAnimations({ subtree: true })) animation.playbackRate = rate;
    });
    list.append(details);
  });
  const count = ['The other one', 'Both'][repeats.length - 1] ?? `All ${repeats.length}`;
  const open = openable > 0 ? '; open one to see it move on its own' : '';
  return [caption(make, `${count} at once, each laid out end to end into its result${open}`), list];
}

// The figures whose bars are on the walkthrough's one scale (options.scale).
const ON_SCALE = new Set(['dot', 'softmax', 'weighted-sum', 'scale', 'repeats']);

const DRAW = { repeats: drawRepeats, dot: drawDot, softmax: drawSoftmax, 'weighted-sum': drawWeightedSum, scale: drawScale, inputs: drawInputs, summary: drawSummary };

export function createStepFigure(root) {
  const doc = root.ownerDocument;
  const element = doc.createElement('figure');
  element.className = 'aw-fig';
  element.hidden = true;
  root.append(element);

  const make = builder(doc);

  let rate = 1;
  const moving = () => element.getAnimations({ subtree: true });
  const still = doc.defaultView.matchMedia?.('(prefers-reduced-motion: reduce)');
  // Bumped on every show: a landing waited for belongs to one figure.
  let shows = 0;
  // How long the movement of the figure shown last lasts at 1× (ms), known once it is listed.
  let movement = 0;
  const settled = () => Promise.allSettled(moving().map((animation) => animation.finished)).then(() => {});

  return {
    element,
    /**
     * Draws the step's figure and starts its movement (none when
     * options.still, or under reduced motion); hides the figure for other
     * steps. Returns whether it moves (data-moving="true" until it lands).
     */
    /** Opens repeat `index` of a step of repeats onto its own figure (one that has one), and brings it into view:
     * the learner asked for it from elsewhere (an erratum's button). */
    openRepeat(index) {
      const repeat = element.querySelectorAll('.aw-fig-repeats > *')[index];
      if (repeat?.localName === 'details') repeat.open = true;
      repeat?.scrollIntoView({ block: 'center', behavior: 'instant' });
    },
    show(step, options) {
      const kind = step.picture?.kind ?? figureKind(step.equations);
      shows += 1;
      element.hidden = kind === null;
      element.dataset.kind = kind ?? '';
      element.classList.toggle('aw-fig-still', Boolean(options.still));
      const drawing = { ...options, rate: () => rate };
      element.replaceChildren(...(kind ? DRAW[kind](make, step.picture ?? step.equations, drawing) : []));
      if (ON_SCALE.has(kind) && options.scale) element.append(unitNote(make, options.scale));
      // Listing the animations makes the browser compute every style at
      // once (after an edit, the whole page's, and again at the frame): only
      // when a still figure has none and the rate is not already theirs.
      if (!options.still && rate !== 1) for (const animation of moving()) animation.playbackRate = rate;
      const moves = kind !== null && !options.still && !still?.matches;
      if (moves) element.dataset.moving = 'true';
      else delete element.dataset.moving;
      return moves;
    },
    /**
     * A promise of whether the figure shown last lands: true once its
     * movement has ended (data-moving then goes, and an 'aw-landed' event
     * fires on the figure), false if another figure took its place first.
     * Listed at the next frame, when the browser computes its style anyway.
     */
    landed() {
      const mine = shows;
      return new Promise((resolve) => doc.defaultView.requestAnimationFrame(resolve))
        .then(() => {
          if (mine !== shows) return null;
          movement = Math.max(0, ...moving().map((animation) => animation.effect.getComputedTiming().endTime));
          return settled();
        })
        .then(() => {
          if (mine !== shows) return false;
          delete element.dataset.moving;
          element.dispatchEvent(new doc.defaultView.Event('aw-landed'));
          return true;
        });
    },
    /** How long the movement of the figure that landed last lasts at 1×, in ms (its delays included). */
    movementMs: () => movement,
    /** Plays the movement at `speed` times its pace, from now on and for every later step. */
    setRate(speed) {
      // The player tells its speed once as it is made, before the first
      // paint: an unchanged rate changes no animation, and listing them
      // would compute the whole page's style there (90 ms of the first
      // heatmap's wait in a chromium profile on a loaded machine).
      if (speed === rate) return;
      rate = speed;
      for (const animation of moving()) animation.playbackRate = rate;
    },
    /** A promise that resolves once the figure on screen has stopped moving (at once when it does not move). */
    settled,
  };
}
