// The custom element where a bundler or a CDN put its script away from its
// engine and KaTeX: without help, the message names the URL it fetched;
// with a base attribute (or the class's assetBase) it finds them.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startSession } from './harness.mjs';

const SCRIPT = fileURLToPath(new URL('../../web/dist/attention-walkthrough.js', import.meta.url));
let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

/** A host page whose element script is served from /bundled/, where no engine is. */
async function hostWith(body) {
  const page = await session.newPage();
  const script = await readFile(SCRIPT, 'utf8');
  await page.route(session.url('bundled/app.js'), (route) => route.fulfill({ contentType: 'text/javascript', body: script }));
  await page.route(session.url('host.html'), (route) => route.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><title>host</title><script src="bundled/app.js"></script>\n${body}`,
  }));
  await page.goto(session.url('host.html'));
  return page;
}

test('an element whose script sits away from its engine says which URL it fetched', async () => {
  const page = await hostWith('<attention-walkthrough preset="cat-sat-mat"></attention-walkthrough>');
  const message = page.locator('attention-walkthrough .aw-failure');
  await message.waitFor();
  assert.equal(await message.textContent(),
    `The widget could not start: loadAttention: fetching ${session.url('bundled/attention-relaxed.wasm')} failed with HTTP 404`);
  await page.close();
});

test('the base attribute, or the class\u2019s assetBase, tells the element where its engine and KaTeX are', async () => {
  const page = await hostWith(`<attention-walkthrough base="${session.url('dist/')}" preset="cat-sat-mat" step="5"></attention-walkthrough>`);
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  await page.waitForSelector('attention-walkthrough .katex-html');
  assert.match(await page.textContent('attention-walkthrough .aw-counter'), /^5 \//);
  await page.close();

  const second = await hostWith('<script>addEventListener("DOMContentLoaded", () => {'
    + `customElements.get("attention-walkthrough").assetBase = ${JSON.stringify(session.url('dist/'))};`
    + 'document.body.insertAdjacentHTML("beforeend", \'<attention-walkthrough widget="masks"></attention-walkthrough>\'); });</script>');
  await second.waitForSelector('attention-walkthrough[data-ready="true"]');
  assert.ok(await second.locator('attention-walkthrough [data-section="masks"]').count() > 0);
  await second.close();
  session.clear();
});
