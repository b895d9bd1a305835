// The page in the engines learners use besides Chromium (which tests/browser/
// covers in full): Firefox ESR and WebKitGTK, Safari's engine, from Debian's
// packages, driven through tests/engines/drivers.mjs. The same checks in
// each, as a learner goes: the page starts with the engine's numbers and no
// error, the walkthrough's controls move the step, every section mounts as
// it is scrolled to, a link to a chapter lands on its heading (WebKit has no
// scroll anchoring), the embed renders, and so do a notebook cell and the
// one-file page from disk (their scripts unpacked by DecompressionStream).
//
//   make test-engines                                       (both engines)
//   ENGINE=webkit node --test tests/engines/engines.test.mjs  (one; or chromium)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO } from '../browser/harness.mjs';
import { ENGINES, launch, serveWeb } from './drivers.mjs';

const engines = (process.env.ENGINE ?? 'firefox,webkit').split(',').map((name) => name.trim());
for (const engine of engines) assert.ok(ENGINES.includes(engine), `ENGINE=${engine}: one of ${ENGINES.join(', ')}`);
const SINGLE_FILE = join(REPO, 'build', 'attention.html');
const NOTEBOOK_SCRIPT = join(REPO, 'web', 'dist', 'attention-notebook.js');
// s[sat, mat] = q_sat · k_mat = 0.3·0.6 + 0.9·0.2 + 0.1·0.7 + 0.4·0.3 = 0.55 (step 3 of cat-sat-mat: the other
// eight dot products).
const SCORE_CELL = '#walkthrough .aw-mats [data-matrix="scores"] td[data-row="1"][data-col="2"]';
const COUNTER = '#walkthrough .aw-counter';

