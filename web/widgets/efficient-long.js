// The "Cheaper attention" section's long sequences: on request, full,
// online and linear attention measured for T = 256 … 16 384 on one core in
// a Web Worker (web/lib/long-sequence-worker.js, with
// web/lib/long-sequences.js), then online attention again with its query
// rows split across one worker per core (web/lib/parallel.js), the time
// per call and the engine's memory drawn as curves while the page stays
// responsive, and the figures in a table. Stop ends it, keeping what was
// measured. Where no worker starts (the one-file page opened from disk),
// the same measurements run on the page, on one core, a frame between
// each, and the section says so.
//
//   const panel = mountLongSequences(parent, { doc, make });  panel.destroy()

import { createLineChart } from '../ui/line-chart.js';
import {
  FULL_WEIGHTS_LIMIT, LONG_D, LONG_SIZES, METHODS, measureOnWorkers, measurePageEngine, pageEngineBytes,
} from '../lib/long-sequences.js';
import { createAttentionPool, workerCount } from '../lib/parallel.js';
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
const workersLabel = (n) => `online on ${n} workers (query rows split)`;

export function mountLongSequences(parent, { doc, make }) {
  const view = doc.defaultView;
  const cores = workerCount(view.navigator);
  const panel = make('section', 'aw-panel aw-long');
  panel.append(make('h4', '', 'Long sequences: time and memory'),
    make('p', 'aw-small', `Measures the engine in your browser, in a Web Worker so the page stays responsive, for T = ${LONG_SIZES[0]} `
      + `to ${LONG_SIZES.at(-1).toLocaleString('en')} tokens (float32, d_k = d_v = ${LONG_D}). Full attention forms the T \u00d7 T weights: `
      + 'its time and memory grow like T\u00b2, and it stops where the weights alone would need more than '
      + `${FULL_WEIGHTS_LIMIT / MB} MB (at ${tick(LONG_SIZES.at(-1))} tokens they would need 1 GB). Online attention computes the same outputs `
      + 'without ever holding the weights: it goes through the keys in tiles and keeps, per query, the largest score so far and a running '
      + 'sum, rescaling what it has summed whenever the maximum grows (as FlashAttention does). Its time still grows like T\u00b2, its '
      + 'memory only like T. Linear attention grows like T in both.'),
    make('p', 'aw-small aw-long-cores', cores > 1
      ? `Each query\u2019s output needs only its own row of Q (and all of K and V), so online attention is measured a second time with the `
        + `query rows split into ${cores} blocks, one per worker, each worker an engine of its own on one of this device\u2019s cores `
        + '(K and V are copied to each once): the same outputs, to the bit, in less time when the cores are not busy with other work.'
      : 'This device reports one core, so every measurement runs on it.'));
  const slowNote = scalarEngineNote(doc, 'Measuring long sequences');
  if (slowNote) panel.append(slowNote);
  // aria-disabled rather than disabled, as the player's buttons: a disabled
  // button would drop the keyboard focus the moment it was pressed.
  const usable = (node) => node.getAttribute('aria-disabled') !== 'true';
  const startButton = button(doc, { label: 'Measure long sequences', onClick: () => { if (usable(startButton)) start(); } });
  const stopButton = button(doc, { label: 'Stop', onClick: () => { if (usable(stopButton)) cancel(); } });
  const measuring = (on) => {
    startButton.setAttribute('aria-disabled', String(on));
    stopButton.setAttribute('aria-disabled', String(!on));
  };
  measuring(false);
  const buttons = make('div', 'aw-long-buttons');
  buttons.append(startButton, stopButton);
  const progress = make('p', 'aw-timing-progress');
  progress.setAttribute('role', 'status');
  const kernelLine = make('p', 'aw-small aw-long-kernel');
  kernelLine.hidden = true; // until a measurement says which kernel ran
  const onPageNote = make('p', 'aw-message aw-long-on-page', 'This page cannot start a Web Worker (opened from a file, say), '
    + 'so the measurements run on the page itself, one at a time with a pause between them, and on one core only: the page may stop '
    + 'for a moment while each one runs.');
  onPageNote.hidden = true;
  const charts = make('div', 'aw-long-charts');
  const xAxis = { label: 'T (tokens)', doubling: true, from: LONG_SIZES[0], tick, at: (T) => `at T = ${T}` };
  const timeChart = createLineChart(charts, { title: 'Time per call (ms, log scale)', log: true, format: figure, unit: ' ms', x: xAxis });
  const memoryChart = createLineChart(charts, { title: 'Engine memory per call, one worker (MB, log scale)', log: true, format: figure, unit: ' MB', x: xAxis });
  const table = scrollBox(make, 'aw-table-scroll', 'Time and memory per call');
  charts.hidden = true; // until there is something to draw
  table.hidden = true; // likewise: an empty scroll box is an empty tab stop
  panel.append(buttons, onPageNote, progress, kernelLine, charts, table);
  parent.append(panel);

  let run = null; // { stopped, worker, pool } of the measurement in progress
  let results = {};
  let workers = 0; // the pool's size in the run being shown, 0 for none

  function stop() {
    if (run) {
      run.stopped = true;
      run.worker?.terminate();
      run.pool?.close();
    }
    run = null;
    measuring(false);
  }

  function cancel() {
    const at = LONG_SIZES.find((T) => !done(T));
    stop();
    progress.textContent = `Stopped${at ? ` at T = ${at.toLocaleString('en')}` : ''}. What was measured stays; `
      + '\u201cMeasure long sequences\u201d starts again from the shortest.';
  }

  const done = (T) => METHODS.every((method) => results[T]?.[method]) && (workers === 0 || results[T]?.workers);

  async function start() {
    stop();
    const current = { stopped: false, worker: null, pool: null };
    run = current;
    results = {};
    workers = 0;
    measuring(true);
    charts.hidden = false;
    table.hidden = false;
    progress.textContent = `Measuring T = ${LONG_SIZES[0]}\u2026`;
    draw();
    try {
      const measureOne = await oneCore(current);
      if (cores > 1 && current.worker) current.pool = await startPool(current);
      workers = current.pool?.size ?? 0;
      for (const T of LONG_SIZES) {
        await measureOne(T);
        if (current.stopped) return;
        if (current.pool) {
          progress.textContent = `Measuring T = ${T.toLocaleString('en')} on ${workers} workers\u2026`;
          await measureOnWorkers({ pool: current.pool, T, post: heard });
        }
        if (current.stopped) return;
      }
      stop();
      progress.textContent = `Done. The times vary from run to run; the growth from one T to the next is what to read.${speedUp()}`;
    } catch (error) {
      if (current.stopped) return; // stopped on purpose: the workers' calls fail
      stop();
      progress.textContent = `The measurement stopped: ${error.message}`;
    }
  }

  // measureOne(T) for the one-core measurements: in a worker, or where none
  // starts, on the page.
  async function oneCore(current) {
    let worker;
    try {
      worker = new view.Worker(new URL('../lib/long-sequence-worker.js', import.meta.url), { type: 'module' });
    } catch {
      return onPage(current);
    }
    current.worker = worker;
    let pending = null; // { resolve, reject } of the size being measured
    let answered = false;
    worker.addEventListener('message', (event) => {
      answered = true;
      const message = event.data;
      if (message.type === 'done') pending?.resolve();
      else if (message.type === 'error') pending?.reject(new Error(message.message));
      else heard(message);
    });
    const started = new Promise((resolve) => {
      // A worker that fails before it answers never started (its script
      // could not load): the page measures instead.
      worker.addEventListener('error', () => {
        if (!answered) resolve(false);
        else pending?.reject(new Error('its worker stopped'));
      });
      worker.addEventListener('message', () => resolve(true), { once: true });
    });
    const measureOne = (T) => new Promise((resolve, reject) => {
      pending = { resolve, reject };
      worker.postMessage({ type: 'measure', sizes: [T] });
    });
    const first = measureOne(LONG_SIZES[0]);
    if (!await started) {
      worker.terminate();
      current.worker = null;
      return onPage(current);
    }
    await first;
    return (T) => (T === LONG_SIZES[0] ? first : measureOne(T));
  }

  function onPage(current) {
    onPageNote.hidden = false;
    const nextFrame = () => new Promise((resolve) => view.requestAnimationFrame(() => view.setTimeout(resolve, 0)));
    return (T) => new Promise((resolve, reject) => measurePageEngine({
      sizes: [T],
      stopped: () => current.stopped,
      pause: nextFrame,
      post: (message) => {
        if (current.stopped) return;
        if (message.type === 'done') resolve();
        else if (message.type === 'error') reject(new Error(message.message));
        else heard(message);
      },
    }));
  }

  // The pool of one worker per core, or null (and a note) where it cannot start.
  async function startPool(current) {
    try {
      const wasmBinary = await pageEngineBytes();
      const spawn = () => new view.Worker(new URL('../lib/attention-worker.js', import.meta.url), { type: 'module' });
      const pool = await createAttentionPool({ size: cores, spawn, wasmBinary });
      if (current.stopped) pool.close();
      return pool;
    } catch (error) {
      if (!current.stopped) progress.textContent = `The workers for ${cores} cores could not start (${error.message}); measuring on one core only.`;
      return null;
    }
  }

  function heard(message) {
    if (message.kernel) {
      const what = KERNELS[message.kernel];
      kernelLine.textContent = `This browser runs the engine\u2019s float32 kernel ${message.kernel}${what ? `: ${what}` : ''}.`;
      kernelLine.hidden = false;
    }
    if (message.workers) results[message.T] = { ...results[message.T], workers: message };
    else results[message.T] = { ...results[message.T], [message.method]: message };
    const T = LONG_SIZES.find((size) => !done(size));
    if (T) progress.textContent = `Measuring T = ${T.toLocaleString('en')}\u2026`;
    draw();
  }

  // How much faster the workers were at the longest T measured both ways.
  function speedUp() {
    const T = LONG_SIZES.filter((size) => results[size]?.workers && results[size]?.online?.type === 'row').at(-1);
    if (!T) return '';
    const one = results[T].online.ms;
    const many = results[T].workers.ms;
    return ` At T = ${T.toLocaleString('en')}, online attention took ${figure(one)} ms on one core and ${figure(many)} ms on ${workers} workers: `
      + `${(one / many).toFixed(2)}\u00d7 as fast.`;
  }

  function draw() {
    const points = (method, key) => LONG_SIZES.filter((T) => results[T]?.[method]?.type === 'row').map((T) => [T, key(results[T][method])]);
    const series = (key) => METHODS.map((method) => ({
      label: LABELS[method],
      dashed: method === 'linear',
      none: 'not measured yet',
      points: points(method, key),
    }));
    const parallel = workers > 0 ? [{ label: workersLabel(workers), none: 'not measured yet', points: points('workers', (row) => row.ms) }] : [];
    timeChart.update([...series((row) => row.ms), ...parallel], LONG_SIZES.at(-1));
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
    const parallelCells = (T) => {
      const row = results[T]?.workers;
      const one = results[T]?.online;
      return [make('td', '', row ? figure(row.ms) : ''), make('td', '', row && one ? `${(one.ms / row.ms).toFixed(2)}\u00d7` : '')];
    };
    const rows = LONG_SIZES.filter((T) => results[T]).map((T) => {
      const tr = make('tr');
      tr.dataset.t = String(T);
      const th = make('th', '', T.toLocaleString('en'));
      th.scope = 'row';
      tr.append(th, ...METHODS.flatMap((method) => cells(T, method)), ...(workers > 0 ? parallelCells(T) : []));
      return tr;
    });
    const headers = ['T', 'full: ms', 'full: MB', 'online: ms', 'online: MB', 'linear: ms', 'linear: MB'];
    if (workers > 0) headers.push(`online, ${workers} workers: ms`, 'as fast as one core');
    table.replaceChildren(dataTable(make, headers, rows));
  }

  return {
    destroy() {
      stop();
      panel.remove();
    },
  };
}
