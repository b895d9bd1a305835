#!/usr/bin/env node
// Writes web/dist/page/: the page's ES modules (web/app.js and all it
// imports) as a few minified ES modules, which web/index.html loads. The
// page as some forty modules took as many requests before its first figure,
// six at a time over HTTP/1.1 (measured: the page waited on them, idle, for
// most of its first 350 ms) and 60 KB more gzipped than these bundles
// (docs/performance.md, "The page's figures"). The sources stay the
// modules of web/ (the embed, the element's build and the tests use them as
// they are); this is a build of them, not committed.
//
// - app.js: the walkthrough and all the first screen needs, with the chunks
//   it shares with the sections; each section's code is a chunk of its own,
//   fetched when the section nears the view (widgets/registry.js);
// - engine-preload.js: web/engine-preload.js on its own, so that the
//   engine's fetch starts as soon as this one small file is in, before
//   app.js's chunks;
// - every `import.meta.url` of a module becomes that module's address
//   under web/ (resolved against the bundle's), so what a module fetches
//   beside itself (the engine, presets.json, KaTeX, the workers) is found
//   where it always was;
// - page.css: the page's stylesheets (PAGE_STYLESHEETS) in one, minified
//   (6 KB less gzipped, one request less).
//
//   node scripts/build-page.mjs      (after scripts/vendor.mjs; `make vendor`)

import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import { bundleModule } from './bundle-common.mjs';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const WEB = join(REPO, 'web');
export const PAGE_DIST = join(WEB, 'dist', 'page');
// What dist/page/page.css holds, in order (the one-file build inlines them too).
export const PAGE_STYLESHEETS = ['style.css', 'sections.css'];

/** Each module's import.meta.url, as the address of its source under web/. */
const sourceAddresses = {
  name: 'source-addresses',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async ({ path }) => {
      const text = await readFile(path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const address = `new URL(${JSON.stringify(relative(PAGE_DIST, path).split('\\').join('/'))}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', address), loader: 'js' };
    });
  },
};

async function main() {
  await rm(PAGE_DIST, { recursive: true, force: true });
  const app = await bundleModule({
    entryPoints: [join(WEB, 'app.js')],
    outdir: PAGE_DIST,
    splitting: true,
    chunkNames: '[name]-[hash]',
    plugins: [sourceAddresses],
  });
  const preload = await bundleModule({
    entryPoints: [join(WEB, 'engine-preload.js')],
    outdir: PAGE_DIST,
    plugins: [sourceAddresses],
  });
  const css = (await Promise.all(PAGE_STYLESHEETS.map((file) => readFile(join(WEB, file), 'utf8')))).join('\n');
  const minified = (await transform(css, { loader: 'css', minify: true })).code;
  await writeFile(join(PAGE_DIST, 'page.css'), minified);
  const outputs = { ...app.metafile.outputs, ...preload.metafile.outputs };
  const total = Object.values(outputs).reduce((sum, { bytes }) => sum + bytes, 0) + minified.length;
  console.log(`build-page: web/dist/page/, ${Object.keys(outputs).length + 1} files, ${(total / 1024).toFixed(1)} KB`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
