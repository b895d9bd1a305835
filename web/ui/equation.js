// The renderer of the engine's equations (attn.steps(): a step's
// `equations`, each { label, chain: [node, ...] }), as DOM for the page and
// as one line of text for hover details and labels. A node is a leaf
// { v, ref? } or { op, v?, args }; the engine computed every value, so this
// module only lays them out: the same operators, precedence, parentheses
// and elision of long sums as the engine's own text renderer
// (src/walkthrough/render_doc.c), with three decimals on screen.

import { formatInput, formatNumber, numberElement } from './format.js';

const SYMBOLS = { add: ' + ', sub: ' \u2212 ', mul: ' \u00d7 ', div: ' \u00f7 ' };
const CALLS = { exp: 'exp', max: 'max', tanh: 'tanh', phi: '\u03c6' };
const PRECEDENCE = { add: 1, sub: 1, mul: 2, div: 2 };
// Sums of more terms show the first six, an ellipsis and the last two.
const SHOWN_TERMS = 8;
const SHOWN_HEAD = 6;

const precedenceOf = (node) => PRECEDENCE[node.op] ?? 3;

/** The operands shown: all, or a long sum's first and last with null for the ellipsis. */
function shownArgs(node) {
  const args = node.args ?? [];
  if (node.op !== 'add' || args.length <= SHOWN_TERMS) return args;
  return [...args.slice(0, SHOWN_HEAD), null, ...args.slice(-2)];
}

/**
 * Walks a node into a flat list of parts: strings, and leaves as
 * { value, ref, operand } (operand: inside an operation, so a negative
 * number is put in parentheses).
 */
function parts(node, parentPrecedence = 0, right = false, out = []) {
  const precedence = precedenceOf(node);
  const wrap = parentPrecedence > precedence || (right && parentPrecedence === precedence && precedence < 3);
  if (wrap) out.push('(');
  if (!node.op) {
    out.push({ value: node.v, ref: node.ref, operand: parentPrecedence > 0 });
  } else if (SYMBOLS[node.op]) {
    shownArgs(node).forEach((arg, k) => {
      if (k > 0) out.push(SYMBOLS[node.op]);
      if (arg === null) out.push('\u2026');
      else parts(arg, precedence, k > 0, out);
    });
  } else if (node.op === 'sqrt') {
    out.push('\u221a', { value: node.args[0].v, ref: node.args[0].ref, operand: false });
  } else {
    const vector = node.op === 'vec';
    out.push(vector ? '[' : `${CALLS[node.op]}(`);
    node.args.forEach((arg, k) => {
      if (k > 0) out.push(', ');
      parts(arg, 0, false, out);
    });
    out.push(vector ? ']' : ')');
  }
  if (wrap) out.push(')');
  return out;
}

/** All parts of an equation: its chain joined by " = ". */
function equationParts(equation) {
  const out = [];
  equation.chain.forEach((node, c) => {
    if (c > 0) out.push(' = ');
    parts(node, 0, false, out);
  });
  return out;
}

function leafText(part, isInput) {
  const text = isInput(part.ref) ? formatInput(part.value) : formatNumber(part.value);
  return part.operand && part.value < 0 && part.value !== -Infinity ? `(${text})` : text;
}

/** The equation as one line of text, e.g. "S[cat, sat] = 0.3 × 0.6 + … = 0.550". */
export function equationText(equation, { isInput = () => false } = {}) {
  const body = equationParts(equation).map((part) => (typeof part === 'string' ? part : leafText(part, isInput))).join('');
  return `${equation.label} = ${body}`;
}

/** One node of an equation and its value, as text: "0.300 × 0.600 = 0.180". */
export function expressionText(node) {
  return equationParts({ chain: [node, { v: node.v }] }).map((part) => (typeof part === 'string' ? part : leafText(part, () => false))).join('');
}

/**
 * The equation as a line of the page: the label, then each number a span
 * with three decimals (inputs as typed), its full precision on hover and
 * the cell it comes from in data-ref ("q,0,1").
 */
export function equationElement(doc, equation, { isInput = () => false } = {}) {
  const line = doc.createElement('div');
  line.className = 'aw-arith';
  const label = doc.createElement('span');
  label.className = 'aw-eq-label';
  label.textContent = equation.label;
  line.append(label, doc.createTextNode(' = '));
  for (const part of equationParts(equation)) {
    if (typeof part === 'string') {
      line.append(doc.createTextNode(part));
      continue;
    }
    const negativeOperand = part.operand && part.value < 0 && part.value !== -Infinity;
    if (negativeOperand) line.append(doc.createTextNode('('));
    const number = numberElement(doc, part.value, { input: isInput(part.ref) });
    if (part.ref) number.dataset.ref = part.ref.join(',');
    line.append(number);
    if (negativeOperand) line.append(doc.createTextNode(')'));
  }
  return line;
}

const elementwise = (a, b, f) => (Array.isArray(a)
  ? a.map((x, i) => f(x, Array.isArray(b) ? b[i] : b))
  : Array.isArray(b) ? b.map((y) => f(a, y)) : f(a, b));
const OPERATIONS = {
  add: (args) => args.reduce((a, b) => elementwise(a, b, (x, y) => x + y)),
  sub: ([a, b]) => elementwise(a, b, (x, y) => x - y),
  mul: ([a, b]) => elementwise(a, b, (x, y) => x * y),
  div: ([a, b]) => elementwise(a, b, (x, y) => x / y),
  exp: ([a]) => Math.exp(a),
  max: (args) => Math.max(...args),
  sqrt: ([a]) => Math.sqrt(a),
  tanh: ([a]) => Math.tanh(a),
  phi: ([a]) => (a > 0 ? a + 1 : Math.exp(a)),
  vec: (args) => args,
};

/**
 * An expression's value with other numbers in its leaves: leafValue(leaf)
 * gives each leaf's number (its own, or another one for the same cell).
 * For "what if" only (the tutorials' own numbers carried through the
 * engine's equations); every value shown comes from the engine.
 */
export function evaluateWith(node, leafValue) {
  if (!node.op) return leafValue(node);
  return OPERATIONS[node.op](node.args.map((arg) => evaluateWith(arg, leafValue)));
}
