// scripts/serve.mjs over real HTTP (types, 404s, no way out of the root,
// no caching), and the vendored KaTeX typesetting in Chromium from the same
// origin with its own fonts, through the shared harness.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtemp, mkdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { startServer } from '../../scripts/serve.mjs';
import { WEB_ROOT, startSession } from './harness.mjs';

let dir;
let server;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-serve-'));
  const root = join(dir, 'root');
  await mkdir(join(root, 'sub'), { recursive: true });
  await writeFile(join(root, 'index.html'), '<!doctype html><title>root</title>');
  await writeFile(join(root, 'sub', 'index.html'), '<!doctype html><title>sub</title>');
  await writeFile(join(root, 'app.js'), 'export {};');
  await writeFile(join(root, 'mod.mjs'), 'export {};');
  await writeFile(join(root, 'data.json'), '{}');
  await writeFile(join(root, 'style.css'), 'body{}');
  await writeFile(join(root, 'engine.wasm'), Buffer.from([0, 97, 115, 109, 1, 0, 0, 0]));
  await writeFile(join(root, 'font.woff2'), 'x');
  await writeFile(join(root, 'image.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(root, 'image.png'), 'x');
  await writeFile(join(root, 'a file.txt'), 'spaced');
  await writeFile(join(dir, 'secret.txt'), 'outside the root');
  await symlink(join(dir, 'secret.txt'), join(root, 'link.txt'));
  server = await startServer({ root, port: 0 });
});

