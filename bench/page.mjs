#!/usr/bin/env node
// The page's own figures, measured in the three engines learners use (part
// of `make bench`; figures, not a test): Debian's chromium, Firefox ESR and
// WebKitGTK, through tests/engines/drivers.mjs. How soon the walkthrough's
// first step figure is painted after navigation, how long a key typed into
// a Q cell takes to reach the screen at the tutorials' size and at the
// editor's largest (bench/page-timing.mjs), how many bytes the page
// transfers (gzipped by scripts/serve.mjs), the frames while the trainer
// trains, and online attention at T = 16,384 on one worker and on one per
// core (web/lib/parallel.js). Medians of several runs, printed side by side.
//
//   node bench/page.mjs                    (after `make wasm vendor`)
//   ENGINE=webkit node bench/page.mjs      (one engine, or a list: chromium,firefox)

import { ENGINES, launch, serveWeb } from '../tests/engines/drivers.mjs';
import { FIRST_FIGURE, firstFigure, keyToFrame } from './page-timing.mjs';

const RUNS = 7;
const TRAIN_MS = 3000;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const engines = (process.env.ENGINE ?? ENGINES.join(',')).split(',').map((name) => name.trim());

const ready = () => document.documentElement.dataset.ready === 'true';

const setSize = (browser, label, value) => browser.evaluate(([name, size]) => {
  const field = [...document.querySelectorAll('#walkthrough label.aw-size')].find((l) => l.textContent.includes(name)).querySelector('input');
  field.value = String(size);
  field.dispatchEvent(new Event('input', { bubbles: true }));
  field.dispatchEvent(new Event('change', { bubbles: true }));
}, [label, value]);

// Frame intervals while the trainer trains in its worker: the page should
// keep drawing at 60 fps (16.7 ms a frame) while the engine trains.
async function framesWhileTraining(browser, url) {
  await browser.goto(`${url}#trainer`);
  await browser.waitFor(() => document.querySelector('#trainer-widget')?.dataset.mounted === 'true');
  await browser.waitFor(() => /^Step 0 /.test(document.querySelector('#trainer .aw-trainer-status')?.textContent ?? ''));
  await browser.evaluate(() => {
    const select = document.querySelector('#trainer [data-control="task"] select');
    select.value = 'induction';
    select.dispatchEvent(new Event('input', { bubbles: true }));
    select.dispatchEvent(new Event('change', { bubbles: true }));
  });
  await browser.waitFor(() => /^Step 0 \(budget 300\)/.test(document.querySelector('#trainer .aw-trainer-status')?.textContent ?? ''));
  await browser.click('#trainer .aw-train');
  const intervals = await browser.evaluate((ms) => new Promise((resolve) => {
    const times = [];
    const tick = (time) => {
      times.push(time);
      if (time - times[0] < ms) requestAnimationFrame(tick);
      else resolve(times.slice(1).map((t, i) => t - times[i]));
    };
    requestAnimationFrame(tick);
  }), TRAIN_MS);
  const steps = (await browser.text('#trainer .aw-trainer-status')).match(/^Step (\d+)/)[1];
  const sorted = [...intervals].sort((a, b) => a - b);
  return { median: median(intervals), p95: sorted[Math.floor(0.95 * sorted.length)], steps };
}

// Online attention at LONG_T through parallel.js's pool, on one worker and
// on one per core (the same path both ways), the fastest of WORKER_RUNS
// measurements each: { one, many, workers } in ms.
const LONG_T = 16384;
const WORKER_RUNS = 3;
async function onWorkers(browser, url) {
  await browser.goto(url);
  await browser.waitFor(ready);
  return browser.evaluate(async ([T, runs]) => {
    const { createAttentionPool, workerCount } = await import('./lib/parallel.js');
    const { measureOnWorkers, pageEngineBytes } = await import('./lib/long-sequences.js');
    const wasmBinary = await pageEngineBytes();
    const spawn = () => new Worker(new URL('lib/attention-worker.js', document.baseURI), { type: 'module' });
    const fastest = async (size) => {
      const pool = await createAttentionPool({ size, spawn, wasmBinary });
      let best = Infinity;
      for (let k = 0; k < runs; k++) await measureOnWorkers({ pool, T,
          post: ({ ms }) => { best = Math.min(best, ms); } });
      pool.close();
      return best;
    };
    const workers = workerCount();
    return { one: await fastest(1), many: await fastest(workers), workers };
  }, [LONG_T, WORKER_RUNS]);
}

async function measure(engine, server) {
  const browser = await launch(engine, { viewport: { width: 1440, height: 900 } });
  try {
    const url = server.url('index.html?preset=cat-sat-mat');
    const loads = [];
    for (let k = 0; k < RUNS; k++) loads.push(await firstFigure(browser, url));
    await browser.goto(server.url('index.html?preset=cat-sat-mat&step=14'));
    await browser.waitFor(ready);
    const small = (await keyToFrame(browser, RUNS)).median;
    await setSize(browser, 'Tokens (T)', 12);
    await setSize(browser, 'd_k', 16);
    await setSize(browser, 'd_v', 16);
    const large = (await keyToFrame(browser, RUNS)).median;
    const frames = await framesWhileTraining(browser, server.url('index.html'));
    const long = await onWorkers(browser, server.url('index.html'));
    const bytes = median(loads.map((l) => l.bytes));
    return {
      version: browser.version,
      values: [
        `${median(loads.map((l) => l.first)).toFixed(0)} ms`,
        `${small.toFixed(1)} ms`,
        `${large.toFixed(1)} ms`,
        // WebKit reports no transfer sizes (0): nothing measured, not nothing sent.
        bytes > 0 ? `${(bytes / 1024).toFixed(0)} KB` : 'n/a',
        `${frames.median.toFixed(1)} ms`,
        `${frames.p95.toFixed(1)} ms`,
        frames.steps,
        `${long.one.toFixed(0)} ms`,
        `${long.many.toFixed(0)} ms on ${long.workers}`,
        `${(long.one / long.many).toFixed(2)}\u00d7`,
      ],
    };
  } finally {
    await browser.close();
  }
}

const ROWS = [
  ['first step figure painted after navigation', '≤ 250 ms'],
  ['key in a Q cell → next painted frame, 3 tokens × d 4', '≤ 16 ms'],
  ['the same, 12 tokens × d 16 (the editor\u2019s largest)', '≤ 25 ms'],
  ['the page\u2019s transfer, gzip (page, engine, KaTeX, fonts used)', '≤ 250 KB'],
  [`frames while "induction" trains ${TRAIN_MS / 1000} s, median`, '16.7 ms'],
  ['the same, 95th percentile', '16.7 ms'],
  ['trainer steps in those seconds', ''],
  [`online attention, T = ${LONG_T.toLocaleString('en')}, d 32, one worker`, ''],
  ['the same on one worker per core (at most 8)', ''],
  ['as fast as one worker', '\u2265 1.7\u00d7 on 2'],
];

const server = await serveWeb({ inject: [FIRST_FIGURE] });
try {
  const results = [];
  for (const engine of engines) results.push(await measure(engine, server));
  const width = Math.max(...results.map((r) => r.version.length));
  console.log(`The page, medians of ${RUNS}:`);
  console.log(`  ${''.padEnd(62)} ${results.map((r) => r.version.padStart(width)).join(' ')}   target`);
  ROWS.forEach(([what, target], row) => {
    console.log(`  ${what.padEnd(62)} ${results.map((r) => r.values[row].padStart(width)).join(' ')}   ${target}`);
  });
} finally {
  await server.close();
}
