// A strict Content-Security-Policy: scripts/serve.mjs sends it with every
// file, and the page (every section mounted), the embed of every widget and
// the custom element on a host page under the same policy run with no
// `securitypolicyviolation` at all (KaTeX's inline styles go through the
// CSSOM, embed.html's styles are a file). The embed's height messages go
// to the parent origin it is given. Another site may frame the embed, and
// not the page.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHost, startSession } from './harness.mjs';
import { CONTENT_SECURITY_POLICY, NO_FRAMING } from '../../scripts/serve.mjs';
import { WIDGETS } from '../../web/widgets/registry.js';

let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

/** A new page that records every CSP violation in window.violations. */
async function watchedPage() {
  const page = await session.newPage();
  await page.addInitScript(() => {
    window.violations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      window.violations.push(`${event.violatedDirective}: ${event.blockedURI || event.sample || 'inline'}`);
    });
  });
  return page;
}

const violations = (page) => page.evaluate(() => window.violations);

test('the server sends the strict policy with the page and its files, and frame-ancestors \'none\' with all but the embed', async () => {
  for (const path of ['index.html', '', 'app.js', 'lib/attention.wasm', 'style.css']) {
    const response = await fetch(session.url(path));
    assert.equal(response.headers.get('content-security-policy'), `${CONTENT_SECURITY_POLICY}; ${NO_FRAMING}`, path);
    await response.arrayBuffer();
  }
  const embed = await fetch(session.url('embed.html?widget=masks'));
  assert.equal(embed.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
  await embed.arrayBuffer();
  assert.equal(NO_FRAMING, "frame-ancestors 'none'");
  assert.match(CONTENT_SECURITY_POLICY, /style-src 'self';/);
  assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline/);
});

test('the page, every section mounted and the formulas typeset, breaks no rule of the policy', async () => {
  const page = await watchedPage();
  await page.goto(session.url('index.html?preset=cat-sat-mat&step=5'));
  await page.waitForSelector('html[data-ready="true"]');
  await session.mountSections(page);
  // KaTeX has typeset the step's formula (its spans carry their styles).
  await page.waitForSelector('#walkthrough .katex-html');
  const styled = await page.$$eval('#walkthrough .katex-html [style]', (nodes) => nodes.length);
  assert.ok(styled > 0, 'KaTeX\u2019s styles are on its elements, set through the CSSOM');
  assert.deepEqual(await violations(page), []);
  await page.close();
});

test('the embed of every widget breaks no rule of the policy', async () => {
  const page = await watchedPage();
  for (const widget of Object.keys(WIDGETS)) {
    await page.goto(session.url(`embed.html?widget=${widget}`));
    await page.waitForSelector('html[data-ready="true"]');
    assert.deepEqual(await violations(page), [], widget);
  }
  await page.close();
});

test('the custom element on a host page under the same policy breaks none of it', async () => {
  const page = await watchedPage();
  const hostUrl = session.url('csp-host.html');
  await page.route(hostUrl, (route) => route.fulfill({
    contentType: 'text/html',
    headers: { 'Content-Security-Policy': CONTENT_SECURITY_POLICY },
    body: '<!doctype html><title>host</title><script src="dist/attention-walkthrough.js"></script>\n'
      + '<attention-walkthrough preset="cat-sat-mat" step="5"></attention-walkthrough>',
  }));
  await page.goto(hostUrl);
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  await page.waitForSelector('attention-walkthrough .katex-html');
  assert.deepEqual(await violations(page), []);
  await page.close();
});

test('the embed sends its height to the parent origin it is given, and says so when parentOrigin is not an origin', async () => {
  const page = await session.newPage();
  const hostUrl = session.url('height-host.html');
  await page.route(hostUrl, (route) => route.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><title>host</title><script>window.heights = [];
      addEventListener('message', (event) => { if (event.data?.type === 'attention-embed:height') heights.push(event.data.height); });</script>
      <iframe src="embed.html?widget=masks&parentOrigin=${encodeURIComponent(session.origin)}" width="800" height="400"></iframe>`,
  }));
  await page.goto(hostUrl);
  await page.waitForFunction(() => window.heights.length > 0 && window.heights.at(-1) > 200);
  await page.goto(session.url('embed.html?widget=masks&parentOrigin=course.example'));
  await page.waitForSelector('html[data-ready="true"]');
  assert.match(await page.textContent('#embed'), /parentOrigin \u201ccourse\.example\u201d is not an origin such as https:\/\/course\.example/);
  await page.close();
});

test('a page on another site can frame the embed but not the page itself', async () => {
  const host = await startHost(session, {
    'frames.html': '<!doctype html><title>frames</title><script>window.loaded = [];</script>'
      + `<iframe id="page" src="${session.url('index.html')}" onload="loaded.push('page')" width="600" height="300"></iframe>`
      + `<iframe id="embed" src="${session.url('embed.html?widget=masks')}" onload="loaded.push('embed')" width="600" height="300"></iframe>`,
  });
  const page = await session.newPage();
  await page.goto(host.url('frames.html'));
  await page.waitForFunction(() => window.loaded.length === 2);
  const embed = await (await page.$('#embed')).contentFrame();
  await embed.waitForSelector('html[data-ready="true"]');
  // Chromium shows its own error page in place of a refused frame.
  const refused = await (await page.$('#page')).contentFrame();
  assert.equal(refused.url(), 'chrome-error://chromewebdata/');
  await page.close();
  await host.close();
});