after(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

// A raw GET: the path goes out exactly as written (fetch would normalise ../).
function get(path, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('serves on 127.0.0.1 at a free port and prints a URL for it', () => {
  assert.equal(server.server.address().address, '127.0.0.1');
  assert.ok(server.port > 0);
  assert.equal(server.url, `http://127.0.0.1:${server.port}/`);
});

test('each file comes with its MIME type and Cache-Control: no-store', async () => {
  const types = {
    '/': 'text/html; charset=utf-8',
    '/sub/': 'text/html; charset=utf-8',
    '/app.js': 'text/javascript; charset=utf-8',
    '/mod.mjs': 'text/javascript; charset=utf-8',
    '/data.json': 'application/json; charset=utf-8',
    '/style.css': 'text/css; charset=utf-8',
    '/engine.wasm': 'application/wasm',
    '/font.woff2': 'font/woff2',
    '/image.svg': 'image/svg+xml',
    '/image.png': 'image/png',
    '/a%20file.txt': 'text/plain; charset=utf-8',
  };
  for (const [path, type] of Object.entries(types)) {
    const response = await get(path);
    assert.equal(response.status, 200, path);
    assert.equal(response.headers['content-type'], type, path);
    assert.equal(response.headers['cache-control'], 'no-store', path);
  }
  assert.equal((await get('/sub/')).body, '<!doctype html><title>sub</title>');
  assert.equal((await get('/a%20file.txt')).body, 'spaced');
  assert.equal((await get('/app.js?v=1#x')).status, 200, 'a query string is ignored');
});

// A GET with these headers, its body as bytes.
function raw(path, headers) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('text and the engine come gzipped to a client that accepts gzip, fonts and images as they are', async () => {
  for (const [path, text] of [['/app.js', 'export {};'], ['/style.css', 'body{}'], ['/data.json', '{}']]) {
    const zipped = await raw(path, { 'Accept-Encoding': 'gzip, deflate, br' });
    assert.equal(zipped.headers['content-encoding'], 'gzip', path);
    assert.equal(zipped.headers.vary, 'Accept-Encoding', path);
    assert.equal(gunzipSync(zipped.body).toString('utf8'), text, path);
    const plain = await raw(path, {});
    assert.equal(plain.headers['content-encoding'], undefined, path);
    assert.equal(plain.body.toString('utf8'), text, path);
  }
  const wasm = await raw('/engine.wasm', { 'Accept-Encoding': 'gzip' });
  assert.deepEqual([...gunzipSync(wasm.body)], [0, 97, 115, 109, 1, 0, 0, 0]);
  for (const path of ['/font.woff2', '/image.png']) {
    const response = await raw(path, { 'Accept-Encoding': 'gzip' });
    assert.equal(response.headers['content-encoding'], undefined, path);
    assert.equal(response.body.toString('utf8'), 'x', path);
  }
});

test('a file rebuilt while the server runs comes gzipped as it is now, not as it was', async () => {
  const path = join(dir, 'root', 'rebuilt.js');
  await writeFile(path, 'export const version = 1;');
  const first = await raw('/rebuilt.js', { 'Accept-Encoding': 'gzip' });
  assert.equal(gunzipSync(first.body).toString('utf8'), 'export const version = 1;');
  await writeFile(path, 'export const version = 2; // rebuilt');
  await utimes(path, new Date(), new Date(Date.now() + 5000));
  const second = await raw('/rebuilt.js', { 'Accept-Encoding': 'gzip' });
  assert.equal(gunzipSync(second.body).toString('utf8'), 'export const version = 2; // rebuilt');
  assert.equal(Number(second.headers['content-length']), second.body.length);
});

test('missing files are 404 and other methods 405', async () => {
  for (const path of ['/nope.js', '/sub/nope', '/%E0%A4%A']) {
    const response = await get(path);
    assert.equal(response.status, 404, path);
    assert.equal(response.headers['cache-control'], 'no-store');
  }
  assert.equal((await get('/', 'POST')).status, 405);
  const head = await get('/app.js', 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
});

test('no path leads out of the root, not even a symbolic link', async () => {
  for (const path of ['/../secret.txt', '/sub/../../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt',
    '/%2e%2e%5csecret.txt', '/link.txt', '/app.js%00.png', '//etc/passwd']) {
    const response = await get(path);
    assert.equal(response.status, 404, path);
    assert.ok(!response.body.includes('outside the root'), path);
  }
});

test('a port in use is reported, not ignored', async () => {
  await assert.rejects(startServer({ root: dir, port: server.port }), /EADDRINUSE/);
});

test('the vendored KaTeX typesets in Chromium with its own fonts, from the page\u2019s origin', async () => {
  if (!existsSync(join(WEB_ROOT, 'vendor', 'katex', 'katex.mjs'))) {
    assert.fail('web/vendor/katex is missing: run node scripts/vendor.mjs (make vendor)');
  }
  const session = await startSession();
  try {
    const page = await session.newPage();
    // An empty page of our origin that loads KaTeX's stylesheet, as index.html does.
    await page.route(`${session.origin}/__katex-check.html`, (route) => route.fulfill({
      contentType: 'text/html',
      body: '<!doctype html><html><head><meta charset="utf-8">'
        + '<link rel="stylesheet" href="/vendor/katex/katex.min.css"></head><body><p id="out"></p></body></html>',
    }));
    await page.goto(session.url('__katex-check.html'));
    const report = await page.evaluate(async () => {
      const { default: katex } = await import('/vendor/katex/katex.mjs');
      const out = document.getElementById('out');
      out.innerHTML = katex.renderToString('\\operatorname{softmax}\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right)V', { throwOnError: true });
      await document.fonts.ready;
      const fraction = out.querySelector('.mfrac');
      return {
        rendered: Boolean(out.querySelector('.katex .katex-html')) && Boolean(fraction) && Boolean(out.querySelector('.sqrt')),
        mathml: Boolean(out.querySelector('.katex-mathml math')),
        styled: getComputedStyle(out.querySelector('.katex')).fontFamily,
        mainFont: document.fonts.check('1em KaTeX_Main'),
        mathFont: document.fonts.check('italic 1em KaTeX_Math'),
        loadedFonts: [...document.fonts].filter((font) => font.status === 'loaded').map((font) => font.family),
      };
    });
    assert.ok(report.rendered, 'KaTeX markup with a fraction and a square root');
    assert.ok(report.mathml, 'MathML for screen readers');
    assert.match(report.styled, /KaTeX_Main/, 'the stylesheet applies');
    assert.ok(report.loadedFonts.some((family) => family.includes('KaTeX_Main')), `fonts loaded: ${report.loadedFonts}`);
    assert.ok(report.mainFont && report.mathFont, 'KaTeX fonts available');
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('the page shows every section\u2019s formulas typeset without fetching KaTeX\u2019s script', async () => {
  const session = await startSession();
  try {
    const page = await session.openReady('index.html?preset=cat-sat-mat&backward=1');
    await session.mountSections(page);
    // Every step of the walkthrough, by its Step forward button, as a learner goes through it.
    const forward = page.locator('#walkthrough-widget').getByRole('button', { name: 'Step forward' });
    while (await forward.getAttribute('aria-disabled') !== 'true') await forward.click();
    const report = await page.evaluate(() => ({
      formulas: document.querySelectorAll('.aw-math').length,
      untypeset: [...document.querySelectorAll('.aw-math')].filter((element) => !element.querySelector('.katex-html')).map((element) => element.dataset.tex),
      fetched: performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname).filter((path) => path.startsWith('/vendor/')),
    }));
    assert.ok(report.formulas >= 10, `${report.formulas} formulas on the page`);
    assert.deepEqual(report.untypeset, [], 'formulas shown as TeX source');
    // The formulas typeset in advance come inside the page's bundle (web/dist/page/):
    // of KaTeX, only its stylesheet and fonts.
    assert.ok(!report.fetched.includes('/vendor/katex/katex.mjs'), 'KaTeX\u2019s script was fetched');
    assert.deepEqual(report.fetched.filter((path) => !/^\/vendor\/katex\/(katex\.min\.css|fonts\/)/.test(path)), []);
    session.assertQuiet();
  } finally {
    await session.close();
  }
});
