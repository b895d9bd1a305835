#!/usr/bin/env node
// Writes web/dist/page/: the page's ES modules (web/app.js and all it
// imports) as a few minified ES modules, which web/index.html loads. The
// page as some forty modules took as many requests before its first figure,
// six at a time over HTTP/1.1 (measured: the page waited on them, idle, for
// most of its first 580 ms) and 65 KB more gzipped than these bundles
// (docs/performance.md, "The first heatmap and the page's bytes"). The
// sources stay the modules of web/ (the embed, the element's build and the
// tests use them as they are); this is a build of them, not committed.
//
// - app.js and one chunk: all the first screen runs (pagePlugin says how
//   it comes as one); each section's code is a chunk of its own, fetched
//   when the section nears the view (widgets/registry.js);
// - engine-preload.js: web/engine-preload.js on its own, so that the
//   engine's fetch starts as soon as this one small file is in, before
//   app.js's chunks;
// - every `import.meta.url` of a module becomes that module's address
//   under web/ (resolved against the bundle's), so what a module fetches
//   beside itself (the engine, presets.json, KaTeX, the workers) is found
//   where it always was;
// - web/dist/models/kjv-genesis/: the shipped model's config.json and
//   model.safetensors, copied from models/, which the chapter "Attention
//   in a real model" (widgets/model.js) fetches when it is opened;
// - page.css: the page's stylesheets (PAGE_STYLESHEETS) in one, minified
//   (6 KB less gzipped, one request less).
//
//   node scripts/build-page.mjs      (after scripts/vendor.mjs; `make vendor`)

import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import { bundleModule } from './bundle-common.mjs';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const WEB = join(REPO, 'web');
export const PAGE_DIST = join(WEB, 'dist', 'page');
// What dist/page/page.css holds, in order (the one-file build inlines them too).
export const PAGE_STYLESHEETS = ['style.css', 'sections.css'];
// The shipped model's files the page serves (beside web/dist/page/).
const MODEL = 'kjv-genesis';
const MODEL_FILES = ['config.json', 'model.safetensors'];

/** Each module's import.meta.url, as the address of its source under web/. */
const sourceAddress = (path) => `new URL(${JSON.stringify(relative(PAGE_DIST, path).split('\\').join('/'))}, import.meta.url).href`;

/**
 * The modules web/app.js imports, directly or not (what the first screen
 * runs), and those imported with import() anywhere (the sections' code), as
 * absolute paths.
 */
async function pageGraph() {
  const { metafile } = await bundleModule({
    entryPoints: [join(WEB, 'app.js')], absWorkingDir: REPO, outdir: PAGE_DIST, splitting: true, write: false,
  });
  const { inputs } = metafile;
  const first = new Set();
  const visit = (file) => {
    if (first.has(file)) return;
    first.add(file);
    for (const { path, kind } of inputs[file].imports) if (kind === 'import-statement' && inputs[path]) visit(path);
  };
  visit('web/app.js');
  first.delete('web/app.js');
  const loaded = Object.values(inputs).flatMap(({ imports }) => imports)
    .filter(({ path, kind }) => kind === 'dynamic-import' && inputs[path] && !first.has(path)).map(({ path }) => path);
  return { first: [...first].map((file) => join(REPO, file)), loaded: new Set(loaded.map((file) => join(REPO, file))) };
}

/**
 * Rewrites each import.meta.url, and makes each section import every module
 * of the first screen (page-first, a module of imports only): esbuild puts
 * a module in a chunk by the set of entries that reach it, so the first
 * screen's modules, reached by all, come as one chunk instead of one per
 * set of sections that share some of them (ten, in two rounds of requests).
 * The sections run after the first screen, so these imports load nothing.
 */
function pagePlugin({ first, loaded }) {
  return {
    name: 'page',
    setup(build) {
      build.onResolve({ filter: /^page-first$/ }, () => ({ path: 'page-first', namespace: 'page' }));
      build.onLoad({ filter: /.*/, namespace: 'page' }, () => ({
        contents: first.map((file) => `import ${JSON.stringify(file)};`).join('\n'), loader: 'js', resolveDir: WEB,
      }));
      build.onLoad({ filter: /\.js$/ }, async ({ path }) => {
        const text = await readFile(path, 'utf8');
        const section = loaded.has(path);
        if (!section && !text.includes('import.meta.url')) return undefined;
        const contents = text.replaceAll('import.meta.url', sourceAddress(path));
        return { contents: section ? `import 'page-first';\n${contents}` : contents, loader: 'js' };
      });
    },
  };
}

async function main() {
  await rm(PAGE_DIST, { recursive: true, force: true });
  const graph = await pageGraph();
  const app = await bundleModule({
    entryPoints: [join(WEB, 'app.js')],
    outdir: PAGE_DIST,
    splitting: true,
    chunkNames: '[name]-[hash]',
    // page-first's bare imports are kept although package.json says these
    // modules have no side effects (which lets an app's bundle drop those it
    // does not use).
    ignoreAnnotations: true,
    plugins: [pagePlugin(graph)],
  });
  const preload = await bundleModule({
    entryPoints: [join(WEB, 'engine-preload.js')],
    outdir: PAGE_DIST,
    plugins: [pagePlugin({ first: [], loaded: new Set() })],
  });
  const css = (await Promise.all(PAGE_STYLESHEETS.map((file) => readFile(join(WEB, file), 'utf8')))).join('\n');
  const minified = (await transform(css, { loader: 'css', minify: true })).code;
  await writeFile(join(PAGE_DIST, 'page.css'), minified);
  const models = join(WEB, 'dist', 'models', MODEL);
  await mkdir(models, { recursive: true });
  await Promise.all(MODEL_FILES.map((file) => copyFile(join(REPO, 'models', MODEL, file), join(models, file))));
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
