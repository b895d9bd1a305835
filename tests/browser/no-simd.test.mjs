// Browsers without WebAssembly SIMD (Safari before 16.4, the older iPads of
// school labs) get the engine's scalar build and the same numbers; browsers
// with WebAssembly off (Safari's Lockdown Mode) get the walkthrough as the
// native engine built it and one plain sentence where each other figure
// would be, and the chapters' explanations still read. Both are
// made here by changing the page's WebAssembly before any script runs.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSession } from './harness.mjs';
import { WASM_OFF_MESSAGE } from '../../web/lib/attention.js';

let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

// WebAssembly.validate says no to every module that uses SIMD: the probe's
// bytes, here, which is all the page asks.
function withoutSimd() {
  const validate = WebAssembly.validate.bind(WebAssembly);
  WebAssembly.validate = (bytes) => {
    const view = new Uint8Array(ArrayBuffer.isView(bytes) ? bytes.buffer : bytes);
    return !view.includes(253) && validate(bytes); // 0xfd: the SIMD opcodes' prefix
  };
}

function withoutWasm() {
  delete globalThis.WebAssembly;
}

async function openWith(init, path) {
  const page = await session.newPage();
  const engines = [];
  page.on('request', (request) => {
    const name = new URL(request.url()).pathname.split('/').pop();
    if (name.endsWith('.wasm') && request.resourceType() !== 'other') engines.push(name);
    else if (name.endsWith('.wasm')) engines.push(name);
  });
  await page.addInitScript(init);
  await page.goto(session.url(path));
  return { page, engines };
}

test('without SIMD the page runs the scalar engine and shows the same numbers', async () => {
  const { page, engines } = await openWith(withoutSimd, 'index.html?preset=cat-sat-mat&step=3');
  await page.waitForSelector('html[data-ready="true"]');
  assert.ok(engines.includes('attention-page-scalar.wasm'), `fetched ${engines.join(', ')}`);
  // s[sat, mat] = 0.3·0.6 + 0.9·0.2 + 0.1·0.7 + 0.4·0.3 = 0.55, as with SIMD.
  const score = page.locator('#walkthrough .aw-mats [data-matrix="scores"] td[data-row="1"][data-col="2"]');
  // The step computes it: its number shows once the step's figure has landed.
  await page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
  assert.equal((await score.textContent()).trim(), '0.550');
  // The sections that lean on speed say they run slower here.
  await page.locator('#efficient-widget').scrollIntoViewIfNeeded();
  await page.waitForSelector('#efficient-widget[data-mounted="true"]');
  assert.match(await page.locator('#efficient .aw-engine-note').textContent(), /runs slower in this browser/);
  await page.close();
  session.assertQuiet();
});

test('with WebAssembly off each chapter says so plainly where its figure would be, and the walkthrough reads from the build', async () => {
  const { page } = await openWith(withoutWasm, 'index.html');
  await page.waitForSelector('html[data-ready="unable"]');
  const others = '.widget-slot:not(#walkthrough-widget)';
  const messages = await page.locator(`${others} .aw-failure`).allTextContents();
  assert.equal(messages.length, await page.locator(others).count(), 'one message per section');
  for (const text of messages) assert.match(text, /^This browser has WebAssembly turned off/);
  // The walkthrough shows its first step, built by the native engine (tests/browser/built-walkthrough.test.mjs).
  assert.equal(await page.locator('#walkthrough .aw-step-title').textContent(), '1. Queries, keys and values');
  assert.doesNotMatch(await page.textContent('body'), /is not defined|TypeError|ReferenceError/);
  // The chapters' own words are still there to read.
  assert.ok((await page.locator('.section-intro').first().textContent()).length > 20);
  await page.close();
  session.assertQuiet();
});

// The embedded walkthrough reads from the build there (tests/browser/embed-built.test.mjs).
test('an embedded chapter says the same where WebAssembly is off', async () => {
  const { page } = await openWith(withoutWasm, 'embed.html?widget=plane');
  await page.waitForSelector('.aw-failure');
  assert.equal(await page.locator('.aw-failure').textContent(), WASM_OFF_MESSAGE);
  await page.close();
  session.assertQuiet();
});
