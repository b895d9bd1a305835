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
//
//   node scripts/build-element.mjs      (after ./build.sh and vendor; `make element`)

import { copyFile, mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleClassicScript, bundleModule } from './bundle-common.mjs';

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
  await copyFile(join(WEB, 'lib', 'attention.wasm'), join(DIST, 'attention.wasm'));
  console.log(`build-element: web/dist/attention-walkthrough.js ${kb(classic)}, attention-walkthrough.mjs ${kb(module)}, attention.wasm`);
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
