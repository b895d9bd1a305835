// The chapter "Attention in a real model": the shipped model,
// models/kjv-genesis (a byte-level Llama decoder, 2 layers × 4 heads), on any
// text the learner types: the next byte's probabilities at a temperature, and
// every layer's and head's attention weights as a grid of small heatmaps
// (BertViz's model view, exact). The model and the whole engine (the page's
// own module has no model) are fetched when the chapter mounts, not before.
//
//   mount(element, { state?, onChange?, openWalkthrough? }) -> { destroy(), getState(), setState(state), drawn }
//   state: { text, temperature }
//   drawn: resolves once the model's first run is on screen (or the reason
//   it could not load)
//   openWalkthrough(state): shows a head on the text in the page's
//   walkthrough (a click on its heatmap, or Enter); without it a link does.
//
// Every number comes from the engine: the weights and logits from
// model.run, the tokens' labels from model.labels (attn_token_label), the
// probabilities from softmax with scale 1 / temperature (softmax(z / T)), a
// head's queries, keys (after RoPE) and values from model.head.

import { loadAttention } from '../lib/attention.js';
import { engineUrl } from '../lib/engine-file.js';
import { viridis } from '../ui/heatmap.js';
import { walkthroughLink } from '../ui/embed-button.js';
import { MAX_WIDTH } from './walkthrough-problem.js';
import { fullPrecision } from '../ui/format.js';
import { button, sectionRoot, sectionState, slider } from './sections-common.js';

// Where the page's build puts the shipped model (scripts/build-page.mjs).
const MODEL_FILES = {
  config: new URL('../dist/models/kjv-genesis/config.json', import.meta.url),
  weights: new URL('../dist/models/kjv-genesis/model.safetensors', import.meta.url),
};
const DEFAULT_TEXT = 'In the beginning';
const TOP = 10;
// The heatmaps draw at most this many tokens (each head n × n cells); the
// model itself reads up to its max_position_embeddings.
const MAX_TOKENS = 64;
const TEMPERATURE = { min: 0.1, max: 2, step: 0.1 };
const CELL = 8; // canvas pixels per cell; CSS scales the canvas to its box
// The walkthrough's example under a head's own values (its numbers replaced).
const QKV_PRESET = 'cat-sat-mat';

const clampTemperature = (value) => {
  const t = Number(value);
  if (!Number.isFinite(t)) return 1;
  return Math.round(Math.min(TEMPERATURE.max, Math.max(TEMPERATURE.min, t)) * 10) / 10;
};

// The line under the heads until a cell is pointed at.
const POINT_HINT = 'Point at a cell, or focus a head and use the arrow keys, to read its exact weight here.';

const percent = (p) => `${(p * 100).toPrecision(4)}%`;

async function loadModel() {
  const [attn, config, weights] = await Promise.all([
    loadAttention({ wasmUrl: engineUrl() }),
    ...Object.values(MODEL_FILES).map(async (url) => {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`${url.pathname} answered ${response.status} ${response.statusText}`);
      return new Uint8Array(await response.arrayBuffer());
    }),
  ]);
  return { attn, model: attn.model({ config, weights }) };
}

