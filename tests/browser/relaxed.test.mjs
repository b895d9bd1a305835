// Chromium has WebAssembly's relaxed SIMD (since 114): the page fetches
// only the engine's relaxed-SIMD build, and the long-sequence measurement
// names the float32 kernel it ran. Where relaxed SIMD does not validate
// (made here by changing the page's WebAssembly.validate before any script
// runs), the page fetches only the SIMD build.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSession } from './harness.mjs';

let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

// WebAssembly.validate says no to every module holding f32x4.relaxed_madd's
// bytes (0xfd 0x85 0x02): the probe's, which is all the page asks.
function withoutRelaxedSimd() {
  const validate = WebAssembly.validate.bind(WebAssembly);
  WebAssembly.validate = (bytes) => {
    const view = new Uint8Array(ArrayBuffer.isView(bytes) ? bytes.buffer : bytes);
    const relaxed = view.some((byte, i) => byte === 0xfd && view[i + 1] === 0x85 && view[i + 2] === 0x02);
    return !relaxed && validate(bytes);
  };
}

// The page at index.html, ready, with the engine files it fetched (the
// page's and its workers').
async function openPage(init) {
  const page = await session.newPage();
  const engines = [];
  page.on('request', (request) => {
    const name = new URL(request.url()).pathname.split('/').pop();
    if (name.endsWith('.wasm')) engines.push(name);
  });
  if (init) await page.addInitScript(init);
  await page.goto(session.url('index.html?preset=cat-sat-mat&step=3'));
  await page.waitForSelector('html[data-ready="true"]');
  return { page, engines };
}

// Starts the long-sequence measurement and returns the line that names the
// kernel, once the first measurement has come in.
async function kernelLine(page) {
  await page.locator('#efficient-widget').scrollIntoViewIfNeeded();
  await page.waitForSelector('#efficient-widget[data-mounted="true"]');
  await page.getByRole('button', { name: 'Measure long sequences' }).click();
  const line = page.locator('#efficient .aw-long-kernel');
  await line.waitFor({ state: 'visible', timeout: 60000 });
  return line.textContent();
}

test('in chromium the page runs the relaxed-SIMD engine, and the long-sequence measurement names its fused multiply-add kernel', async () => {
  const { page, engines } = await openPage();
  assert.deepEqual(engines, ['attention-page-relaxed.wasm']);
  // s[sat, mat] = 0.3·0.6 + 0.9·0.2 + 0.1·0.7 + 0.4·0.3 = 0.55, as with SIMD.
  const score = page.locator('#walkthrough .aw-mats [data-matrix="scores"] td[data-row="1"][data-col="2"]');
  // The step computes it: its number shows once the step's figure has landed.
  await page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
  assert.equal((await score.textContent()).trim(), '0.550');
  assert.equal(await kernelLine(page), 'This browser runs the engine\u2019s float32 kernel wasm-relaxed-simd: WebAssembly relaxed '
    + 'SIMD, four numbers at a time, each multiply-add one fused instruction.');
  await page.close();
  session.assertQuiet();
});

test('where relaxed SIMD does not validate, the page runs the SIMD engine and shows the same numbers', async () => {
  session.clear();
  const { page, engines } = await openPage(withoutRelaxedSimd);
  assert.deepEqual(engines, ['attention-page.wasm']);
  const score = page.locator('#walkthrough .aw-mats [data-matrix="scores"] td[data-row="1"][data-col="2"]');
  // The step computes it: its number shows once the step's figure has landed.
  await page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
  assert.equal((await score.textContent()).trim(), '0.550');
  await page.close();
  session.assertQuiet();
});
