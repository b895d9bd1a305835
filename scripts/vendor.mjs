#!/usr/bin/env node
// Copies the built KaTeX files from node_modules (installed by `npm ci`) into
// web/vendor/katex/, so the page typesets formulas without asking any other
// origin. web/vendor/ is generated: it is in .gitignore and this script
// replaces it whole on every run.
//
//   node scripts/vendor.mjs

import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

const repo = fileURLToPath(new URL('../', import.meta.url));
const KATEX = join(repo, 'node_modules', 'katex');
const TARGET = join(repo, 'web', 'vendor', 'katex');

// katex.mjs is what web/ui/math.js imports (KaTeX ships it unminified,
// 600 KB: it is minified here, by esbuild, to under half); katex.min.js
// serves pages that load it as a classic script. Browsers that read woff2
// never ask for the woff and ttf fonts the stylesheet also lists, so only
// woff2 is copied.
const FILES = ['dist/katex.min.js', 'dist/katex.min.css', 'LICENSE'];
const MODULE = 'dist/katex.mjs';

async function katexVersion() {
  try {
    return JSON.parse(await readFile(join(KATEX, 'package.json'), 'utf8')).version;
  } catch {
    throw new Error('vendor: node_modules/katex is missing; run `npm ci` first');
  }
}

async function main() {
  const version = await katexVersion();
  const staging = `${TARGET}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(join(staging, 'fonts'), { recursive: true });
  try {
    for (const file of FILES) await copyFile(join(KATEX, file), join(staging, file.replace(/^dist\//, '')));
    const { code } = await transform(await readFile(join(KATEX, MODULE), 'utf8'), { format: 'esm', minify: true, legalComments: 'inline' });
    await writeFile(join(staging, 'katex.mjs'), code);
    const fonts = (await readdir(join(KATEX, 'dist', 'fonts'))).filter((name) => name.endsWith('.woff2'));
    if (fonts.length === 0) throw new Error('vendor: no woff2 fonts in node_modules/katex/dist/fonts');
    for (const font of fonts) await copyFile(join(KATEX, 'dist', 'fonts', font), join(staging, 'fonts', font));
    await rm(TARGET, { recursive: true, force: true });
    await rename(staging, TARGET);
    console.log(`vendor: KaTeX ${version} (${FILES.length + 1} files, katex.mjs minified to ${code.length} bytes, ${fonts.length} fonts) -> web/vendor/katex/`);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});
