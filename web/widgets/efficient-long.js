// The "Cheaper attention" section's long sequences: on request, full,
// online and linear attention measured for T = 256 … 16 384 in a Web Worker
// (web/lib/long-sequence-worker.js, with web/lib/long-sequences.js), the
// time per call and the engine's memory drawn as curves while the page
// stays responsive, and the figures in a table. Where no worker starts (the
// one-file page opened from disk), the same measurements run on the page,
// a frame between each, and the section says so.
//
//   const panel = mountLongSequences(parent, { doc, make });  panel.destroy()

import { createLineChart } from '../ui/line-chart.js';
import { FULL_WEIGHTS_LIMIT, LONG_D, LONG_SIZES, METHODS, measurePageEngine } from '../lib/long-sequences.js';
import { button, dataTable, scrollBox } from './sections-common.js';
import { scalarEngineNote } from '../ui/engine-note.js';

const LABELS = {
  full: 'full (T \u00d7 T weights formed)',
  online: 'online (tiled, running max and sum)',
  linear: 'linear',
};
// What each float32 kernel of the engine (attn.kernelName()) does, for
// the line that says which one this browser ran.
const KERNELS = {
  'wasm-relaxed-simd': 'WebAssembly relaxed SIMD, four numbers at a time, each multiply-add one fused instruction',
  'wasm-simd128': 'WebAssembly SIMD, four numbers at a time, a multiply then an add',
  scalar: 'WebAssembly without SIMD, one number at a time',
};
const MB = 1024 * 1024;
const tick = (T) => (T >= 1024 ? `${T / 1024}k` : String(T));
// Milliseconds and megabytes, to three figures or so.
const figure = (value) => (value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(1) : value.toPrecision(2));
const megabytes = (bytes) => figure(bytes / MB);

