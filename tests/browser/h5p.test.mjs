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

before(async () => {
  assert.ok(existsSync(PACKAGE), 'build/attention-walkthrough.h5p: run `make h5p` first');
  session = await startSession({ viewport: { width: 1280, height: 720 } });
  host = await startHost(session, {
    'index.html': `<!doctype html><html lang="en"><title>A course in an LMS</title>
<body><h1>Week 3: attention</h1><div id="h5p"></div>
<script src="player/main.bundle.js"></script>
<script>
  new H5PStandalone.H5P(document.getElementById('h5p'), {
    h5pJsonPath: 'content', frameJs: 'player/frame.bundle.js', frameCss: 'player/styles/h5p.css',
  });
</script></body></html>`,
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
