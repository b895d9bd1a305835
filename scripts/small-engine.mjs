// The engine built small, for the builds that carry it inside themselves
// (the one-file page, scripts/build-single.mjs; the notebook and anywidget
// builds, scripts/build-element.mjs): the library again with -Oz by
// build.sh, exporting what the served module (web/lib/attention.wasm, -O2)
// exports but the language model's calls. build/attention-small.wasm is
// kept, so build.sh rebuilds it only when a source is newer.

import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const SERVED_WASM = join(REPO, 'web', 'lib', 'attention.wasm');
const SMALL_WASM = join(REPO, 'build', 'attention-small.wasm');

// Exports emscripten adds to every standalone module by itself.
const RUNTIME_EXPORTS = new Set(['_initialize', '__errno_location', 'stackSave', 'stackRestore', 'stackAlloc']);

function exportedFunctions(bytes) {
  return WebAssembly.Module.exports(new WebAssembly.Module(bytes))
    .filter(({ kind, name }) => kind === 'function' && !RUNTIME_EXPORTS.has(name))
    .map(({ name }) => name)
    .sort();
}

// The language model (attn.model) is in neither: the one-file page's chapter
// loads a model the file could not carry, and no widget of the element uses
// one. 28 KB of engine; attn.model there says which module has it.
const LEFT_OUT = /^attn_model_/;

function build() {
  execFileSync(join(REPO, 'build.sh'), [], {
    cwd: REPO,
    stdio: 'inherit',
    env: { ...process.env, ATTN_WASM_OUT: SMALL_WASM, ATTN_WASM_OPT: '-Oz', ATTN_WASM_LEAVE_OUT: LEFT_OUT.source },
  });
  return readFile(SMALL_WASM);
}

/** The small engine's bytes, built when missing or older than a source. */
export async function smallEngine() {
  const served = await readFile(SERVED_WASM).catch(() => {
    throw new Error('web/lib/attention.wasm is missing; run ./build.sh first');
  });
  const functions = exportedFunctions(served).filter((name) => !LEFT_OUT.test(name)).join();
  await mkdir(dirname(SMALL_WASM), { recursive: true });
  let small = await build();
  // Built before LEFT_OUT changed (build.sh only sees the sources): once more.
  if (exportedFunctions(small).join() !== functions) {
    await rm(SMALL_WASM);
    small = await build();
  }
  if (exportedFunctions(small).join() !== functions) {
    throw new Error('the -Oz module does not export what web/lib/attention.wasm exports but the model');
  }
  return small;
}
