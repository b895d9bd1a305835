// The example notebook (python/examples/walkthrough.ipynb) as `make
// test-python` leaves it: executed by Debian's jupyter nbconvert into
// build/python/walkthrough.html. Opened from disk in chromium, both
// walkthroughs that attention_explainer.show() put into it render and step,
// each on its own, with no network request: the engine, styles and presets
// are inside each cell's script, packed, which minds neither requirejs (the
// template loads it) nor the other cell's copy (the first unpacks the code
// for both).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, startSession } from '../browser/harness.mjs';

const NOTEBOOK = join(REPO, 'build', 'python', 'walkthrough.html');
let session;
const network = [];

before(async () => {
  assert.ok(existsSync(NOTEBOOK), 'build/python/walkthrough.html: run `make test-python`, which executes the notebook first');
  session = await startSession({ viewport: { width: 1280, height: 720 } });
  // The harness lets pages reach its server only; this page is a file, and
  // anything it asks of a network is recorded and refused.
  await session.context.unroute('**/*');
  await session.context.route('**/*', (route) => {
    const url = route.request().url();
    if (/^(file|data|blob|about):/.test(url)) return route.continue();
    network.push(url);
    return route.abort('blockedbyclient');
  });
});

after(async () => {
  await session?.close();
});

const counterOf = (page, index) => page.evaluate((i) => document.querySelectorAll('attention-walkthrough')[i]
  .shadowRoot.querySelector('.aw-counter').textContent, index);

test('the executed notebook shows two live walkthroughs that step on their own, with no network request', async () => {
  const page = await session.newPage();
  // Each cell carries the element's code packed; the scripts it unpacks to, as they run.
  await page.addInitScript(() => {
    window.unpacked = 0;
    new MutationObserver((records) => {
      for (const node of records.flatMap((record) => [...record.addedNodes])) {
        if (node.localName === 'script' && node.textContent.includes('customElements.define("attention-walkthrough"')) window.unpacked += 1;
      }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(pathToFileURL(NOTEBOOK).href);
  await page.waitForFunction(() => {
    const elements = document.querySelectorAll('attention-walkthrough');
    return elements.length === 2 && [...elements].every((element) => element.dataset.ready === 'true');
  });

  assert.match(await counterOf(page, 0), /^7 \/ \d+$/);
  assert.match(await counterOf(page, 1), /^2 \/ \d+$/);
  const second = await page.evaluate(() => document.querySelectorAll('attention-walkthrough')[1].widget.getState());
  assert.deepEqual([second.values.mode, second.values.fields, second.values.vector], ['softmax', { x: [[100, 95, 5, 3]] }, true]);
  // Each in the compact layout, the player only.
  const layouts = await page.$$eval('attention-walkthrough', (elements) => elements.map((element) => {
    const root = element.shadowRoot.querySelector('.aw-root');
    return [root.dataset.awLayout, root.dataset.awHide];
  }));
  assert.deepEqual(layouts.map(([layout]) => layout), ['compact', 'compact']);
  assert.ok(layouts.every(([, hidden]) => hidden.split(' ').includes('editor')));

  const first = page.locator('attention-walkthrough').first();
  await first.scrollIntoViewIfNeeded();
  await first.getByRole('button', { name: 'Step forward' }).click();
  assert.match(await counterOf(page, 0), /^8 \/ \d+$/);
  assert.match(await counterOf(page, 1), /^2 \/ \d+$/);
  await page.locator('attention-walkthrough').nth(1).getByRole('button', { name: 'Step forward' }).click();
  assert.match(await counterOf(page, 1), /^3 \/ \d+$/);

  assert.equal(await page.evaluate(() => window.unpacked), 1, 'the second cell used the code the first had unpacked');
  assert.deepEqual(network, [], 'nothing was fetched from a network');
  assert.deepEqual(session.pageErrors, [], 'no uncaught error');
  await page.close();
});
