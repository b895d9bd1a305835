// Apps that import the package by name, installed from its npm tarball and
// bundled as app developers bundle them: one shows the element, one calls
// loadAttention(). esbuild (the project's own) bundles them with no
// external module, so neither may pull in a Node built-in, and with the
// convention Vite, webpack and Parcel follow for a dependency's
// new URL('<literal>', import.meta.url): the file is copied beside the
// bundle and the URL rewritten. Vite and webpack build the same apps
// themselves where they are installed. Served from a second origin, each
// app finds its engine (the build that runs here, Chromium's relaxed SIMD
// one) and KaTeX's fonts beside itself, with no attribute and no failed
// request; a base attribute still sends the element elsewhere.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { REPO, startHost, startSession } from './harness.mjs';

const ASSET_URL = /new URL\((["'])([^"']+)\1,\s*import\.meta\.url\)/g;

/** What Vite, webpack and Parcel do with a module's new URL('./file', import.meta.url). */
function copiesImportMetaUrlAssets(outdir) {
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
          pending.push(copyFile(file, join(outdir, name)));
          return `new URL("./${name}", import.meta.url)`;
        });
        await Promise.all(pending);
        return { contents, loader: 'js' };
      });
    },
  };
}

// The apps' two entries, as an app's own modules.
const ELEMENT_APP = [
  "import 'attention-explainer/element';",
  'const element = document.createElement("attention-walkthrough");',
  'const base = new URLSearchParams(location.search).get("base");',
  'if (base) element.setAttribute("base", base);',
  'element.setAttribute("preset", "cat-sat-mat");',
  'element.setAttribute("step", "5");',
  'document.body.append(element);',
].join('\n');
const API_APP = [
  "import { loadAttention } from 'attention-explainer';",
  'const attn = await loadAttention();',
  'const output = document.createElement("output");',
  'output.textContent = JSON.stringify({ kernel: attn.kernelName(), ...attn.softmax({ x: [1, 2, 3] }) });',
  'document.body.append(output);',
].join('\n');
const page = (title, script) => `<!doctype html><html lang="en"><title>${title}</title><body><h1>Attention</h1>${script}</body></html>`;

/**
 * Each bundler: build(scratch, outdir) writes element.html and api.html
 * with their scripts into outdir. Vite and webpack are used where installed.
 */
const BUNDLERS = {
  async esbuild(scratch, outdir) {
    await esbuild.build({
      entryPoints: [join(scratch, 'element.js'), join(scratch, 'api.js')],
      outdir,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      logLevel: 'error',
      plugins: [copiesImportMetaUrlAssets(outdir)],
    });
    await writeFile(join(outdir, 'element.html'), page('A course site', '<script type="module" src="element.js"></script>'));
    await writeFile(join(outdir, 'api.html'), page('An app', '<script type="module" src="api.js"></script>'));
  },
  async vite(scratch, outdir) {
    const { build } = await import('vite');
    await build({
      root: scratch, base: './', configFile: false, logLevel: 'error',
      build: { outDir: outdir, emptyOutDir: true, target: 'es2022',
               rollupOptions: { input: { element: join(scratch, 'element.html'), api: join(scratch, 'api.html') } } },
    });
  },
  async webpack(scratch, outdir) {
    const { default: webpack } = await import('webpack');
    await new Promise((done, fail) => webpack({
      mode: 'production', context: scratch, entry: { element: './element.js', api: './api.js' },
      output: { path: outdir, filename: '[name].js', publicPath: 'auto' },
    }, (error, stats) => (error || stats.hasErrors() ? fail(error ?? new Error(stats.toString('errors-only'))) : done())));
    await writeFile(join(outdir, 'element.html'), page('A course site', '<script src="element.js"></script>'));
    await writeFile(join(outdir, 'api.html'), page('An app', '<script src="api.js"></script>'));
  },
};

const installed = async (name) => name === 'esbuild' || import(name).then(() => true, () => false);

let session;
let host;
let scratch;
// Each bundler's output: every file's path in it, to what it holds (a
// sha-256). webpack names what it copies by a hash of it, so a copy is
// known by its bytes, not its name.
const built = {};
const fileHash = async (path) => createHash('sha256').update(await readFile(path)).digest('hex');
const SOURCES = {
  relaxedEngine: join(REPO, 'web', 'dist', 'attention-relaxed.wasm'),
  mainFont: join(REPO, 'web', 'vendor', 'katex', 'fonts', 'KaTeX_Main-Regular.woff2'),
  notebook: join(REPO, 'web', 'dist', 'attention-notebook.js'),
  anywidget: join(REPO, 'web', 'dist', 'attention-anywidget.mjs'),
};
const sourceHashes = {};
const copied = (bundler, source) => [...built[bundler].values()].includes(sourceHashes[source]);
/** Whether a URL the app requested is, beside its bundle, a copy of `source`. */
const servedCopyOf = (bundler, url, source) => {
  const app = host.url(`${bundler}/`);
  return url.startsWith(app) && built[bundler].get(decodeURIComponent(url.slice(app.length))) === sourceHashes[source];
};

