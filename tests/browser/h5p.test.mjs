// build/attention-walkthrough.h5p (`make h5p`) played by h5p-standalone, an
// H5P player without a server, on a host of its own: the package unzipped
// as an LMS would, the walkthrough shows in H5P's iframe, steps by its
// buttons and by keys, keeps its keys from the host's handlers, and H5P
// sizes the iframe to it. No request fails or leaves the host.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, startHost, startSession } from './harness.mjs';

const PACKAGE = join(REPO, 'build', 'attention-walkthrough.h5p');
const PLAYER = join(REPO, 'node_modules', 'h5p-standalone', 'dist');
let session;
let host;

// The LMS page: h5p-standalone playing the package, every xAPI statement
// H5P's dispatcher sends kept in window.statements.
const player = (options) => `<!doctype html><html lang="en"><title>A course in an LMS</title>
<body><h1>Week 3: attention</h1><div id="h5p"></div>
<script src="player/main.bundle.js"></script>
<script>
  window.statements = [];
  new H5PStandalone.H5P(document.getElementById('h5p'), {
    h5pJsonPath: 'content', frameJs: 'player/frame.bundle.js', frameCss: 'player/styles/h5p.css', ${options}
  }).then(() => H5P.externalDispatcher.on('xAPI', (event) => window.statements.push(event.data.statement)));
</script></body></html>`;

// cat sat mat: the score of cat against cat, q_cat · k_cat.
const CAT = [1, 0.5, 0.2, 0.8];
const SCORE = CAT.reduce((sum, x) => sum + x * x, 0);
const SAVED = { exercises: [{ matrix: 'scores', row: 0, col: 0, state: 'right', response: SCORE.toFixed(2) }] };

before(async () => {
  assert.ok(existsSync(PACKAGE), 'build/attention-walkthrough.h5p: run `make h5p` first');
  session = await startSession({ viewport: { width: 1280, height: 720 } });
  host = await startHost(session, {
    'index.html': player(''),
    // A learner back in the course: the LMS hands the state it saved.
    'resume.html': player(`contentUserData: [{ state: ${JSON.stringify(JSON.stringify(SAVED))} }], saveFreq: 30,`),
  });
  await mkdir(join(host.dir, 'content'));
  execFileSync('unzip', ['-q', PACKAGE, '-d', join(host.dir, 'content')]);
  await cp(PLAYER, join(host.dir, 'player'), { recursive: true });
});

after(async () => {
  await host?.close();
  await session?.close();
});

test('the H5P package shows the walkthrough, steps by button and key, keeps its keys, and is sized to it', async () => {
  const page = await session.newPage();
  const failed = [];
  page.on('requestfailed', (request) => failed.push(request.url()));
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  await page.goto(host.url('index.html'));
  const frame = page.frameLocator('iframe.h5p-iframe');
  const element = frame.locator('attention-walkthrough');
  await frame.locator('attention-walkthrough[data-ready="true"]').waitFor();
  const counter = element.locator('.aw-counter');
  assert.match(await counter.textContent(), /^1 \/ \d+$/);
  assert.equal(await element.locator('.aw-root').getAttribute('data-aw-layout'), 'compact');

  await element.getByRole('button', { name: 'Step forward' }).click();
  assert.match(await counter.textContent(), /^2 \/ \d+$/);

  // The host frame's own key handlers (H5P's, a course's) see none of the widget's keys.
  const iframe = await (await page.$('iframe.h5p-iframe')).contentFrame();
  await iframe.evaluate(() => {
    window.hostKeys = [];
    document.addEventListener('keydown', (event) => window.hostKeys.push(event.key));
  });
  await element.locator('.aw-scrubber').focus();
  await page.keyboard.press('ArrowRight');
  assert.match(await counter.textContent(), /^3 \/ \d+$/);
  assert.deepEqual(await iframe.evaluate(() => window.hostKeys), []);

  // H5P makes its iframe as tall as the content: the whole widget shows.
  await page.waitForFunction(() => {
    const box = document.querySelector('iframe.h5p-iframe');
    const inner = box?.contentDocument.querySelector('attention-walkthrough');
    return inner && box.getBoundingClientRect().height >= inner.getBoundingClientRect().height;
  });
  assert.deepEqual(failed, [], 'no request failed');
  session.assertQuiet();
  if (process.env.H5P_SCREENSHOT) await page.screenshot({ path: process.env.H5P_SCREENSHOT, fullPage: true });
  await page.close();
});