export function mountLongSequences(parent, { doc, make }) {
  const panel = make('section', 'aw-panel aw-long');
  panel.append(make('h4', '', 'Long sequences: time and memory'),
    make('p', 'aw-small', `Measures the engine in your browser, in a Web Worker so the page stays responsive, for T = ${LONG_SIZES[0]} `
      + `to ${LONG_SIZES.at(-1).toLocaleString('en')} tokens (float32, d_k = d_v = ${LONG_D}). Full attention forms the T \u00d7 T weights: `
      + 'its time and memory grow like T\u00b2, and it stops where the weights alone would need more than '
      + `${FULL_WEIGHTS_LIMIT / MB} MB (at ${tick(LONG_SIZES.at(-1))} tokens they would need 1 GB). Online attention computes the same outputs `
      + 'without ever holding the weights: it goes through the keys in tiles and keeps, per query, the largest score so far and a running '
      + 'sum, rescaling what it has summed whenever the maximum grows (as FlashAttention does). Its time still grows like T\u00b2, its '
      + 'memory only like T. Linear attention grows like T in both.'));
  const slowNote = scalarEngineNote(doc, 'Measuring long sequences');
  if (slowNote) panel.append(slowNote);
  const startButton = button(doc, { label: 'Measure long sequences', onClick: () => start() });
  const progress = make('p', 'aw-timing-progress');
  progress.setAttribute('role', 'status');
  const kernelLine = make('p', 'aw-small aw-long-kernel');
  kernelLine.hidden = true; // until a measurement says which kernel ran
  const onPageNote = make('p', 'aw-message aw-long-on-page', 'This page cannot start a Web Worker (opened from a file, say), '
    + 'so the measurements run on the page itself, one at a time with a pause between them: the page may stop for a moment '
    + 'while each one runs.');
  onPageNote.hidden = true;
  const charts = make('div', 'aw-long-charts');
  const xAxis = { label: 'T (tokens)', doubling: true, from: LONG_SIZES[0], tick, at: (T) => `at T = ${T}` };
  const timeChart = createLineChart(charts, { title: 'Time per call (ms, log scale)', log: true, format: figure, unit: ' ms', x: xAxis });
  const memoryChart = createLineChart(charts, { title: 'Engine memory per call (MB, log scale)', log: true, format: figure, unit: ' MB', x: xAxis });
  const table = scrollBox(make, 'aw-table-scroll', 'Time and memory per call');
  charts.hidden = true; // until there is something to draw
  panel.append(startButton, onPageNote, progress, kernelLine, charts, table);
  parent.append(panel);

  let worker = null;
  let onPage = null; // { stopped } of a measurement running on the page
  let results = {};

  function stop() {
    worker?.terminate();
    worker = null;
    if (onPage) onPage.stopped = true;
    onPage = null;
    startButton.disabled = false;
  }

  function start() {
    stop();
    results = {};
    startButton.disabled = true;
    charts.hidden = false;
    progress.textContent = `Measuring T = ${LONG_SIZES[0]}\u2026`;
    draw();
    let answered = false;
    try {
      worker = new Worker(new URL('../lib/long-sequence-worker.js', import.meta.url), { type: 'module' });
    } catch {
      measureOnPage();
      return;
    }
    worker.addEventListener('message', (event) => {
      answered = true;
      heard(event.data);
    });
    // A worker that fails before it answers never started (its script
    // could not load): the page measures instead.
    worker.addEventListener('error', () => {
      if (answered) heard({ type: 'error', message: 'its worker stopped' });
      else measureOnPage();
    });
    worker.postMessage({ type: 'measure' });
  }

  function measureOnPage() {
    worker?.terminate();
    worker = null;
    onPageNote.hidden = false;
    const run = { stopped: false };
    onPage = run;
    const view = doc.defaultView;
    const nextFrame = () => new Promise((resolve) => view.requestAnimationFrame(() => view.setTimeout(resolve, 0)));
    measurePageEngine({ post: (message) => run.stopped || heard(message), stopped: () => run.stopped, pause: nextFrame });
  }

  function heard(message) {
    if (message.type === 'error') {
      stop();
      progress.textContent = `The measurement stopped: ${message.message}`;
      return;
    }
    if (message.type === 'done') {
      stop();
      progress.textContent = 'Done. The times vary from run to run; the growth from one T to the next is what to read.';
      return;
    }
    if (message.kernel) {
      const what = KERNELS[message.kernel];
      kernelLine.textContent = `This browser runs the engine\u2019s float32 kernel ${message.kernel}${what ? `: ${what}` : ''}.`;
      kernelLine.hidden = false;
    }
    results[message.T] = { ...results[message.T], [message.method]: message };
    const next = LONG_SIZES[LONG_SIZES.indexOf(message.T) + 1];
    const done = METHODS.every((method) => results[message.T][method]);
    progress.textContent = done && next ? `Measuring T = ${next.toLocaleString('en')}\u2026` : `Measuring T = ${message.T.toLocaleString('en')}\u2026`;
    draw();
  }

  function draw() {
    const series = (key) => METHODS.map((method) => ({
      label: LABELS[method],
      dashed: method === 'linear',
      none: 'not measured yet',
      points: LONG_SIZES.filter((T) => results[T]?.[method]?.type === 'row').map((T) => [T, key(results[T][method])]),
    }));
    timeChart.update(series((row) => row.ms), LONG_SIZES.at(-1));
    memoryChart.update(series((row) => row.bytes / MB), LONG_SIZES.at(-1));
    const cells = (T, method) => {
      const row = results[T]?.[method];
      if (!row) return [make('td', '', ''), make('td', '', '')];
      if (row.type === 'skipped') {
        const td = make('td', 'aw-long-skipped', `not run: the weights alone would take ${megabytes(row.bytes)} MB`);
        td.colSpan = 2;
        return [td];
      }
      return [make('td', '', figure(row.ms)), make('td', '', megabytes(row.bytes))];
    };
    const rows = LONG_SIZES.filter((T) => results[T]).map((T) => {
      const tr = make('tr');
      tr.dataset.t = String(T);
      const th = make('th', '', T.toLocaleString('en'));
      th.scope = 'row';
      tr.append(th, ...METHODS.flatMap((method) => cells(T, method)));
      return tr;
    });
    table.replaceChildren(dataTable(make, ['T', 'full: ms', 'full: MB', 'online: ms', 'online: MB', 'linear: ms', 'linear: MB'], rows));
  }

  return {
    destroy() {
      stop();
      panel.remove();
    },
  };
}