let web;
let scratch;
// What ae.show() writes into a notebook's output cell, as a page of its own.
let notebookCell;
before(async () => {
  await stat(SINGLE_FILE).catch(() => {
    throw new Error('build/attention.html is missing: run `make single` first');
  });
  const script = await readFile(NOTEBOOK_SCRIPT, 'utf8').catch(() => {
    throw new Error('web/dist/attention-notebook.js is missing: run `make element` first');
  });
  scratch = await mkdtemp(join(tmpdir(), 'aw-engines-'));
  notebookCell = join(scratch, 'cell.html');
  await writeFile(notebookCell, '<!doctype html><html lang="en"><meta charset="utf-8"><title>A notebook</title>'
    + '<attention-walkthrough preset="cat-sat-mat" step="3" layout="full"></attention-walkthrough>'
    + `<script>${script}</script></html>`);
  web = await serveWeb();
});
after(async () => {
  await web?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const ready = () => document.documentElement.dataset.ready === 'true';
// A step's result shows its number once the figure's movement that computes
// it has landed (until then its cell is empty).
const landed = () => document.querySelector('#walkthrough .aw-fig:not([data-moving])') !== null;

for (const engine of engines) {
  describe(engine, () => {
    let browser;
    before(async () => {
      browser = await launch(engine);
    });
    after(() => browser?.close());

    const shownStep = async () => Number((await browser.text(COUNTER)).split(' / ')[0]);

    test(`in ${engine} the walkthrough starts with the engine's numbers and no error`, async () => {
      await browser.goto(web.url('index.html?preset=cat-sat-mat&step=3'));
      await browser.waitFor(ready, undefined, { what: 'the page to be ready' });
      await browser.waitFor(landed, undefined, { what: 'step 3\'s figure to land' });
      assert.equal((await browser.text(SCORE_CELL))?.trim(), '0.550');
      assert.match(await browser.text(COUNTER), /^3 \/ \d+$/);
      assert.deepEqual(await browser.problems(), [], `${browser.version}: the page stayed quiet`);
    });

    test(`in ${engine} Step forward and the scrubber's keys move the step`, async () => {
      await browser.goto(web.url('index.html?preset=cat-sat-mat&step=3'));
      await browser.waitFor(ready);
      const count = Number((await browser.text(COUNTER)).split(' / ')[1]);
      await browser.click('#walkthrough button[aria-label="Step forward"]');
      assert.equal(await shownStep(), 4);
      // The scrubber, reached by keyboard as a learner would: focused, then keys.
      await browser.evaluate(() => document.querySelector('#walkthrough .aw-scrubber').focus());
      await browser.press('Home');
      assert.equal(await shownStep(), 1);
      await browser.press('ArrowRight');
      await browser.press('ArrowRight');
      assert.equal(await shownStep(), 3);
      await browser.press('End');
      assert.equal(await shownStep(), count);
      assert.deepEqual(await browser.problems(), []);
    });

    test(`in ${engine} every section mounts when it is scrolled to`, async () => {
      await browser.goto(web.url('index.html'));
      await browser.waitFor(ready);
      const slots = await browser.evaluate(() => [...document.querySelectorAll('.page-section .widget-slot')].map((slot) => slot.id));
      assert.ok(slots.length >= 10, `${slots.length} sections`);
      for (const id of slots.filter((slot) => slot !== 'walkthrough-widget')) {
        await browser.evaluate((slot) => document.getElementById(slot).scrollIntoView({ block: 'center' }), id);
        await browser.waitFor((slot) => document.getElementById(slot).dataset.mounted === 'true', id, { what: `${id} to mount` });
      }
      await browser.waitFor(() => document.documentElement.dataset.sections === 'mounted');
      const failures = await browser.evaluate(() => [...document.querySelectorAll('.widget-slot .aw-failure')].map((node) => node.textContent));
      assert.deepEqual(failures, [], 'no section says it could not start');
      assert.deepEqual(await browser.problems(), []);
    });

    for (const id of ['trainer', 'multihead']) {
      test(`in ${engine} index.html#${id} lands on the heading of ${id}`, async () => {
        await browser.goto(web.url(`index.html#${id}`));
        // web/path.js sets html[data-landed] once the sections above have mounted and the heading is in place.
        await browser.waitFor((chapter) => document.documentElement.dataset.landed === chapter, id, { what: `the landing on ${id}` })
          .catch(async (error) => {
            // Where the page stopped, to tell a section that never mounted from a landing given up.
            const state = await browser.evaluate(() => ({
              scrollY: window.scrollY,
              unmounted: [...document.querySelectorAll('.page-section .widget-slot:not([data-mounted="true"])')].map((slot) => slot.id),
            }));
            throw new Error(`${error.message}: ${JSON.stringify(state)}`);
          });
        const off = await browser.evaluate((chapter) => {
          const section = document.getElementById(chapter);
          const heading = document.getElementById(`${chapter}-title`);
          return heading.getBoundingClientRect().top - Number.parseFloat(getComputedStyle(section).scrollMarginTop);
        }, id);
        assert.ok(Math.abs(off) <= 3, `the heading of ${id} is ${off.toFixed(1)} px from its place`);
        assert.deepEqual(await browser.problems(), []);
      });
    }

    test(`in ${engine} the embed shows the plane of scores`, async () => {
      await browser.goto(web.url('embed.html?widget=plane'));
      await browser.waitFor(ready);
      const hull = await browser.evaluate(() => document.querySelector('#embed .aw-plane-hull')?.getAttribute('points') ?? '');
      const points = hull.trim().split(/\s+/).map((pair) => pair.split(',').map(Number));
      assert.ok(points.length >= 3 && points.every((p) => p.length === 2 && p.every(Number.isFinite)), `hull points: ${hull}`);
      assert.deepEqual(await browser.problems(), []);
    });

    test(`in ${engine} a notebook cell from disk unpacks its script and shows the walkthrough's numbers`, async () => {
      await browser.goto(pathToFileURL(notebookCell).href);
      const score = () => {
        const element = document.querySelector('attention-walkthrough');
        const cell = element?.shadowRoot?.querySelector('[data-matrix="scores"] td[data-row="1"][data-col="2"]');
        // '·' until the figure's movement that computes it lands.
        const text = cell?.textContent.trim() ?? '';
        return element?.dataset.ready === 'true' && /\d/.test(text) && text;
      };
      assert.equal(await browser.waitFor(score, undefined, { what: 'the cell\'s step 3 to show its scores' }), '0.550');
      assert.deepEqual(await browser.problems(), []);
    });

    test(`in ${engine} the one-file page from disk shows the walkthrough's numbers`, async () => {
      await browser.goto(`${pathToFileURL(SINGLE_FILE).href}?preset=cat-sat-mat&step=3`);
      await browser.waitFor(ready, undefined, { what: 'the one-file page to be ready' });
      await browser.waitFor(landed, undefined, { what: 'step 3\'s figure to land' });
      assert.equal((await browser.text(SCORE_CELL))?.trim(), '0.550');
      assert.deepEqual(await browser.problems(), []);
    });
  });
}
