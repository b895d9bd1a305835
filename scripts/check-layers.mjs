// Checks that dependencies point one way (ARCHITECTURE.md): each C file in
// src/ includes only the public header, its own layer's headers and those
// of the layers below; each page module imports only modules of its own
// layer or below; neither has an include or import cycle; and index.html
// preloads exactly the modules app.js imports. Prints each
// violation and exits 1, or prints a one-line summary.
//
//   node scripts/check-layers.mjs

import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../', import.meta.url));

// Lowest first: a layer may use the ones before it.
const C_LAYERS = ['kernels', 'text', 'problem', 'walkthrough', 'check', 'train', 'cli'];
const WEB_LAYERS = [
  ['lib', (file) => file.startsWith('web/lib/') || file === 'web/presets.js'],
  ['ui', (file) => file.startsWith('web/ui/')],
  ['widgets', (file) => file.startsWith('web/widgets/')],
  ['pages', (file) => /^web\/[^/]+\.js$/.test(file)],
];

async function filesUnder(dir, pattern) {
  const entries = await readdir(join(REPO, dir), { withFileTypes: true });
  const files = [];
  for (const entry of entries) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory() && !['vendor', 'dist'].includes(entry.name)) files.push(...await filesUnder(path, pattern));
    else if (entry.isFile() && pattern.test(entry.name)) files.push(path);
  }
  return files;
}

/** Dependencies of each file: { file: [file, ...] }, and the violations found. */
async function cGraph() {
  const graph = {};
  const problems = [];
  for (const file of await filesUnder('src', /\.[ch]$/)) {
    const layer = file.split('/')[1];
    const rank = C_LAYERS.indexOf(layer);
    const source = await readFile(join(REPO, file), 'utf8');
    graph[file] = [];
    for (const [, include] of source.matchAll(/^#include "([^"]+)"/gm)) {
      if (include === 'attention.h') continue;
      const target = include.includes('/') ? `src/${include}` : `${dirname(file)}/${include}`;
      graph[file].push(target);
      const targetRank = C_LAYERS.indexOf(target.split('/')[1]);
      if (rank < 0 || targetRank < 0 || targetRank > rank) {
        problems.push(`${file} (${layer}) includes ${include} (${target.split('/')[1]}), a layer above it`);
      }
    }
  }
  return { graph, problems };
}

const webRank = (file) => WEB_LAYERS.findIndex(([, owns]) => owns(file));

async function webGraph() {
  const graph = {};
  const problems = [];
  for (const file of await filesUnder('web', /\.js$/)) {
    const source = await readFile(join(REPO, file), 'utf8');
    graph[file] = [];
    for (const [, specifier] of source.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+\.js)'/gm)) {
      const target = relative(REPO, resolve(REPO, dirname(file), specifier));
      graph[file].push(target);
      if (webRank(target) > webRank(file)) {
        problems.push(`${file} (${WEB_LAYERS[webRank(file)]?.[0]}) imports ${target} (${WEB_LAYERS[webRank(target)]?.[0]}), a layer above it`);
      }
    }
  }
  return { graph, problems };
}

/**
 * web/index.html preloads the modules web/app.js imports, all of them and
 * only them, so that the browser fetches them at once rather than one
 * level of imports at a time; a module added or dropped must be listed.
 */
async function preloadProblems(graph) {
  const imported = new Set();
  const visit = (file) => {
    if (imported.has(file)) return;
    imported.add(file);
    for (const next of graph[file] ?? []) visit(next);
  };
  visit('web/app.js');
  imported.delete('web/app.js');
  const html = await readFile(join(REPO, 'web/index.html'), 'utf8');
  const preloaded = new Set([...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)]
    .map(([, href]) => `web/${href}`));
  return [
    ...[...imported].filter((file) => !preloaded.has(file))
      .map((file) => `web/index.html does not preload ${file}, which web/app.js imports`),
    ...[...preloaded].filter((file) => !imported.has(file))
      .map((file) => `web/index.html preloads ${file}, which web/app.js does not import`),
  ];
}

/** Every cycle, as "a -> b -> a". */
function cycles(graph) {
  const found = [];
  const state = {};
  const visit = (file, path) => {
    if (state[file] === 'done') return;
    if (state[file] === 'open') {
      found.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      return;
    }
    state[file] = 'open';
    for (const next of graph[file] ?? []) visit(next, [...path, file]);
    state[file] = 'done';
  };
  for (const file of Object.keys(graph)) visit(file, []);
  return found;
}

const c = await cGraph();
const web = await webGraph();
const problems = [...c.problems, ...web.problems, ...cycles(c.graph).map((cycle) => `include cycle: ${cycle}`),
  ...cycles(web.graph).map((cycle) => `import cycle: ${cycle}`), ...await preloadProblems(web.graph)];
for (const problem of problems) console.error(`check-layers: ${problem}`);
if (problems.length > 0) process.exit(1);
console.log(`check-layers: ${Object.keys(c.graph).length} C files in ${C_LAYERS.join(' > ')}, `
  + `${Object.keys(web.graph).length} page modules in ${WEB_LAYERS.map(([name]) => name).join(' > ')}: no upward dependency, no cycle; `
  + 'index.html preloads what app.js imports');
