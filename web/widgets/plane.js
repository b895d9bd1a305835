// Touch the mechanism: attention with d_k = 2 and d_v = 2 drawn on two
// planes. The query and the keys are points on the first, the values on the
// second, where the output lands inside the convex hull of the values.
// Drag any point (mouse, touch, pen), or focus it and move it with the arrow
// keys: the scores, the weights (as bars) and the output follow at once. A
// slider divides the scores by a temperature τ before the softmax; √d_k = √2
// is the standard choice.
//
//   mount(element, { engine, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   state: { q: [x, y], k: [[x, y], … 3 to 5 keys], v: [[x, y], … one per key], temperature }
//   onChange(state) after each move the learner makes
//
// Every score, weight and output comes from the engine's scaledDotProduct,
// given the temperature as its scale factor (1/τ; at τ = √2 the engine's own
// 1/√d_k). The page only places the points it is given and draws the hull
// of the values, which is geometry of the inputs, not attention arithmetic.

import { formatInput, formatNumber, fullPrecision } from '../ui/format.js';
import { svgElement } from '../ui/svg.js';
import { attempt, button, choice, scrollBox, sectionRoot, sectionState, slider, tableHead } from './sections-common.js';

const EXTENT = 3; // both planes show [−3, 3] × [−3, 3]
const SIZE = 300; // SVG units
const PAD = 14;
const UNIT = (SIZE - 2 * PAD) / (2 * EXTENT);
const STEP = 0.1; // an arrow key
const BIG_STEP = 0.5; // Shift + arrow key
const KEY_COUNTS = [3, 4, 5];

/** The temperatures the slider offers; √2 = √d_k is the standard one. */
export const TEMPERATURES = [0.1, 0.25, 0.5, 0.75, 1, Math.SQRT2, 2, 3, 5, 10];
const STANDARD = TEMPERATURES.indexOf(Math.SQRT2);

const START_KEYS = [[1.5, 1], [-1, 1.5], [0.5, -1.5], [-2, -0.5], [2, -1.5]];
const START_VALUES = [[2, 2], [-2, 1.5], [0.5, -2], [-2, -1.5], [2.5, -0.5]];
export const START = Object.freeze({ q: [1, 0.5], k: START_KEYS.slice(0, 4), v: START_VALUES.slice(0, 4),
    temperature: Math.SQRT2 });

/** The engine's scale option for a temperature: the scores are multiplied by it. */
export function scaleFor(temperature) {
  return temperature === Math.SQRT2 ? true : 1 / temperature;
}

// A position as state holds it: inside the plane, to two decimals.
const onPlane = (x) => Math.round(Math.min(EXTENT, Math.max(-EXTENT, x)) * 100) / 100 + 0;
const isPoint = (p) => Array.isArray(p) && p.length === 2 && p.every((x) => typeof x === 'number' && Number.isFinite(x));
const pointOr = (p, fallback) => (isPoint(p) ? p.map(onPlane) : [...fallback]);

function nearestTemperature(value) {
  const t = Number(value);
  if (!Number.isFinite(t) || t <= 0) return Math.SQRT2;
  const distance = (temperature) => Math.abs(Math.log(temperature / t));
  return TEMPERATURES.reduce((best, next) => (distance(next) < distance(best) ? next : best));
}

/** The convex hull of points (Andrew's monotone chain), counter-clockwise; for drawing. */
export function convexHull(points) {
  const sorted = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (sorted.length < 3) return sorted;
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (list) => {
    const chain = [];
    for (const p of list) {
      while (chain.length >= 2 && cross(chain[chain.length - 2], chain[chain.length - 1], p) <= 0) chain.pop();
      chain.push(p);
    }
    chain.pop();
    return chain;
  };
  return [...half(sorted), ...half([...sorted].reverse())];
}

const toX = (x) => PAD + (x + EXTENT) * UNIT;
const toY = (y) => PAD + (EXTENT - y) * UNIT;
const coordinates = ([x, y]) => `(${formatNumber(x)}, ${formatNumber(y)})`;
const temperatureText = (t) => (t === Math.SQRT2 ? '\u221a2 \u2248 1.414 (= \u221ad_k)' : formatInput(t));


/** A number shown with three decimals and its full precision on hover, updated in place. */
function setNumber(span, value) {
  span.textContent = formatNumber(value);
  span.title = fullPrecision(value);
  span.dataset.value = fullPrecision(value);
}

