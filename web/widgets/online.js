// The online softmax, tile by tile (as FlashAttention computes attention):
// the engine's onlineSoftmax step list played step by step. For the query
// the learner picks, each key's e^(s − m) is drawn as a bar when its tile
// is read; when a tile raises the running max, everything drawn so far
// shrinks by the engine's rescaling factor e^(m − m'), so the bars' total
// height is always the running sum ℓ. The last steps divide and set the
// plain softmax's output beside the online one.
//
//   mount(element, { engine, state?, onChange? }) -> { destroy(), getState(), setState(state) }
//   state: { tile, query, seed, step }  (step counts from 0)
//
// Every number comes from the engine's steps: bar heights are its e^(s − m)
// values, each shrink its e^(m − m'); the page composes the shrinks by
// nesting the bars of earlier tiles inside the later ones (SVG transforms).

import { equationElement } from '../ui/equation.js';
import { formatNumber } from '../ui/format.js';
import { mathElement } from '../ui/math.js';
import { createPlayer } from '../ui/player.js';
import { svgElement } from '../ui/svg.js';
import { attempt, button, choice, clampInt, normalDraws, randomMatrix, sectionRoot, sectionState, seededRandom, slider } from './sections-common.js';

const TOKENS = ['The', 'cat', 'sat', 'on', 'the', 'mat'];
const D = 2;
const COLUMN = 48;
const PLOT = { left: 52, top: 12, height: 130, bottom: 32 };

/** The seeded problem the section shows (exported for the tests). */
export function problemFor({ tile, seed }) {
  const draw = normalDraws(seededRandom(seed));
  const n = TOKENS.length;
  return {
    kind: 'onlineSoftmax', tokens: TOKENS, tile,
    q: randomMatrix(draw, n, D), k: randomMatrix(draw, n, D), v: randomMatrix(draw, n, D),
  };
}

// The row an equation computes: the first index of the cell it ends in.
function rowOf(equation) {
  const last = equation.chain.at(-1);
  return (last.ref ?? last.args?.[0]?.ref)?.[1];
}

function endsIn(equation, name) {
  const last = equation.chain.at(-1);
  return (last.ref ?? last.args?.[0]?.ref)?.[0] === name;
}

// The e^(x − y) nodes of a tree whose x is a cell named `name`, as [x's ref, value].
function shiftedExps(node, name, found = []) {
  if (node.op === 'exp' && node.args[0].op === 'sub' && node.args[0].args[0].ref?.[0] === name) {
    found.push([node.args[0].args[0].ref, node.v]);
  }
  for (const arg of node.args ?? []) shiftedExps(arg, name, found);
  return found;
}

