// web/dist/attention-anywidget.mjs through a host that implements
// anywidget's front-end module contract (fixtures/anywidget-host.js): the
// module comes from a blob: URL and fetches nothing; render mounts the
// widget its model's traits describe, follows the model's changes in the
// same view, sends the reader's steps back, and its cleanup leaves nothing.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseShown, startHost, startSession } from './harness.mjs';

let session;
let host;
let page;
const requests = [];

before(async () => {
  session = await startSession({ viewport: { width: 1280, height: 720 } });
  host = await startHost(session, {
    'index.html': '<!doctype html><html lang="en"><title>A notebook</title><body><div id="out1"></div><div id="out2"></div></body></html>',
    'host.js': await readFile(new URL('./fixtures/anywidget-host.js', import.meta.url), 'utf8'),
    'widget.mjs': await readFile(new URL('../../web/dist/attention-anywidget.mjs', import.meta.url), 'utf8'),
  });
  page = await session.newPage();
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(host.url('index.html'));
  await page.evaluate(async () => {
    const { createModel, loadModule } = await import('./host.js');
    const widget = await loadModule('./widget.mjs');
    const model = createModel({ widget: 'walkthrough', preset: 'cat-sat-mat', step: 4, values: null, layout: 'compact', controls: 'player', theme: 'light' });
    window.afm = { model, cleanups: ['out1', 'out2'].map((id) => widget.render({ model, el: document.getElementById(id) })) };
  });
});

after(async () => {
  await host?.close();
  await session?.close();
});

const counters = () => page.$$eval('attention-walkthrough', (elements) => elements.map((element) => element.shadowRoot.querySelector('.aw-counter')?.textContent ?? ''));
const waitForSteps = (step) => page.waitForFunction((n) => [...document.querySelectorAll('attention-walkthrough')]
  .every((element) => element.shadowRoot.querySelector('.aw-counter')?.textContent.startsWith(`${n} /`)), step);

test('render mounts the walkthrough the traits describe, in every view, from nothing but the module', async () => {
  await waitForSteps(4);
  assert.equal((await counters()).length, 2);
  const compact = await page.$$eval('attention-walkthrough', (elements) => elements.map((element) => element.shadowRoot.querySelector('.aw-root').dataset.awLayout));
  assert.deepEqual(compact, ['compact', 'compact']);
  // Only the page, the host and the module's text: the engine and styles were inside.
  assert.deepEqual(requests.filter((url) => !url.startsWith('blob:')).map((url) => new URL(url).pathname).sort(),
                   ['/host.js', '/index.html', '/widget.mjs']);
  session.assertQuiet();
});

test('a change of the model\u2019s step moves both views in place, without mounting them again', async () => {
  await page.evaluate(() => {
    for (const element of document.querySelectorAll('attention-walkthrough')) element.shadowRoot.querySelector('.aw-root').dataset.marked = 'yes';
    window.afm.model.hostSet('step', 6);
  });
  await waitForSteps(6);
  const marked = await page.$$eval('attention-walkthrough', (elements) => elements.map((element) => element.shadowRoot.querySelector('.aw-root').dataset.marked));
  assert.deepEqual(marked, ['yes', 'yes']);
});

test('a change of the theme redraws inside the same element', async () => {
  const before = await page.evaluate(() => { window.firstElement = document.querySelector('#out1 attention-walkthrough'); return true; });
  assert.ok(before);
  await page.evaluate(() => window.afm.model.hostSet('theme', 'dark'));
  await page.waitForFunction(() => document.querySelector('#out1 attention-walkthrough').shadowRoot.querySelector('.aw-root')?.dataset.awTheme === 'dark');
  assert.ok(await page.evaluate(() => window.firstElement === document.querySelector('#out1 attention-walkthrough')));
  await waitForSteps(6);
});

test('the reader\u2019s step goes back to the model, saved, and to the other view', async () => {
  const saves = await page.evaluate(() => window.afm.model.saved.length);
  await page.locator('#out1 attention-walkthrough').getByRole('button', { name: 'Step forward' }).click();
  await page.waitForFunction(() => window.afm.model.get('step') === 7);
  assert.equal(await page.evaluate(() => window.afm.model.saved.at(-1).step), 7);
  assert.ok(await page.evaluate(() => window.afm.model.saved.length) > saves);
  await waitForSteps(7);
  assert.equal(parseShown((await counters())[1].split('/')[0]), 7);
});

test('a step past the last shows the last, and the model says so', async () => {
  await page.evaluate(async () => {
    const { createModel, loadModule } = await import('./host.js');
    const widget = await loadModule('./widget.mjs');
    const el = document.createElement('div');
    el.id = 'out4';
    document.body.append(el);
    window.late = createModel({ widget: 'walkthrough', preset: 'cat-sat-mat', step: 999, values: null, layout: 'compact', controls: 'player', theme: 'light' });
    window.lateCleanup = widget.render({ model: window.late, el });
  });
  await page.waitForFunction(() => window.late.get('step') !== 999);
  const [shown, total] = (await page.textContent('#out4 attention-walkthrough .aw-counter')).split('/').map(parseShown);
  assert.equal(shown, total);
  assert.equal(await page.evaluate(() => window.late.get('step')), total);
  assert.equal(await page.evaluate(() => window.late.saved.at(-1).step), total);
  await page.evaluate(() => window.lateCleanup());
});

test('the widget trait mounts a section as well', async () => {
  await page.evaluate(async () => {
    const { createModel, loadModule } = await import('./host.js');
    const widget = await loadModule('./widget.mjs');
    const el = document.createElement('div');
    el.id = 'out3';
    document.body.append(el);
    window.planeCleanup = widget.render({ model: createModel({ widget: 'plane', controls: null, theme: 'light' }), el });
  });
  await page.waitForSelector('#out3 attention-walkthrough[data-ready="true"]');
  assert.equal(await page.locator('#out3 attention-walkthrough [data-section="plane"]').count(), 1);
  await page.evaluate(() => window.planeCleanup());
});

test('Your turn\u2019s score goes back to the model as score and max_score', async () => {
  await page.evaluate(() => window.afm.model.hostSet('exercises', 'scores:0:0'));
  const view = page.locator('#out1 attention-walkthrough');
  await view.getByRole('button', { name: 'Restart' }).click();
  const input = view.locator('input[data-exercise]');
  while (!(await input.isVisible())) await view.getByRole('button', { name: 'Step forward' }).click();
  await input.click();
  // cat sat mat: q_cat · k_cat
  await page.keyboard.type([1, 0.5, 0.2, 0.8].reduce((sum, x) => sum + x * x, 0).toFixed(2));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.afm.model.get('score') === 1);
  assert.equal(await page.evaluate(() => window.afm.model.get('max_score')), 1);
});

test('the cleanup render returns empties the view and stops listening to the model', async () => {
  const counts = await page.evaluate(() => {
    const before = window.afm.model.listenerCount();
    window.afm.cleanups[0]();
    return [before, window.afm.model.listenerCount(), document.querySelectorAll('#out1 *').length];
  });
  assert.equal(counts[0], 16, 'eight traits in each of two views');
  assert.deepEqual(counts.slice(1), [8, 0]);
  session.assertQuiet();
});