function normalise(next) {
  const count = Array.isArray(next.k) ? Math.min(5, Math.max(3, next.k.length)) : START.k.length;
  return {
    q: pointOr(next.q, START.q),
    k: START_KEYS.slice(0, count).map((p, i) => pointOr(next.k?.[i], p)),
    v: START_VALUES.slice(0, count).map((p, i) => pointOr(Array.isArray(next.v) ? next.v[i] : null, p)),
    temperature: nearestTemperature(next.temperature),
  };
}

/** How many keys, the temperature, back to the start; sync(current) shows a state. */
function createControls(doc, make, store) {
  const element = make('div', 'aw-controls');
  const keyChoice = choice(doc, {
    label: 'Keys', name: 'keys', value: START.k.length,
    options: KEY_COUNTS.map((n) => ({ value: n, label: String(n) })),
    onChange: (value) => {
      const n = Number(value);
      const { k, v } = store.current;
      store.update({ k: START_KEYS.slice(0, n).map((p, i) => k[i] ?? p),
          v: START_VALUES.slice(0, n).map((p, i) => v[i] ?? p) });
    },
  });
  const temperature = slider(doc, {
    label: 'Temperature \u03c4 (the scores are divided by it)', name: 'temperature',
    min: 0, max: TEMPERATURES.length - 1, value: STANDARD,
    format: (index) => temperatureText(TEMPERATURES[index]),
    onInput: (index) => store.update({ temperature: TEMPERATURES[index] }),
  });
  // The standard choice, marked under its place on the track.
  const track = make('span', 'aw-plane-temperature');
  temperature.input.replaceWith(track);
  const standard = make('span', 'aw-plane-standard', '\u25b2 \u221ad_k');
  standard.style.left = `calc(8px + (100% - 16px) * ${STANDARD / (TEMPERATURES.length - 1)})`;
  standard.setAttribute('aria-hidden', 'true');
  track.append(temperature.input, standard);
  const reset = button(doc, { label: 'Back to the start', onClick: () => store.update({ ...START }) });
  element.append(keyChoice.element, temperature.element, reset);
  return {
    element,
    sync(current) {
      keyChoice.select.value = String(current.k.length);
      temperature.set(TEMPERATURES.indexOf(current.temperature));
    },
  };
}

/** One plane, [−3, 3] × [−3, 3] with its grid, in `planes`: { svg, layer, points }. */
function createPlane(doc, make, planes, title) {
  const figure = make('figure', 'aw-plane-figure');
  figure.append(make('figcaption', 'aw-heatmap-title', title));
  const svg = svgElement(doc, 'svg', { viewBox: `0 0 ${SIZE} ${SIZE}`, class: 'aw-plane-svg', role: 'group', 'aria-label': title });
  const grid = svgElement(doc, 'g', { class: 'aw-plane-grid' });
  for (let n = -EXTENT; n <= EXTENT; n++) {
    const cls = n === 0 ? 'aw-plane-axis' : 'aw-plane-gridline';
    grid.append(svgElement(doc, 'line', { x1: toX(n), y1: toY(-EXTENT), x2: toX(n), y2: toY(EXTENT), class: cls }));
    grid.append(svgElement(doc, 'line', { x1: toX(-EXTENT), y1: toY(n), x2: toX(EXTENT), y2: toY(n), class: cls }));
    if (n !== 0 && Math.abs(n) < EXTENT) {
      const tick = (x, y, text) => {
        const label = svgElement(doc, 'text', { x, y, class: 'aw-plane-tick', 'text-anchor': 'middle' });
        label.textContent = text;
        grid.append(label);
      };
      const text = String(n).replace('-', '\u2212');
      tick(toX(n), toY(0) + 13, text);
      tick(toX(0) - 9, toY(n) + 4, text);
    }
  }
  grid.setAttribute('aria-hidden', 'true');
  const layer = svgElement(doc, 'g');
  const pointsLayer = svgElement(doc, 'g');
  svg.append(grid, layer, pointsLayer);
  figure.append(svg);
  planes.append(figure);
  return { svg, layer, points: pointsLayer };
}

/** Where a pointer event falls on a plane, in its coordinates. */
function planeCoordinates(svg, event) {
  const matrix = svg.getScreenCTM().inverse();
  const p = new svg.ownerDocument.defaultView.DOMPoint(event.clientX, event.clientY).matrixTransform(matrix);
  return [(p.x - PAD) / UNIT - EXTENT, EXTENT - (p.y - PAD) / UNIT];
}

/**
 * A draggable, focusable point on `target`, a plane; `which` is 'q' or
 * ['k' | 'v', index]. moves: { at(which) -> [x, y], moveTo(which, p),
 * announce(text) (after a key moves it), weights() -> the weights as text,
 * helpId }. Returns { group, place(p) }.
 */