/** The bars of one query, each tile's inside the next's, built once per run and query. */
function buildFigure(svg, run, query) {
  const doc = svg.ownerDocument;
  const n = TOKENS.length;
  const width = PLOT.left + n * COLUMN + 16;
  const base = PLOT.top + PLOT.height;
  svg.setAttribute('viewBox', `0 0 ${width} ${base + PLOT.bottom}`);
  svg.replaceChildren();
  const y = (value) => base - value * PLOT.height;
  const text = (x, yy, content, className, anchor = 'middle') => {
    const node = svgElement(doc, 'text', { x, y: yy, 'text-anchor': anchor, class: className });
    node.textContent = content;
    svg.append(node);
  };
  svg.append(svgElement(doc, 'line', { x1: PLOT.left, x2: width - 8, y1: y(1), y2: y(1), class: 'aw-online-one' }),
    svgElement(doc, 'line', { x1: PLOT.left, x2: width - 8, y1: base, y2: base, class: 'aw-online-base' }));
  text(PLOT.left - 6, y(1) + 4, 'e\u2070 = 1', 'aw-online-tick', 'end');
  text(PLOT.left - 6, base + 4, '0', 'aw-online-tick', 'end');
  TOKENS.forEach((token, j) => {
    svg.append(svgElement(doc, 'rect', { x: PLOT.left + j * COLUMN + 4, y: y(1), width: COLUMN - 8, height: PLOT.height, class: 'aw-online-slot' }));
    text(PLOT.left + (j + 0.5) * COLUMN, base + 18, token, 'aw-online-key');
  });
  // groups[t] holds groups[t − 1] and tile t's bars: a later tile's
  // rescaling shrinks every earlier bar at once.
  const groups = [];
  const bars = [];
  for (let t = 0; t < run.tiles; t++) {
    const group = svgElement(doc, 'g', { class: 'aw-online-tile' });
    group.dataset.tile = String(t);
    group.style.transformOrigin = `0 ${base}px`;
    if (t > 0) group.append(groups[t - 1]);
    const tileStep = run.steps.steps.find((step) => step.id === `tile-${t + 1}`);
    const sum = tileStep?.equations?.find((equation) => endsIn(equation, 'tileSum') && rowOf(equation) === query);
    for (const [ref, value] of sum ? shiftedExps(sum.chain[0], 'scaled') : []) {
      const j = ref[2];
      const bar = svgElement(doc, 'rect', { x: PLOT.left + j * COLUMN + 8, y: y(value), width: COLUMN - 16, height: value * PLOT.height, class: 'aw-online-bar' });
      bar.dataset.key = String(j);
      bar.dataset.tile = String(t);
      bar.dataset.value = String(value);
      group.append(bar);
      bars.push(bar);
    }
    groups.push(group);
  }
  if (groups.length) svg.append(groups.at(-1));
  // α_t: the factor tile t applies to what was summed before it.
  const alphas = [1];
  for (let t = 1; t < run.tiles; t++) {
    const tileStep = run.steps.steps.find((step) => step.id === `tile-${t + 1}`);
    const sum = tileStep?.equations?.find((equation) => endsIn(equation, 'tileSum') && rowOf(equation) === query);
    alphas.push(sum ? (shiftedExps(sum.chain[0], 'tileMax')[0]?.[1] ?? 1) : 1);
  }
  return { query, groups, bars, alphas };
}

function normalise(next) {
  return {
    tile: clampInt(next.tile, 1, TOKENS.length, 2),
    query: clampInt(next.query, 0, TOKENS.length - 1, 0),
    seed: clampInt(next.seed, 0, 2 ** 31, 3),
    step: clampInt(next.step, 0, 10_000, 0),
  };
}