export function mount(element, { state = {}, onChange = () => {}, openWalkthrough = null } = {}) {
  const { doc, make, root, say } = sectionRoot(element, {
    name: 'model',
    title: 'Attention in a real model',
    intro: ['A small language model of our own (2 layers of 4 heads, trained on Genesis by the engine\u2019s trainer) '
      + 'reads your text one byte at a time. Every number is the engine\u2019s, computed exactly.'],
  });

  const loading = make('p', 'aw-model-loading', 'Loading the model (460 KB)\u2026');
  loading.setAttribute('role', 'status');
  const body = make('div', 'aw-model-body');
  body.hidden = true;
  root.append(loading, body);

  const textLabel = make('label', 'aw-model-text-label', 'Your text ');
  const textBox = make('textarea', 'aw-model-text');
  textBox.rows = 2;
  textBox.spellcheck = false;
  textLabel.append(textBox);
  const tokensLine = make('p', 'aw-model-tokens');

  const nextPanel = make('div', 'aw-model-next');
  const nextTitle = make('h4', 'aw-model-next-title', 'The next byte');
  const temperature = slider(doc, {
    label: 'Temperature', ...TEMPERATURE, value: 1, name: 'temperature', format: (t) => t.toFixed(1),
    onInput: (t) => store.update({ temperature: t }, 'slider'),
  });
  const table = make('table', 'aw-model-top');
  const caption = make('caption', '', `The ${TOP} likeliest next bytes`);
  const head = make('thead');
  const headRow = make('tr');
  for (const text of ['Byte', 'Probability']) headRow.append(make('th', '', text));
  head.append(headRow);
  const rows = make('tbody');
  table.append(caption, head, rows);
  nextPanel.append(nextTitle, temperature.element, table);

  const gridPanel = make('div', 'aw-model-heads');
  const gridTitle = make('h4', 'aw-model-heads-title', 'Every head\u2019s attention weights');
  const gridNote = make('p', 'aw-model-heads-note',
                        'A row is a token reading, a column a token read; brighter: more weight. '
                        + 'To follow a head in the walkthrough, click it (on a touch screen, tap it, then its button).');
  const grid = make('div', 'aw-model-grid');
  const detail = make('p', 'aw-model-detail');
  detail.setAttribute('aria-live', 'polite');
  const openNote = make('p', 'aw-model-open');
  gridPanel.append(gridTitle, gridNote, grid, detail, openNote);

  const columns = make('div', 'aw-model-columns');
  columns.append(nextPanel, gridPanel);
  // The engine's messages about the text go under the text box.
  body.append(textLabel, root.querySelector(':scope > .aw-message'), tokensLine, columns);

  let engine = null; // { attn, model } once loaded
  let run = null; // { ids, labels, attention, logits } of the text shown
  let heads = []; // { layer, head, name, canvas, cursor: [i, j], shown }
  // How the last press on a head was made: a finger's tap points at a cell
  // (a finger cannot hover) and offers the walkthrough with a button.
  let pressedBy = 'mouse';

  const store = sectionState({
    initial: {
      text: typeof state.text === 'string' ? state.text : DEFAULT_TEXT,
      temperature: clampTemperature(state.temperature ?? 1),
    },
    normalise: (next) => ({ text: String(next.text), temperature: clampTemperature(next.temperature) }),
    show: (current, previous, how) => {
      if (how !== 'typed') textBox.value = current.text;
      if (how !== 'slider') temperature.set(current.temperature);
      if (!engine) return;
      if (current.text !== previous.text || !run) compute(current.text);
      showNext();
    },
    onChange,
  });
  textBox.value = store.current.text;
  temperature.set(store.current.temperature);
  textBox.addEventListener('input', () => store.update({ text: textBox.value }, 'typed'));

  function compute(text) {
    run = null;
    openNote.textContent = '';
    const bytes = new TextEncoder().encode(text).length;
    if (bytes === 0) {
      say('Type some text: the model needs at least one byte to predict the next.');
    } else if (bytes > MAX_TOKENS) {
      say(`This text is ${bytes} bytes; the heatmaps here show up to ${MAX_TOKENS}. Shorten it a little.`);
    } else {
      try {
        const result = engine.model.run({ text });
        run = { ...result, labels: engine.model.labels({ ids: result.ids }) };
        say('');
      } catch (error) {
        say(`The engine refused this text: ${error.message}`);
      }
    }
    columns.hidden = !run;
    tokensLine.hidden = !run;
    detail.textContent = POINT_HINT;
    for (const key of ['layer', 'head', 'query', 'key']) delete detail.dataset[key];
    if (!run) return;
    tokensLine.replaceChildren(make('span', 'aw-model-tokens-label', `${run.ids.length} tokens: `),
                               ...run.labels.map((label) => make('code', 'aw-model-token', label)));
    drawHeads();
  }

  function showNext() {
    if (!run) return;
    const logits = run.logits[run.logits.length - 1];
    const { weights } = engine.attn.softmax({ x: logits, scale: 1 / store.current.temperature });
    const order = weights.map((p, id) => [p, id]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, TOP);
    const labels = engine.model.labels({ ids: order.map(([, id]) => id) });
    while (rows.children.length < TOP) {
      const row = make('tr');
      const bar = make('span', 'aw-model-bar');
      const value = make('span', 'aw-model-p');
      const cell = make('td', 'aw-model-p-cell');
      cell.append(bar, value);
      row.append(make('td', 'aw-model-byte'), cell);
      rows.append(row);
    }
    order.forEach(([p], index) => {
      const [byteCell, pCell] = rows.children[index].children;
      byteCell.replaceChildren(make('code', '', labels[index]));
      pCell.firstChild.style.width = `${p * 100}%`;
      pCell.lastChild.textContent = percent(p);
    });
  }

  function drawHeads() {
    const { num_hidden_layers: layers, num_attention_heads: count } = engine.model.config;
    if (heads.length !== layers * count) {
      grid.replaceChildren();
      grid.style.setProperty('--aw-model-heads', String(count));
      heads = [];
      for (let layer = 0; layer < layers; layer++) {
        for (let index = 0; index < count; index++) heads.push(headView(layer, index));
      }
    }
    for (const view of heads) {
      view.cursor = view.cursor.map((k) => Math.min(k, run.ids.length - 1));
      paint(view);
    }
  }

  function headView(layer, index) {
    const figure = make('figure', 'aw-model-head');
    const name = `Layer ${layer + 1}, head ${index + 1}`;
    const canvas = make('canvas', 'aw-model-canvas');
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `${name}: its attention weights; arrow keys move between cells, `
                        + 'Enter opens it in the walkthrough');
    canvas.dataset.layer = String(layer);
    canvas.dataset.head = String(index);
    figure.append(make('figcaption', '', name), canvas);
    grid.append(figure);
    const view = { layer, head: index, name, canvas, cursor: [0, 0], shown: false };
    /** The cell under the pointer's event, as [query, key], or null outside the grid. */
    const cellAt = (event) => {
      const box = canvas.getBoundingClientRect();
      const n = run.ids.length;
      const j = Math.floor(((event.clientX - box.left) / box.width) * n);
      const i = Math.floor(((event.clientY - box.top) / box.height) * n);
      return i >= 0 && i < n && j >= 0 && j < n ? [i, j] : null;
    };
    canvas.addEventListener('mousemove', (event) => {
      const cell = cellAt(event);
      if (cell) point(view, ...cell);
    });
    canvas.addEventListener('mouseleave', () => { view.shown = false; paint(view); });
    canvas.addEventListener('focus', () => point(view, ...view.cursor));
    canvas.addEventListener('blur', () => { view.shown = false; paint(view); });
    canvas.addEventListener('pointerdown', (event) => { pressedBy = event.pointerType; });
    canvas.addEventListener('click', (event) => {
      if (pressedBy !== 'touch') {
        openHead(view);
        return;
      }
      const cell = cellAt(event);
      if (cell) point(view, ...cell);
      openNote.replaceChildren(button(doc, {
        label: `Open ${view.name.toLowerCase()} in the walkthrough`, className: 'aw-model-open-head',
        onClick: () => openHead(view),
      }));
    });
    canvas.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        openHead(view);
        return;
      }
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
      const move = moves[event.key];
      if (!move) return;
      event.preventDefault();
      const n = run.ids.length;
      const [i, j] = view.cursor.map((k, axis) => Math.min(n - 1, Math.max(0, k + move[axis])));
      point(view, i, j);
    });
    return view;
  }

  // The head's scaled dot-product attention on the text, with the causal
  // mask: the walkthrough computes from these exactly the weights drawn.
  function openHead(view) {
    if (run.ids.length > MAX_WIDTH) {
      openNote.textContent = `The walkthrough follows up to ${MAX_WIDTH} tokens, and this text has ${run.ids.length}: `
        + `shorten it to open ${view.name.toLowerCase()} there.`;
      return;
    }
    openNote.textContent = '';
    const { q, k, v } = engine.model.head(view.layer, view.head, { text: store.current.text });
    const walkthrough = {
      preset: QKV_PRESET, step: 0, values: { mode: 'qkv', fields: { q, k, v, mask: 'causal' }, tokens: run.labels },
    };
    if (openWalkthrough) {
      openWalkthrough(walkthrough);
      return;
    }
    const link = make('a', 'aw-link', `${view.name} in the walkthrough \u2197`);
    link.href = walkthroughLink(walkthrough);
    link.target = '_blank';
    link.rel = 'noopener';
    openNote.replaceChildren(link);
    link.focus();
  }

  // The cell (query i, key j) of a head: outlined, and named with its exact weight.
  function point(view, i, j) {
    view.cursor = [i, j];
    view.shown = true;
    paint(view);
    const weight = run.attention[view.layer][view.head][i][j];
    const token = (k) => `\u201c${run.labels[k]}\u201d (token ${k + 1})`;
    detail.textContent = j > i
      ? `${view.name}: ${token(i)} cannot read ${token(j)}, which comes after it (weight 0).`
      : `${view.name}: ${token(i)} attends to ${token(j)} with weight ${fullPrecision(weight)}.`;
    for (const [k, chip] of [...tokensLine.querySelectorAll('.aw-model-token')].entries()) {
      if (k === i) chip.dataset.role = 'query';
      else if (k === j) chip.dataset.role = 'key';
      else delete chip.dataset.role;
    }
    detail.dataset.layer = String(view.layer);
    detail.dataset.head = String(view.head);
    detail.dataset.query = String(i);
    detail.dataset.key = String(j);
  }

  function paint(view) {
    const weights = run.attention[view.layer][view.head];
    const n = weights.length;
    const { canvas } = view;
    if (canvas.width !== n * CELL) {
      canvas.width = n * CELL;
      canvas.height = n * CELL;
    }
    const context = canvas.getContext('2d');
    context.clearRect(0, 0, canvas.width, canvas.height);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j <= i; j++) {
        context.fillStyle = viridis(weights[i][j]);
        context.fillRect(j * CELL, i * CELL, CELL, CELL);
      }
    }
    if (!view.shown) return;
    const [i, j] = view.cursor;
    context.strokeStyle = '#ff2d55';
    context.lineWidth = 2;
    context.strokeRect(j * CELL + 1, i * CELL + 1, CELL - 2, CELL - 2);
  }

  let live = true;
  // The one-file page (scripts/build-single.mjs) inlines the page's engine
  // only, and from disk it can fetch neither the whole engine nor the model.
  const arriving = globalThis.attentionSingleFile
    ? Promise.reject(new Error('this one-file copy of the page carries no model; the served page runs it'))
    : loadModel();
  const drawn = arriving.then((loaded) => {
    if (!live) {
      loaded.model.dispose();
      return;
    }
    engine = loaded;
    loading.remove();
    body.hidden = false;
    compute(store.current.text);
    showNext();
    root.dataset.ready = 'true';
  }, (error) => {
    loading.textContent = `The model could not load: ${error.message}`;
  });

  return {
    getState: store.getState,
    setState: (next) => store.setState(next),
    drawn,
    destroy() {
      live = false;
      engine?.model.dispose();
      root.remove();
    },
  };
}
