#!/usr/bin/env node
// Writes build/attention.html: the page of web/index.html as one file that
// works when opened from disk (file://) with no network, for course sites
// that accept a single HTML upload. From file:// Chromium runs no
// type=module script and fetches no .wasm or JSON beside the page, so:
//
// - the ES modules from web/app.js become one minified classic script
//   (esbuild), packed (gzipped, as base64: packedScript in
//   bundle-common.mjs) at the end of <body> where the module used to run,
//   and run once the browser has unpacked it; the markup and stylesheets
//   stay as they are, for the first paint;
// - the engine is a separate -Oz build of the same C (scripts/small-engine.mjs:
//   smaller than the served -O2 module, the same exports but the language
//   model's), gzipped and inlined as base64 (app.js
//   unpacks it with DecompressionStream), and presets.json likewise;
//   app.js takes both from globalThis.attentionSingleFile;
// - KaTeX is not inlined (its script alone is ~270 KB): every constant TeX
//   string in the bundled modules is typeset here as MathML, which the
//   browser draws with its own fonts, in place of web/vendor/formulas.js
//   (scripts/formulas.mjs), packed with the scripts. A formula not found
//   here shows as its TeX source;
// - the page's stylesheets are inlined and minified; KaTeX's is left out.
//
//   node scripts/build-single.mjs      (after ./build.sh; `make single`)

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { bundleClassicScript, packedScript } from './bundle-common.mjs';
import { smallEngine } from './small-engine.mjs';
import { withFirstScreen } from './build-first-screen.mjs';
import { PAGE_STYLESHEETS } from './build-page.mjs';
import { MATHML_CSS, mathmlFormulas } from './formulas.mjs';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const WEB = join(REPO, 'web');
const OUTPUT = join(REPO, 'build', 'attention.html');
// 551 KB on 28 Nov 2026 with every chapter, its scripts as they were (the
// budget had grown from 400 to 560 KiB with them); 383 KB once they are
// packed as the engine is (issue 36), the language model left out. The
// budget goes back to 400 KiB, the chapter on a real model (its words, no
// model) in it.
const BUDGET_BYTES = 400 * 1024;

// web/vendor/formulas.js (KaTeX's HTML, drawn with its stylesheet and fonts)
// gives way to the MathML the packed script sets before the bundle runs.
const formulasFromInlinedScript = {
  name: 'formulas-from-inlined-script',
  setup(build) {
    build.onResolve({ filter: /\/vendor\/formulas\.js$/ }, () => ({ path: 'formulas', namespace: 'single-file' }));
    build.onLoad({ filter: /.*/, namespace: 'single-file' }, () => ({ contents: 'export default globalThis.attentionSingleFile.math;' }));
  },
};

async function bundleScripts() {
  const result = await bundleClassicScript({
    entryPoints: [join(WEB, 'app.js')],
    // Classic scripts have no import.meta; nothing is fetched from it here
    // (the engine and presets are inlined), but new URL() needs a base.
    // A document in an iframe's srcdoc has the base "about:srcdoc", against
    // which no URL resolves: then a stand-in (attentionSingleFileBase, set
    // by the inlined script).
    define: { 'import.meta.url': 'attentionSingleFileBase' },
    plugins: [formulasFromInlinedScript],
    write: false,
  });
  return {
    code: result.outputFiles[0].text,
    inputs: Object.keys(result.metafile.inputs).map((file) => join(REPO, file)),
  };
}

async function inlineStyles(html) {
  const links = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">\n?/g)];
  let css = '';
  for (const [, href] of links) {
    if (href.startsWith('vendor/katex/')) continue;
    // The served page's bundle of its stylesheets: their sources, here.
    for (const file of href === 'dist/page/page.css' ? PAGE_STYLESHEETS : [href]) css += await readFile(join(WEB, file), 'utf8');
  }
  const minified = (await esbuild.transform(css + MATHML_CSS, { loader: 'css', minify: true })).code;
  if (/url\(/.test(minified)) throw new Error('build-single: a stylesheet refers to another file (url())');
  const withoutLinks = links.reduce((page, [tag]) => page.replace(tag, ''), html);
  // A function replacement: the inserted text may contain $& or $'.
  return withoutLinks.replace('</head>', () => `<style>${minified.trim()}</style>\n</head>`);
}

async function main() {
  const [wasm, html, presets, bundle] = await Promise.all([
    smallEngine(),
    readFile(join(WEB, 'index.html'), 'utf8'),
    readFile(join(WEB, 'presets.json'), 'utf8'),
    bundleScripts(),
  ]);
  const math = await mathmlFormulas(bundle.inputs.filter((file) => file.startsWith(join(WEB, '')) && file.endsWith('.js')));

  const moduleTag = '<script type="module" src="dist/page/app.js"></script>\n';
  if (!html.includes(moduleTag)) throw new Error(`build-single: web/index.html no longer has ${moduleTag.trim()}`);
  const inlined = 'var attentionSingleFileBase=document.baseURI.startsWith("about:")?"file:///attention.html":document.baseURI;'
    + `globalThis.attentionSingleFile={`
    + `wasmGzip:"${gzipSync(wasm, { level: 9 }).toString('base64')}",`
    + `presetsGzip:"${gzipSync(JSON.stringify(JSON.parse(presets)), { level: 9 }).toString('base64')}"};`;
  // The scripts and their formulas, packed: the page's own markup and styles stay as they are, for its first paint.
  const scripts = packedScript(`globalThis.attentionSingleFile.math=${JSON.stringify(math)};${bundle.code.trim()}`);
  // The one file carries everything the preload links and engine-preload.js would fetch.
  // Its engine is inline (the build's walkthroughs are not): the first screen drawn into
  // index.html, and what places it, are left out.
  const withoutPreloads = withFirstScreen(html, '<p class="aw-message">Loading the engine\u2026</p>').replace(moduleTag, '')
    .replace(/ *<!-- The walkthrough's first screen is in this page[\s\S]*?<script src="first-screen.js"[^>]*><\/script>\n/, '')
    .replace(/ *<script type="module" src="dist\/page\/engine-preload.js" async><\/script>\n/, '')
    .replace(/ *<!--[\s\S]*?-->\n(?=\s*<script type="module")/, '')
    .replace(/ *<link rel="(?:modulepreload|preload)" [^>]*>\n/g, '');
  let page = await inlineStyles(withoutPreloads);
  page = page.replace('</body>', () => `<script>${inlined}</script>\n<script>${scripts}</script>\n</body>`);

  // Anything still pointing at a file beside index.html would fail from disk.
  const local = [...page.matchAll(/\s(?:src|href)="(?!#|data:|https?:)([^"]*)"/g)].map(([, url]) => url);
  if (local.length > 0) throw new Error(`build-single: still refers to other files: ${local.join(', ')}`);

  await writeFile(OUTPUT, page);
  const size = Buffer.byteLength(page);
  console.log(`build-single: build/attention.html ${(size / 1024).toFixed(1)} KB `
    + `(engine ${(wasm.length / 1024).toFixed(1)} KB before gzip, scripts ${(bundle.code.length / 1024).toFixed(1)} KB `
    + `packed into ${(scripts.length / 1024).toFixed(1)} KB, ${Object.keys(math).length} formulas typeset)`);
  if (size >= BUDGET_BYTES) throw new Error(`build-single: ${size} bytes is over the ${BUDGET_BYTES}-byte budget`);
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
