#!/usr/bin/env node
// Builds the <attention-walkthrough> custom element (web/attention-walkthrough.js)
// into web/dist/, with the stylesheets and presets inside, and copies the
// engine beside it (web/dist/attention.wasm). KaTeX stays in
// web/vendor/katex/ and is loaded from there when a formula is first shown.
// web/dist/ is not committed.
//
// - attention-walkthrough.js: one classic script, for a <script src> tag;
//   it finds its engine and KaTeX relative to its own address.
// - attention-walkthrough.mjs: the same as an ES module, for bundlers
//   (the package's `import` condition): every file it loads is written
//   new URL('<literal>', import.meta.url) (element-assets.js), which Vite,
//   webpack and Parcel copy into the app.
// - attention-notebook.js and attention-anywidget.mjs: self-contained, for
//   hosts that load a script or module from text and serve nothing beside
//   it (a notebook's output cell, anywidget): the engine (its -Oz build
//   without the language model, scripts/small-engine.mjs) gzipped inside
//   (element-assets-inline.js), the formulas typeset in advance as MathML
//   and no KaTeX, as in the one-file page. The first is the element as a
//   classic script (Python's show() writes it into the cell), packed as
//   the one-file page's scripts are (packedScript, bundle-common.mjs); the
//   second default-exports anywidget's { render } (web/anywidget.js).
//
//   node scripts/build-element.mjs      (after ./build.sh and vendor; `make element`)

import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { bundleClassicScript, bundleModule, packedScript } from './bundle-common.mjs';
import { MATHML_CSS, mathmlFormulas } from './formulas.mjs';
import { smallEngine } from './small-engine.mjs';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const WEB = join(REPO, 'web');
const DIST = join(WEB, 'dist');
const ENTRY = join(WEB, 'attention-walkthrough.js');

/** element-assets.js names every vendored font; a KaTeX update that adds one must add it there. */
async function checkFontList() {
  const listed = [...(await readFile(join(WEB, 'element-assets.js'), 'utf8')).matchAll(/'\.\.\/vendor\/katex\/fonts\/([^']+)'/g)]
    .map(([, name]) => name).sort();
  const vendored = (await readdir(join(WEB, 'vendor', 'katex', 'fonts'))).filter((name) => name.endsWith('.woff2')).sort();
  if (listed.join() !== vendored.join()) {
    throw new Error(`build-element: web/element-assets.js lists the fonts ${listed.join(', ')}; web/vendor/katex/fonts/ has ${vendored.join(', ')}`);
  }
}

/**
 * The self-contained builds' stand-ins: the inline assets for
 * element-assets.js, the engine for their import, MathML for
 * vendor/formulas.js and its small stylesheet for KaTeX's.
 */
function selfContained({ wasmGzip, math }) {
  return {
    name: 'self-contained',
    setup(build) {
      build.onResolve({ filter: /\/element-assets\.js$/ }, () => ({ path: join(WEB, 'element-assets-inline.js') }));
      build.onResolve({ filter: /^attention-inline:engine$/ }, () => ({ path: 'engine', namespace: 'attention-inline' }));
      build.onResolve({ filter: /\/vendor\/formulas\.js$/ }, () => ({ path: 'formulas', namespace: 'attention-inline' }));
      build.onResolve({ filter: /\/vendor\/katex\/katex\.min\.css$/ }, () => ({ path: 'katex-css', namespace: 'attention-inline' }));
      const contents = { engine: `export default ${JSON.stringify(wasmGzip)};`, formulas: `export default ${JSON.stringify(math)};` };
      build.onLoad({ filter: /.*/, namespace: 'attention-inline' }, ({ path }) => (path === 'katex-css'
        ? { contents: MATHML_CSS, loader: 'text' }
        : { contents: contents[path], loader: 'js' }));
    },
  };
}

/** Builds the notebook script and the anywidget module, with the engine and formulas inside. */
async function buildSelfContained() {
  // The -Oz engine, as the one-file page's: 253 KB instead of 393 KB before gzip.
  const wasmGzip = gzipSync(await smallEngine(), { level: 9 }).toString('base64');
  const entries = [
    { build: bundleClassicScript, entry: ENTRY, out: 'attention-notebook.js', classic: true },
    { build: bundleModule, entry: join(WEB, 'anywidget.js'), out: 'attention-anywidget.mjs', classic: false },
  ];
  const results = [];
  for (const { build, entry, out, classic } of entries) {
    const options = {
      entryPoints: [entry],
      outfile: join(DIST, out),
      loader: { '.css': 'text' },
      // Loaded from text, these have no address of their own: the page's stands in.
      inject: [join(REPO, 'scripts', 'element-script-url.js')],
      define: { 'import.meta.url': 'scriptUrl' },
    };
    // First which modules it holds, for the formulas they typeset; then the build.
    const probe = await build({ ...options, write: false, plugins: [selfContained({ wasmGzip: '', math: {} })] });
    const files = Object.keys(probe.metafile.inputs).filter((file) => file.endsWith('.js') && !file.includes(':'))
      .map((file) => join(REPO, file));
    const math = await mathmlFormulas(files);
    const result = await build({ ...options, plugins: [selfContained({ wasmGzip, math })] });
    if (!classic) {
      results.push(`${out} ${kb(result)}`);
      continue;
    }
    // Packed, a third of its size, and safe inside a page's <script> (base64); a later
    // copy in the same page (another cell) unpacks nothing: the first defines the element.
    const packed = packedScript(await readFile(join(DIST, out), 'utf8'), { once: 'attentionWalkthroughUnpacked' });
    await writeFile(join(DIST, out), packed);
    results.push(`${out} ${(packed.length / 1024).toFixed(1)} KB (packed from ${kb(result)})`);
  }
  return results;
}

const kb = (result) => `${(Object.values(result.metafile.outputs)[0].bytes / 1024).toFixed(1)} KB`;

async function main() {
  await mkdir(DIST, { recursive: true });
  await checkFontList();
  const classic = await bundleClassicScript({
    entryPoints: [ENTRY],
    outfile: join(DIST, 'attention-walkthrough.js'),
    loader: { '.css': 'text' },
    inject: [join(REPO, 'scripts', 'element-script-url.js')],
    define: { 'import.meta.url': 'scriptUrl' },
  });
  const module = await bundleModule({
    entryPoints: [ENTRY],
    outfile: join(DIST, 'attention-walkthrough.mjs'),
    loader: { '.css': 'text' },
  });
  // The engine, and its builds for browsers without WebAssembly SIMD and
  // with relaxed SIMD (web/lib/engine-file.js), whose literal URLs, bundled
  // here, name these copies; the page's module (without the trainer) too,
  // which the efficient section's long sequences run on (lib/long-sequences.js).
  const engines = ['attention', 'attention-page']
    .flatMap((name) => [`${name}.wasm`, `${name}-scalar.wasm`, `${name}-relaxed.wasm`]);
  for (const file of engines) await copyFile(join(WEB, 'lib', file), join(DIST, file));
  const contained = await buildSelfContained();
  console.log(`build-element: web/dist/attention-walkthrough.js ${kb(classic)}, attention-walkthrough.mjs ${kb(module)}, ${engines.join(', ')}, ${contained.join(', ')}`);
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
