// Checks that dependencies point one way (ARCHITECTURE.md): each C file in
// src/ includes only the public header, its own layer's headers and those
// of the layers below, and calls only functions of its own layer or below
// (the objects' symbols in build/obj/, read with nm; `make test-layers`
// builds the objects first); each page module
// imports only modules of its own layer or below; no includes, calls or
// imports go in a circle; index.html runs the page's bundles
// (scripts/build-page.mjs), not its modules; and ARCHITECTURE.md names every C source and header. Prints
// each violation and exits 1, or prints a one-line summary.
//
//   node scripts/check-layers.mjs

import { execFileSync } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = fileURLToPath(new URL('../', import.meta.url));

// Lowest first: a layer may use the ones before it.
export const C_LAYERS = ['kernels', 'text', 'model', 'problem', 'walkthrough', 'check', 'lm', 'train', 'cli'];
// Where `make` puts the object of src/<layer>/<name>.c.
const OBJECTS = 'build/obj';
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
 * web/index.html runs the page's bundles (scripts/build-page.mjs) and none
 * of web/'s modules as they are: a module of the page added to index.html
 * would load beside its copy in the bundle, as a second instance.
 */
async function pageScriptProblems() {
  const html = await readFile(join(REPO, 'web/index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script [^>]*src="([^"]+)"/g)].map(([, src]) => src);
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map(([, href]) => href);
  const wanted = ['dist/page/engine-preload.js', 'dist/page/app.js'];
  // The classic script that hides the built first screen where the address
  // asks for another (scripts/build-first-screen.mjs): no module, no import.
  const classic = ['first-screen.js'];
  return [
    ...wanted.filter((src) => !scripts.includes(src)).map((src) => `web/index.html does not run ${src} (scripts/build-page.mjs)`),
    ...scripts.filter((src) => !wanted.includes(src) && !classic.includes(src))
      .map((src) => `web/index.html runs ${src}, not one of the page's bundles`),
    ...preloaded.map((href) => `web/index.html preloads the module ${href}; the page runs its bundles`),
  ];
}

/** Every cycle, as its files in order with the first again at the end. */
export function cycles(graph) {
  const found = [];
  const state = {};
  const visit = (file, path) => {
    if (state[file] === 'done') return;
    if (state[file] === 'open') {
      found.push([...path.slice(path.indexOf(file)), file]);
      return;
    }
    state[file] = 'open';
    for (const next of graph[file] ?? []) visit(next, [...path, file]);
    state[file] = 'done';
  };
  for (const file of Object.keys(graph)) visit(file, []);
  return found;
}

const cLayer = (file) => file.split('/')[1];

/** "a, b, c" or "a, b, c and 4 more". */
function someOf(names, shown = 4) {
  const list = names.slice(0, shown).join(', ');
  return names.length > shown ? `${list} and ${names.length - shown} more` : list;
}

/**
 * Each C file's object's symbols: { file: { defines, uses } }, global
 * symbols only (a static function is its file's own business), and the
 * objects missing or older than their source.
 */
async function symbolTables() {
  const tables = {};
  const unbuilt = [];
  for (const file of await filesUnder('src', /\.c$/)) {
    const object = join(OBJECTS, `${file.slice('src/'.length, -'.c'.length)}.o`);
    const built = await stat(join(REPO, object)).catch(() => null);
    if (built === null || built.mtimeMs < (await stat(join(REPO, file))).mtimeMs) {
      unbuilt.push(object);
      continue;
    }
    tables[file] = readSymbols(join(REPO, object));
  }
  return { tables, unbuilt };
}

/** An object's global symbols, by `nm -P`: { defines: [symbol], uses: [symbol] }. */
export function readSymbols(object) {
  const symbols = { defines: [], uses: [] };
  for (const line of execFileSync('nm', ['-P', object], { encoding: 'utf8' }).split('\n')) {
    const [symbol, type] = line.trim().split(/\s+/);
    if (type === 'U') symbols.uses.push(symbol);
    else if (/^[A-Z]$/.test(type ?? '') && type !== 'N') symbols.defines.push(symbol);
  }
  return symbols;
}

/**
 * Calls between files from their symbol tables: graph { file: { target:
 * [symbol] } } (a use of a symbol another file defines; library symbols
 * are no file's), and the violations: a call to a higher layer (ranked as
 * C_LAYERS), a symbol two files define.
 */
export function callGraph(tables) {
  const definer = {};
  const problems = [];
  for (const [file, { defines }] of Object.entries(tables)) {
    for (const symbol of defines) {
      if (definer[symbol] !== undefined) problems.push(`${symbol} is defined in both ${definer[symbol]} and ${file}`);
      else definer[symbol] = file;
    }
  }
  const graph = {};
  for (const [file, { uses }] of Object.entries(tables)) {
    graph[file] = {};
    for (const symbol of uses) {
      const target = definer[symbol];
      if (target !== undefined && target !== file) (graph[file][target] ??= []).push(symbol);
    }
    for (const [target, symbols] of Object.entries(graph[file])) {
      const rank = C_LAYERS.indexOf(cLayer(file));
      const targetRank = C_LAYERS.indexOf(cLayer(target));
      if (rank < 0 || targetRank < 0 || targetRank > rank) {
        problems.push(`${file} (${cLayer(file)}) calls ${someOf(symbols)} in ${target} `
          + `(${cLayer(target)}), a layer above it`);
      }
    }
  }
  return { graph, problems };
}

/** "call cycle: a -> b -> a (a -> b: f, g; b -> a: h)" for each cycle. */
export function callCycles(graph) {
  const files = Object.fromEntries(Object.entries(graph).map(([file, targets]) => [file, Object.keys(targets)]));
  return cycles(files).map((cycle) => {
    const calls = cycle.slice(1).map((target, i) => `${cycle[i]} -> ${target}: ${someOf(graph[cycle[i]][target])}`);
    return `call cycle: ${cycle.join(' -> ')} (${calls.join('; ')})`;
  });
}

/**
 * ARCHITECTURE.md names every C source and header: src/attention.h
 * anywhere, src/<layer>/<name> in the paragraph of its folder (the bullet
 * that starts with **`src/<layer>/`**), so that check.c in problem/ and in
 * check/ are each accounted for.
 */
export function unnamedFiles(files, architecture) {
  const paragraphs = {};
  for (const [, folder, text] of architecture.matchAll(/^- \*\*`(src\/[^`]+\/)`\*\*([\s\S]*?)(?=^- |^## |^$(?![\s\S]))/gm)) {
    paragraphs[folder] = (paragraphs[folder] ?? '') + text;
  }
  const names = (text, name) => new RegExp(`(^|[^\\w.])${name.replace(/[.*]/g, '\\$&')}(?![\\w])`).test(text);
  return files.filter((file) => {
    const folder = `${dirname(file)}/`;
    return folder === 'src/' ? !architecture.includes(file) : !names(paragraphs[folder] ?? '', basename(file));
  });
}

async function main() {
  const c = await cGraph();
  const web = await webGraph();
  const { tables, unbuilt } = await symbolTables();
  const calls = callGraph(tables);
  const sources = await filesUnder('src', /\.[ch]$/);
  const architecture = await readFile(join(REPO, 'ARCHITECTURE.md'), 'utf8');
  const problems = [
    ...unbuilt.map((object) => `${object} is missing or older than its source (make test-layers builds it)`),
    ...c.problems, ...calls.problems, ...web.problems,
    ...cycles(c.graph).map((cycle) => `include cycle: ${cycle.join(' -> ')}`),
    ...callCycles(calls.graph),
    ...cycles(web.graph).map((cycle) => `import cycle: ${cycle.join(' -> ')}`),
    ...await pageScriptProblems(),
    ...unnamedFiles(sources, architecture).map((file) => `ARCHITECTURE.md does not name ${file}`
      + (dirname(file) === 'src' ? '' : ` in its ${dirname(file)}/ paragraph`)),
  ];
  for (const problem of problems) console.error(`check-layers: ${problem}`);
  if (problems.length > 0) process.exit(1);
  console.log(`check-layers: ${Object.keys(c.graph).length} C files (${Object.keys(tables).length} objects) in ${C_LAYERS.join(' > ')}, `
    + `${Object.keys(web.graph).length} page modules in ${WEB_LAYERS.map(([name]) => name).join(' > ')}: `
    + 'no upward include, call or import, no cycle; index.html runs the page\'s bundles; '
    + 'ARCHITECTURE.md names every C file');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