before(async () => {
  // A project with the package installed from its tarball (npm pack, as
  // published: the files package.json lists) and the two entries.
  scratch = await mkdtemp(join(tmpdir(), 'aw-bundler-'));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--offline', '--json', '--pack-destination', scratch],
                                         { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  const installedAt = join(scratch, 'node_modules', 'attention-explainer');
  await mkdir(installedAt, { recursive: true });
  execFileSync('tar', ['-xzf', join(scratch, packed[0].filename), '-C', installedAt, '--strip-components=1']);
  await writeFile(join(scratch, 'element.js'), ELEMENT_APP);
  await writeFile(join(scratch, 'api.js'), API_APP);
  await writeFile(join(scratch, 'element.html'), page('A course site', '<script type="module" src="./element.js"></script>'));
  await writeFile(join(scratch, 'api.html'), page('An app', '<script type="module" src="./api.js"></script>'));

  for (const [source, path] of Object.entries(SOURCES)) sourceHashes[source] = await fileHash(path);
  session = await startSession();
  host = await startHost(session);
  for (const name of Object.keys(BUNDLERS)) {
    if (!await installed(name)) continue;
    const outdir = join(host.dir, name);
    await mkdir(outdir);
    await BUNDLERS[name](scratch, outdir);
    const names = await readdir(outdir, { recursive: true });
    const files = names.filter((file) => statSync(join(outdir, file)).isFile());
    built[name] = new Map(await Promise.all(files.map(async (file) => [file, await fileHash(join(outdir, file))])));
  }
});

after(async () => {
  await host?.close();
  await session?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** Opens one of a bundler's apps; returns the page and every request it made, with how each ended. */
async function openApp(path, ready) {
  const page = await session.newPage();
  const requests = [];
  page.on('requestfinished', async (request) => {
    const response = await request.response();
    requests.push({ url: request.url(), status: response?.status() ?? 0 });
  });
  page.on('requestfailed', (request) => requests.push({ url: request.url(), status: 'failed' }));
  await page.goto(host.url(path));
  await page.waitForSelector(ready);
  return { page, requests };
}

const failedOf = (requests) => requests.filter(({ status }) => status === 'failed' || status >= 400);

for (const bundler of Object.keys(BUNDLERS)) {
  const skip = !await installed(bundler) && `${bundler} is not installed (a devDependency to add)`;

  test(`an app bundled by ${bundler} shows the element with its engine and fonts copied beside the bundle, and no request fails`, { skip }, async () => {
    const listed = [...built[bundler].keys()].join(', ');
    assert.ok(copied(bundler, 'relaxedEngine'), `the engine was copied: ${listed}`);
    assert.ok(copied(bundler, 'mainFont'), `the fonts were copied: ${listed}`);
    assert.ok(!copied(bundler, 'notebook') && !copied(bundler, 'anywidget'), `nothing the app does not import: ${listed}`);

    const { page, requests } = await openApp(`${bundler}/element.html`, 'attention-walkthrough[data-ready="true"]');
    // KaTeX's fonts are in use once the step's formula is drawn.
    await page.waitForSelector('attention-walkthrough .katex-html');
    await page.evaluate(() => document.fonts.ready);
    assert.match(await page.textContent('attention-walkthrough .aw-counter'), /^5 \//);
    await page.locator('attention-walkthrough').getByRole('button', { name: 'Step forward' }).click();
    await page.waitForFunction(() => /^6 \//.test(document.querySelector('attention-walkthrough').shadowRoot.querySelector('.aw-counter').textContent));

    assert.deepEqual(failedOf(requests), [], 'no request failed');
    const app = host.url(`${bundler}/`);
    const engine = requests.filter(({ url }) => url.endsWith('.wasm'));
    assert.equal(engine.length, 1);
    // Chromium runs relaxed SIMD: the engine's relaxed build (web/lib/engine-file.js).
    assert.ok(servedCopyOf(bundler, engine[0].url, 'relaxedEngine'),
              `the engine's relaxed build came from beside the bundle: ${engine[0].url}`);
    const fonts = requests.filter(({ url }) => url.endsWith('.woff2'));
    assert.ok(fonts.length > 0 && fonts.every(({ url }) => url.startsWith(app)), `the fonts came from beside the bundle: ${fonts.map(({ url }) => url).join(', ')}`);
    session.assertQuiet();
    await page.close();
  });

  test(`an app bundled by ${bundler} computes with loadAttention() from the engine copied beside the bundle, and no request fails`, { skip }, async () => {
    const { page, requests } = await openApp(`${bundler}/api.html`, 'output');
    const { kernel, weights } = JSON.parse(await page.textContent('output'));
    // softmax([1, 2, 3]) = e^i / (e + e^2 + e^3).
    const sum = Math.exp(1) + Math.exp(2) + Math.exp(3);
    [1, 2, 3].forEach((x, i) => assert.ok(Math.abs(weights[i] - Math.exp(x) / sum) <= 1e-15, `weight ${i}: ${weights[i]}`));
    assert.equal(kernel, 'wasm-relaxed-simd');

    assert.deepEqual(failedOf(requests), [], 'no request failed');
    const engine = requests.filter(({ url }) => url.endsWith('.wasm'));
    assert.equal(engine.length, 1);
    assert.ok(servedCopyOf(bundler, engine[0].url, 'relaxedEngine'),
              `the engine's relaxed build came from beside the bundle: ${engine[0].url}`);
    session.assertQuiet();
    await page.close();
  });
}

test('in an app bundled by esbuild the base attribute still says where the engine and KaTeX are', async () => {
  const { page, requests } = await openApp(`esbuild/element.html?base=${encodeURIComponent(session.url('dist/'))}`,
                                           'attention-walkthrough[data-ready="true"]');
  await page.waitForSelector('attention-walkthrough .katex-html');
  await page.evaluate(() => document.fonts.ready);
  assert.deepEqual(requests.filter(({ url }) => url.endsWith('.wasm')).map(({ url, status }) => [url, status]),
                   [[session.url('dist/attention-relaxed.wasm'), 200]]);
  const fonts = requests.filter(({ url }) => url.endsWith('.woff2'));
  assert.ok(fonts.length > 0 && fonts.every(({ url, status }) => url.startsWith(session.url('vendor/katex/fonts/')) && status === 200));
  session.assertQuiet();
  await page.close();
});