function createPoint(doc, target, which, { label, colour, shape = 'circle' }, moves) {
  const group = svgElement(doc, 'g', {
    class: `aw-plane-point aw-plane-${shape}`, tabindex: 0, role: 'button', 'aria-roledescription': 'movable point',
    'aria-describedby': moves.helpId, 'data-point': label.replace(/\s/g, ''),
  });
  group.style.setProperty('--aw-point', colour);
  group.append(
    svgElement(doc, 'circle', { r: 22, class: 'aw-plane-hit' }),
    svgElement(doc, 'circle', { r: 13, class: 'aw-plane-ring' }),
    shape === 'square' ? svgElement(doc, 'rect', { x: -7, y: -7, width: 14, height: 14, class: 'aw-plane-dot' })
      : svgElement(doc, 'circle', { r: 8, class: 'aw-plane-dot' }),
  );
  // The query's name below left, the keys' and values' above right: dragged
  // onto a key, q does not print over its name.
  const at = which === 'q' ? { x: -11, y: 24, 'text-anchor': 'end' } : { x: 11, y: -10 };
  const text = svgElement(doc, 'text', { ...at, class: 'aw-plane-label' });
  text.textContent = label;
  group.append(text);
  target.points.append(group);
  const name = which === 'q' ? 'the query q' : `${which[0] === 'k' ? 'key' : 'value'} ${label}`;
  const current = () => moves.at(which);

  group.addEventListener('keydown', (event) => {
    const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    const move = arrows[event.key];
    if (!move) return;
    event.preventDefault();
    const step = event.shiftKey ? BIG_STEP : STEP;
    const [x, y] = current();
    moves.moveTo(which, [x + move[0] * step, y + move[1] * step]);
    moves.announce(`${label} at ${coordinates(current())}; weights ${moves.weights()}`);
  });

  group.addEventListener('pointerdown', (event) => {
    if (event.pointerType === 'mouse' && event.button !== 0) return;
    event.preventDefault();
    group.focus({ preventScroll: true });
    group.setPointerCapture(event.pointerId);
    group.classList.add('aw-plane-dragging');
    const [px, py] = planeCoordinates(target.svg, event);
    const [x, y] = current();
    const offset = [px - x, py - y]; // where on the point it was taken
    const drag = (moveEvent) => {
      const [mx, my] = planeCoordinates(target.svg, moveEvent);
      moves.moveTo(which, [mx - offset[0], my - offset[1]]);
    };
    const drop = () => {
      group.classList.remove('aw-plane-dragging');
      group.removeEventListener('pointermove', drag);
      group.removeEventListener('pointerup', drop);
      group.removeEventListener('pointercancel', drop);
    };
    group.addEventListener('pointermove', drag);
    group.addEventListener('pointerup', drop);
    group.addEventListener('pointercancel', drop);
  });

  return {
    group,
    place(p) {
      group.setAttribute('transform', `translate(${toX(p[0])} ${toY(p[1])})`);
      group.setAttribute('aria-label', `${name} at ${coordinates(p)}`);
    },
  };
}

/** The readout's table rows for n keys, in tbody: per key { k, v, score, scaled, weight, bar }. */
function readoutRows(make, tbody, n) {
  tbody.replaceChildren();
  return Array.from({ length: n }, (_, i) => {
    const row = make('tr');
    row.dataset.key = String(i);
    const th = make('th', '', `k${i + 1}`);
    th.scope = 'row';
    th.style.setProperty('--aw-point', `var(--aw-plane-${i})`);
    th.classList.add('aw-plane-key');
    const cell = (field, className = '') => {
      const td = make('td', className);
      td.dataset.field = field;
      row.append(td);
      return td;
    };
    row.append(th);
    const k = cell('k', 'aw-plane-position');
    const v = cell('v', 'aw-plane-position');
    const score = make('span', 'aw-num');
    cell('score').append(score);
    const scaled = make('span', 'aw-num');
    cell('scaled').append(scaled);
    const weightCell = cell('weight', 'aw-plane-weight');
    const barTrack = make('span', 'aw-plane-bar-track');
    const bar = make('span', 'aw-plane-bar');
    bar.style.setProperty('--aw-point', `var(--aw-plane-${i})`);
    barTrack.append(bar);
    const weight = make('span', 'aw-num');
    weightCell.append(barTrack, weight);
    tbody.append(row);
    return { k, v, score, scaled, weight, bar };
  });
}

