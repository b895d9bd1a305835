#!/usr/bin/env node
// The page's own figures, measured in Debian's chromium (part of `make bench`;
// figures, not a test): how soon the first heatmap is painted after
// navigation, how long an edit takes to reach the screen at the tutorials'
// size and at the editor's largest, and how many bytes the page transfers
// (gzipped by scripts/serve.mjs). Medians of several runs.
//
//   node bench/page.mjs          (after `make wasm vendor`)

import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../scripts/serve.mjs';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../tests/browser/harness.mjs';

const WEB = fileURLToPath(new URL('../web/', import.meta.url));
const RUNS = 7;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function firstFigure(browser, url) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (!document.querySelector('#walkthrough .aw-heat-cell')) return;
      observer.disconnect();
      requestAnimationFrame(() => { window.firstFigure = performance.now(); });
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(url);
  await page.waitForSelector('html[data-ready="true"]');
  const figures = await page.evaluate(() => {
    const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
    return { first: window.firstFigure, bytes: entries.reduce((sum, entry) => sum + entry.transferSize, 0) };
  });
  await page.close();
  return figures;
}

// Milliseconds from a cell edit to the next frame, median of RUNS edits.
async function editToFrame(page) {
  const times = [];
  for (let k = 0; k < RUNS; k++) {
    times.push(await page.evaluate(async (value) => {
      const input = document.querySelector('#walkthrough .aw-cell-input');
      const start = performance.now();
      input.value = String(value);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      input.dispatchEvent(new Event('change', { bubbles: true }));
      await new Promise((resolve) => requestAnimationFrame(resolve));
      return performance.now() - start;
    }, 0.1 * (k + 1)));
  }
  return median(times);
}

// Frame intervals while the trainer trains in its worker: the page should
// keep drawing at 60 fps (16.7 ms a frame) while the engine trains.
async function framesWhileTraining(browser, url) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${url}#trainer`);
  await page.waitForSelector('#trainer-widget[data-mounted="true"]');
  await page.waitForFunction(() => /^Step 0 /.test(document.querySelector('#trainer .aw-trainer-status')?.textContent ?? ''));
  await page.selectOption('#trainer [data-control="task"] select', 'induction');
  await page.waitForFunction(() => /^Step 0 \(budget 300\)/.test(document.querySelector('#trainer .aw-trainer-status')?.textContent ?? ''));
  await page.click('#trainer .aw-train');
  const intervals = await page.evaluate(() => new Promise((resolve) => {
    const times = [];
    const tick = (time) => {
      times.push(time);
      if (time - times[0] < 3000) requestAnimationFrame(tick);
      else resolve(times.slice(1).map((t, i) => t - times[i]));
    };
    requestAnimationFrame(tick);
  }));
  const steps = await page.textContent('#trainer .aw-trainer-status');
  await page.close();
  const sorted = [...intervals].sort((a, b) => a - b);
  return { median: median(intervals), p95: sorted[Math.floor(0.95 * sorted.length)], steps: steps.match(/^Step (\d+)/)[1] };
}

async function setSize(page, label, value) {
  const field = page.locator('#walkthrough label.aw-size').filter({ hasText: label }).first().locator('input');
  await field.fill(String(value));
  await field.dispatchEvent('change');
}

const server = await startServer({ root: WEB, port: 0 });
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] });
try {
  const url = `${server.url}index.html?preset=cat-sat-mat`;
  const loads = [];
  for (let k = 0; k < RUNS; k++) loads.push(await firstFigure(browser, url));
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(`${server.url}index.html?preset=cat-sat-mat&step=14`);
  await page.waitForSelector('html[data-ready="true"]');
  const small = await editToFrame(page);
  await setSize(page, 'Tokens (T)', 12);
  await setSize(page, 'd_k', 16);
  await setSize(page, 'd_v', 16);
  const large = await editToFrame(page);
  await page.close();
  const frames = await framesWhileTraining(browser, `${server.url}index.html`);
  const rows = [
    ['first heatmap painted after navigation', `${median(loads.map((l) => l.first)).toFixed(0)} ms`, '≤ 300 ms'],
    ['edit → next frame, 3 tokens × d 4', `${small.toFixed(1)} ms`, '≤ 16 ms'],
    ['edit → next frame, 12 tokens × d 16 (the editor\u2019s largest)', `${large.toFixed(1)} ms`, '≤ 50 ms'],
    ['the page\u2019s transfer, gzip (page, engine, KaTeX, fonts used)', `${(median(loads.map((l) => l.bytes)) / 1024).toFixed(0)} KB`, '≤ 250 KB'],
    [`frames while "induction" trains (${frames.steps} steps in 3 s), median`, `${frames.median.toFixed(1)} ms`, '16.7 ms'],
    ['the same, 95th percentile', `${frames.p95.toFixed(1)} ms`, '16.7 ms'],
  ];
  console.log(`The page, in chromium, medians of ${RUNS}:`);
  for (const [what, value, target] of rows) console.log(`  ${what.padEnd(62)} ${value.padStart(9)}   (target ${target})`);
} finally {
  await browser.close();
  await server.close();
}
