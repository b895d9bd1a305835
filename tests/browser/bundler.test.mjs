// An app that imports the element by the package's name, bundled as Vite,
// webpack and Parcel bundle it: esbuild (the project's own) with the
// convention those three follow for a dependency's
// new URL('<literal>', import.meta.url), copying the file beside the bundle
// and rewriting the URL. Served from a second origin under /app/, the
// element finds its engine and KaTeX's fonts there, with no attribute and no
// failed request; a base attribute still sends it elsewhere.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { REPO, startHost, startSession } from './harness.mjs';

const ASSET_URL = /new URL\((["'])([^"']+)\1,\s*import\.meta\.url\)/g;

/** What Vite, webpack and Parcel do with a module's new URL('./file', import.meta.url). */
function copiesImportMetaUrlAssets(outdir, copied) {
  return {
    name: 'import-meta-url-assets',
    setup(build) {
      build.onLoad({ filter: /\.m?js$/ }, async ({ path }) => {
        const source = await readFile(path, 'utf8');
        const pending = [];
        const contents = source.replace(ASSET_URL, (whole, quote, relative) => {
          const file = resolve(dirname(path), relative);
          if (!existsSync(file) || !statSync(file).isFile()) return whole;
          const hash = createHash('sha256').update(file).digest('hex').slice(0, 8);
          const name = `${basename(file).replace(/(\.[^.]+)$/, `-${hash}$1`)}`;
          copied.add(name);
          pending.push(copyFile(file, join(outdir, name)));
          return `new URL("./${name}", import.meta.url)`;
        });
        await Promise.all(pending);
        return { contents, loader: 'js' };
      });
    },
  };
}

let session;
let host;
let copied;
let scratch;

before(async () => {
  // A project with the package installed by name (a link to this checkout,
  // whose package.json exports the element's ES module to `import`).
  scratch = await mkdtemp(join(tmpdir(), 'aw-bundler-'));
  await mkdir(join(scratch, 'node_modules'));
  await symlink(REPO, join(scratch, 'node_modules', 'attention-explainer'), 'dir');
  await writeFile(join(scratch, 'main.js'), [
    "import 'attention-explainer/element';",
    'const element = document.createElement("attention-walkthrough");',
    'const base = new URLSearchParams(location.search).get("base");',
    'if (base) element.setAttribute("base", base);',
    'element.setAttribute("preset", "cat-sat-mat");',
    'element.setAttribute("step", "5");',
    'document.body.append(element);',
  ].join('\n'));

  session = await startSession();
  host = await startHost(session, {
    'index.html': '<!doctype html><html lang="en"><title>A course site</title><body><h1>Attention</h1><script type="module" src="app/main.js"></script></body></html>',
  });
  const outdir = join(host.dir, 'app');
  await mkdir(outdir);
  copied = new Set();
  await esbuild.build({
    entryPoints: [join(scratch, 'main.js')],
    outfile: join(outdir, 'main.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    external: ['node:*'],
    loader: { '.css': 'text' },
    logLevel: 'error',
    plugins: [copiesImportMetaUrlAssets(outdir, copied)],
  });
});

after(async () => {
  await host?.close();
  await session?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** Opens the app; returns the page and every request it made, with how each ended. */
async function openApp(query = '') {
  const page = await session.newPage();
  const requests = [];
  page.on('requestfinished', async (request) => {
    const response = await request.response();
    requests.push({ url: request.url(), status: response?.status() ?? 0 });
  });
  page.on('requestfailed', (request) => requests.push({ url: request.url(), status: 'failed' }));
  await page.goto(`${host.url('index.html')}${query}`);
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  // KaTeX's fonts are in use once the step's formula is drawn.
  await page.waitForSelector('attention-walkthrough .katex-html');
  await page.evaluate(() => document.fonts.ready);
  return { page, requests };
}

test('a bundled app shows the element with its engine and fonts copied beside the bundle, and no request fails', async () => {
  assert.ok([...copied].some((name) => /^attention-[0-9a-f]{8}\.wasm$/.test(name)), `the engine was copied: ${[...copied].join(', ')}`);
  assert.ok([...copied].some((name) => name.startsWith('KaTeX_Main-Regular-')), 'the fonts were copied');

  const { page, requests } = await openApp();
  assert.match(await page.textContent('attention-walkthrough .aw-counter'), /^5 \//);
  await page.locator('attention-walkthrough').getByRole('button', { name: 'Step forward' }).click();
  await page.waitForFunction(() => /^6 \//.test(document.querySelector('attention-walkthrough').shadowRoot.querySelector('.aw-counter').textContent));

  const failed = requests.filter(({ status }) => status === 'failed' || status >= 400);
  assert.deepEqual(failed, [], 'no request failed');
  const app = host.url('app/');
  const engine = requests.filter(({ url }) => url.endsWith('.wasm'));
  assert.equal(engine.length, 1);
  // Chromium runs relaxed SIMD: the engine's relaxed build (web/lib/engine-file.js).
  assert.match(engine[0].url, new RegExp(`^${app}attention-relaxed-[0-9a-f]{8}\\.wasm$`), 'the engine came from beside the bundle');
  const fonts = requests.filter(({ url }) => url.endsWith('.woff2'));
  assert.ok(fonts.length > 0 && fonts.every(({ url }) => url.startsWith(app)), `the fonts came from beside the bundle: ${fonts.map(({ url }) => url).join(', ')}`);
  session.assertQuiet();
  await page.close();
});

test('in a bundled app the base attribute still says where the engine and KaTeX are', async () => {
  const { page, requests } = await openApp(`?base=${encodeURIComponent(session.url('dist/'))}`);
  assert.deepEqual(requests.filter(({ url }) => url.endsWith('.wasm')).map(({ url, status }) => [url, status]),
                   [[session.url('dist/attention-relaxed.wasm'), 200]]);
  const fonts = requests.filter(({ url }) => url.endsWith('.woff2'));
  assert.ok(fonts.length > 0 && fonts.every(({ url, status }) => url.startsWith(session.url('vendor/katex/fonts/')) && status === 200));
  session.assertQuiet();
  await page.close();
});