test('H5P\u2019s editor offers the walkthrough\u2019s examples as a list of their titles', async () => {
  const semantics = JSON.parse(await readFile(join(host.dir, 'content', 'H5P.AttentionWalkthrough-0.1', 'semantics.json'), 'utf8'));
  const { presets } = JSON.parse(await readFile(join(REPO, 'web', 'presets.json'), 'utf8'));
  const field = semantics.find(({ name }) => name === 'preset');
  assert.equal(field.type, 'select');
  assert.equal(field.default, 'cat-sat-mat');
  const titles = Object.fromEntries(presets.map(({ id, title }) => [id, title]));
  for (const { value, label } of field.options) assert.equal(label, titles[value], `the option ${value}`);
  const offered = field.options.map(({ value }) => value);
  assert.ok(offered.includes('it-animal') && offered.includes('three-tokens'));
  // The multi-head shapes presets (8 and 4 heads) open in their own section, not the walkthrough.
  assert.ok(!offered.includes('shapes-512-8') && !offered.includes('shapes-128-4'));
});

// The content inside H5P's iframe, and H5P.instances[0] there.
async function openPlayer(page, file) {
  await page.goto(host.url(file));
  const frame = page.frameLocator('iframe.h5p-iframe');
  await frame.locator('attention-walkthrough[data-ready="true"]').waitFor();
  const inner = await (await page.$('iframe.h5p-iframe')).contentFrame();
  return { frame, instance: (call) => inner.evaluate((name) => window.H5P.instances[0][name](), call) };
}

test('H5P grades Your turn: the score, the answered statement through its dispatcher, the saved state', async () => {
  const page = await session.newPage();
  const { frame, instance } = await openPlayer(page, 'index.html');
  assert.equal(await instance('getMaxScore'), 3, 'a score, a weight and an output');
  assert.equal(await instance('getAnswerGiven'), false);
  const score = frame.locator('input[data-exercise][data-matrix="scores"]');
  while (!(await score.isVisible())) await frame.getByRole('button', { name: 'Step forward' }).click();
  await score.click();
  await page.keyboard.type(SCORE.toFixed(2));
  await page.keyboard.press('Enter');
  await frame.locator('.aw-exercise[data-state="right"]').waitFor();
  await page.waitForFunction(() => window.statements.some((s) => s.verb.id.endsWith('/answered')));
  const answered = (await page.evaluate(() => window.statements)).find((s) => s.verb.id.endsWith('/answered'));
  assert.equal(answered.verb.id, 'http://adlnet.gov/expapi/verbs/answered');
  assert.deepEqual(answered.result.score, { raw: 1, min: 0, max: 1, scaled: 1 });
  assert.equal(answered.result.success, true);
  assert.equal(answered.result.response, SCORE.toFixed(2));
  assert.ok(answered.actor, 'H5P adds the learner');
  assert.equal(await instance('getScore'), 1);
  assert.equal(await instance('getAnswerGiven'), true);
  assert.deepEqual(await instance('getCurrentState'), SAVED);
  await instance('showSolutions');
  assert.equal(await instance('getScore'), 1, 'the values shown score nothing');
  await instance('resetTask');
  assert.equal(await instance('getScore'), 0);
  assert.equal(await instance('getAnswerGiven'), false);
  await page.close();
});

test('H5P brings a learner\u2019s saved answers back from previousState', async () => {
  const page = await session.newPage();
  const { frame, instance } = await openPlayer(page, 'resume.html');
  assert.equal(await instance('getScore'), 1);
  assert.deepEqual(await instance('getCurrentState'), SAVED);
  const box = frame.locator('.aw-exercise');
  while (!(await box.isVisible())) await frame.getByRole('button', { name: 'Step forward' }).click();
  assert.equal(await box.getAttribute('data-state'), 'right');
  assert.equal(await frame.locator('input[data-exercise]').inputValue(), SCORE.toFixed(2));
  await page.close();
});