export function mount(element, { engine, state = {}, onChange = () => {} }) {
  const { doc, make, root, say } = sectionRoot(element, {
    name: 'online',
    title: 'The online softmax, tile by tile',
    intro: [
      'A softmax seems to need a whole row of scores before it can weigh anything: the largest score first, then the sum of the '
      + 'exponentials. FlashAttention reads the keys a tile at a time instead and never stores a weight. It keeps, per query, the '
      + 'largest score so far m, the sum \u2113 of e^(s \u2212 m) and the output so far a, and when a tile brings a larger score it shrinks '
      + 'everything summed until then by e^(m \u2212 m\u2032). Step through it: each bar is a key\u2019s e^(s \u2212 m), their total height is \u2113.',
    ],
  });
  const store = sectionState({ initial: { tile: 2, query: 0, seed: 3, step: 0 }, normalise, show, onChange });

  const controls = make('div', 'aw-controls');
  const tileSlider = slider(doc, { label: 'keys per tile', name: 'tile', min: 1, max: TOKENS.length, value: 2, onInput: (tile) => store.update({ tile, step: 0 }) });
  const queryChoice = choice(doc, {
    label: 'Query', name: 'query', value: 0,
    options: TOKENS.map((token, i) => ({ value: i, label: `${i + 1}. ${token}` })),
    onChange: (query) => store.update({ query: Number(query) }),
  });
  controls.append(tileSlider.element, queryChoice.element,
    button(doc, { label: 'New random Q, K, V', onClick: () => store.update({ seed: store.current.seed + 1, step: 0 }) }));
  root.append(controls);

  const card = make('section', 'aw-panel aw-online-step');
  const stepTitle = make('h4', 'aw-online-title');
  const stepText = make('p', 'aw-online-text');
  const stepFormula = make('div', 'aw-step-formula');
  const svg = svgElement(doc, 'svg', { class: 'aw-online-figure', role: 'img' });
  const readout = make('p', 'aw-online-readout');
  readout.setAttribute('aria-live', 'polite');
  const equations = make('div', 'aw-online-equations');
  const player = createPlayer(root, { count: 1, onStep: (step) => store.update({ step }), watch: svg });
  card.append(stepTitle, stepText, stepFormula, svg, readout, equations);
  root.append(card);

  let run = null; // { result, steps, tiles, figure }

  function compute(current) {
    const computed = attempt(say, () => engine.walkthrough(problemFor(current)));
    return computed && { ...computed, tiles: computed.result.tileMax[0].length, built: null };
  }

  // The tile whose state a step shows: -1 before any, the last one after.
  function tileOfStep(step) {
    const match = /^tile-(\d+)$/.exec(step.id);
    if (match) return Number(match[1]) - 1;
    return step.id === 'inputs' ? -1 : run.tiles - 1;
  }

  function showStep(index) {
    const step = run.steps.steps[index];
    const { query } = store.current;
    if (run.built?.query !== query) run.built = buildFigure(svg, run, query);
    const tile = tileOfStep(step);
    const { groups, bars, alphas } = run.built;
    groups.forEach((group, t) => {
      // Tile t + 1, once read, shrinks this group (and all inside it).
      group.style.transform = t + 1 <= tile ? `scaleY(${alphas[t + 1]})` : '';
    });
    for (const bar of bars) {
      const t = Number(bar.dataset.tile);
      bar.classList.toggle('aw-online-hidden', t > tile);
      bar.classList.toggle('aw-online-new', t === tile && step.id.startsWith('tile-'));
    }
    stepTitle.textContent = `Step ${index + 1} of ${run.steps.steps.length}: ${step.title}`;
    stepText.textContent = (step.text ?? []).join(' ');
    stepFormula.replaceChildren(...(step.formula ? [mathElement(doc, step.formula.tex, { display: true })] : []));
    const token = TOKENS[query];
    const { tileMax, tileSum } = run.result;
    const shrink = tile > 0 && step.id.startsWith('tile-')
      ? ` This tile\u2019s e^(m \u2212 m\u2032) = ${formatNumber(alphas[tile])} scaled the earlier (blue) bars; the new ones are orange.`
      : '';
    readout.textContent = tile < 0
      ? `No key read yet for \u201c${token}\u201d.`
      : `After tile ${tile + 1} of ${run.tiles}, for \u201c${token}\u201d: m = ${formatNumber(tileMax[query][tile])}, `
        + `\u2113 = ${formatNumber(tileSum[query][tile])} (the bars\u2019 total height).${shrink}`;
    svg.setAttribute('aria-label', `e^(s \u2212 m) for each key read so far by \u201c${token}\u201d. ${readout.textContent}`);
    equations.replaceChildren(...(step.equations ?? []).filter((equation) => rowOf(equation) === query)
      .map((equation) => equationElement(doc, equation)));
  }

  function show(current, previous) {
    if (!run || current.tile !== previous.tile || current.seed !== previous.seed) {
      run = compute(current);
      if (!run) return;
      player.setCount(run.steps.steps.length);
    }
    tileSlider.set(current.tile);
    queryChoice.select.value = String(current.query);
    const step = player.setStep(current.step);
    if (step !== current.step) store.current = { ...current, step };
    showStep(step);
  }

  store.setState(state);
  return {
    getState: store.getState,
    setState: store.setState,
    destroy() { root.remove(); },
  };
}