/** The numbers beside the planes: the query, one row per key, the output and the temperature. */
function createReadout(doc, make) {
  const element = make('section', 'aw-panel aw-plane-readout');
  element.append(make('h4', '', 'Scores, weights and the output'));
  const queryLine = make('p', 'aw-plane-output-line');
  queryLine.dataset.field = 'q';
  const tableWrap = scrollBox(make, 'aw-table-scroll', 'Scores and weights');
  const table = make('table', 'aw-table aw-plane-table');
  const thead = tableHead(make, ['key', 'k\u1d62', 'v\u1d62', 'score q\u00b7k\u1d62', 'score \u00f7 \u03c4', 'weight']);
  // The positions, which the planes show too, give way on a narrow screen.
  for (const th of [...thead.querySelectorAll('th')].slice(1, 3)) th.classList.add('aw-plane-position');
  const tbody = make('tbody');
  table.append(thead, tbody);
  tableWrap.append(table);
  const outputLine = make('p', 'aw-plane-output-line');
  const outputValues = [make('span', 'aw-num'), make('span', 'aw-num')];
  outputLine.append(make('strong', '', 'output'), doc.createTextNode(' = \u2211 w\u1d62v\u1d62 = ('), outputValues[0],
    doc.createTextNode(', '), outputValues[1], doc.createTextNode(')'));
  outputLine.dataset.field = 'output';
  const temperatureLine = make('p', 'aw-small');
  element.append(queryLine, tableWrap, outputLine, temperatureLine);
  let rows = [];
  return {
    element,
    build(n) {
      rows = readoutRows(make, tbody, n);
    },
    /** The inputs of a state, before the engine's numbers. */
    showInputs({ q, k, v, temperature: tau }) {
      queryLine.textContent = `query q = ${coordinates(q)}`;
      rows.forEach((row, i) => {
        row.k.textContent = coordinates(k[i]);
        row.v.textContent = coordinates(v[i]);
      });
      temperatureLine.textContent = tau === Math.SQRT2
        ? 'The scores are divided by \u03c4 = \u221ad_k = \u221a2 \u2248 1.414, the standard choice.'
        : `The scores are divided by \u03c4 = ${formatInput(tau)}; the standard choice is \u221ad_k = \u221a2 \u2248 1.414.`;
    },
    /** The engine's scores, weights (as bars too) and output. */
    showResult(result) {
      const weights = result.weights[0];
      const out = result.output[0];
      rows.forEach((row, i) => {
        setNumber(row.score, result.scores[0][i]);
        setNumber(row.scaled, result.scaled[0][i]);
        setNumber(row.weight, weights[i]);
        row.bar.style.width = `${weights[i] * 100}%`;
      });
      setNumber(outputValues[0], out[0]);
      setNumber(outputValues[1], out[1]);
    },
  };
}

