#!/usr/bin/env node
// Builds the <attention-walkthrough> custom element (web/attention-walkthrough.js)
// into one classic script, web/dist/attention-walkthrough.js, with the
// stylesheets and presets inside it, and copies the engine beside it
// (web/dist/attention.wasm). KaTeX stays in web/vendor/katex/ and is loaded
// from there when a formula is first shown. web/dist/ is not committed.
//
//   node scripts/build-element.mjs      (after ./build.sh and vendor; `make element`)

import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleClassicScript } from './bundle-common.mjs';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const WEB = join(REPO, 'web');
const DIST = join(WEB, 'dist');

async function main() {
  await mkdir(DIST, { recursive: true });
  const result = await bundleClassicScript({
    entryPoints: [join(WEB, 'attention-walkthrough.js')],
    outfile: join(DIST, 'attention-walkthrough.js'),
    loader: { '.css': 'text' },
    inject: [join(REPO, 'scripts', 'element-script-url.js')],
    define: { 'import.meta.url': 'scriptUrl' },
  });
  // The engine, and its build for browsers without WebAssembly SIMD.
  for (const file of ['attention.wasm', 'attention-scalar.wasm']) await copyFile(join(WEB, 'lib', file), join(DIST, file));
  const bytes = Object.values(result.metafile.outputs)[0].bytes;
  console.log(`build-element: web/dist/attention-walkthrough.js ${(bytes / 1024).toFixed(1)} KB, web/dist/attention.wasm and attention-scalar.wasm`);
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