export function mount(element, { engine, state = {}, onChange = () => {} }) {
  const { doc, make, root, id, say } = sectionRoot(element, {
    name: 'plane',
    title: 'Touch the mechanism: attention on a plane',
    intro: [
      'With d_k = 2 a query and its keys are points on a plane, and each score is a dot product q\u00b7k\u1d62: largest for a key '
      + 'that is long and points the way the query points. The softmax turns the scores into weights, positive and summing to 1, '
      + 'so the output \u2211 w\u1d62v\u1d62 is a weighted average of the values: it always lies inside the shape they span '
      + '(their convex hull, shaded). Drag the query toward a key and watch that key\u2019s weight grow and the output move toward its value.',
      'The slider divides the scores by a temperature \u03c4 before the softmax. A small \u03c4 sharpens the weights toward the best key, '
      + 'a large one flattens them toward equal shares. The Transformer divides by \u221ad_k, here \u221a2 \u2248 1.414.',
    ],
  });

  const store = sectionState({ initial: { ...START }, normalise, show, onChange });

  const controls = createControls(doc, make, store);
  root.append(controls.element);
  const help = make('p', 'aw-small', 'Drag a point, or press Tab to reach it and move it with the arrow keys (with Shift, by 0.5).');
  help.id = `${id}-help`;
  root.append(help);

  // The two planes, and beside them (below, on a narrow screen) the numbers.
  const stage = make('div', 'aw-plane-stage');
  const planes = make('div', 'aw-plane-planes');
  stage.append(planes);
  root.append(stage);
  const keyPlane = createPlane(doc, make, planes, 'Query and keys (d_k = 2)');
  const valuePlane = createPlane(doc, make, planes, 'Values and the output (d_v = 2)');
  const hull = svgElement(doc, 'polygon', { class: 'aw-plane-hull' });
  const spokes = svgElement(doc, 'g', { class: 'aw-plane-spokes' }); // output → each value, as wide as its weight
  const queryArrow = svgElement(doc, 'line', { x1: toX(0), y1: toY(0), class: 'aw-plane-query-arrow' });
  keyPlane.layer.append(queryArrow);
  const output = svgElement(doc, 'g', { class: 'aw-plane-output', role: 'img', 'data-point': 'output' });
  output.append(svgElement(doc, 'rect', { x: -7, y: -7, width: 14, height: 14, transform: 'rotate(45)' }));
  const outputLabel = svgElement(doc, 'text', { x: 12, y: 18, class: 'aw-plane-label' });
  outputLabel.textContent = 'output';
  output.append(outputLabel);
  // Under the values, so that a value the output covers can still be taken.
  valuePlane.layer.append(hull, spokes, output);

  const readout = createReadout(doc, make);
  stage.append(readout.element);
  const announcer = make('p', 'aw-visually-hidden');
  announcer.setAttribute('aria-live', 'polite');
  root.append(announcer);

  let points = null; // { q, k: [...], v: [...] }: each { group, place(p) }
  let result = null;
  const moves = {
    helpId: help.id,
    at: (which) => (which === 'q' ? store.current.q : store.current[which[0]][which[1]]),
    moveTo(which, p) {
      if (which === 'q') {
        store.update({ q: p });
        return;
      }
      const [field, index] = which;
      const list = store.current[field].map((old, i) => (i === index ? p : old));
      store.update({ [field]: list });
    },
    announce: (text) => { announcer.textContent = text; },
    weights: () => (result ? result.weights[0].map((w) => formatNumber(w)).join(', ') : ''),
  };

  /** Points and table rows for n keys (rebuilt only when n changes, so focus stays where it is). */
  function build(n) {
    for (const layer of [keyPlane.points, valuePlane.points]) layer.replaceChildren();
    spokes.replaceChildren(...Array.from({ length: n }, (_, i) => svgElement(doc, 'line', { class: `aw-plane-spoke aw-plane-colour-${i}` })));
    const pointOf = (target, which, options) => createPoint(doc, target, which, options, moves);
    points = {
      k: Array.from({ length: n }, (_, i) => pointOf(keyPlane, ['k', i], { label: `k${i + 1}`, colour: `var(--aw-plane-${i})` })),
      q: pointOf(keyPlane, 'q', { label: 'q', colour: 'var(--aw-plane-query)', shape: 'square' }),
      v: Array.from({ length: n }, (_, i) => pointOf(valuePlane, ['v', i], { label: `v${i + 1}`, colour: `var(--aw-plane-${i})` })),
    };
    readout.build(n);
  }

  function draw() {
    const { q, k, v, temperature: tau } = store.current;
    if (!points || points.k.length !== k.length) build(k.length);
    points.q.place(q);
    k.forEach((p, i) => points.k[i].place(p));
    v.forEach((p, i) => points.v[i].place(p));
    queryArrow.setAttribute('x2', String(toX(q[0])));
    queryArrow.setAttribute('y2', String(toY(q[1])));
    hull.setAttribute('points', convexHull(v).map(([x, y]) => `${toX(x)},${toY(y)}`).join(' '));
    readout.showInputs(store.current);

    const next = attempt(say, () => engine.scaledDotProduct({ q: [q], k, v, scale: scaleFor(tau) }));
    if (!next) return;
    result = next;
    const weights = result.weights[0];
    const out = result.output[0];
    readout.showResult(result);
    output.setAttribute('transform', `translate(${toX(out[0])} ${toY(out[1])})`);
    output.setAttribute('aria-label', `the output at ${coordinates(out)}`);
    output.dataset.x = fullPrecision(out[0]);
    output.dataset.y = fullPrecision(out[1]);
    [...spokes.children].forEach((line, i) => {
      for (const [key, value] of Object.entries({ x1: toX(out[0]), y1: toY(out[1]), x2: toX(v[i][0]),
          y2: toY(v[i][1]) })) {
        line.setAttribute(key, String(value));
      }
      line.setAttribute('stroke-width', String(1 + 7 * weights[i]));
      line.setAttribute('stroke-opacity', String(0.15 + 0.85 * weights[i]));
    });
  }

  function show(current) {
    controls.sync(current);
    draw();
  }

  store.setState(state);

  return {
    getState: () => structuredClone(store.current),
    setState: store.setState,
    destroy() { root.remove(); },
  };
}
