// One classic script, or one ES module, from web/'s ES modules: the esbuild
// settings that the custom element's builds (build-element.mjs) and the
// one-file page's build (build-single.mjs) share. Each passes its entry
// point, where the output goes and, for a classic script, what
// import.meta.url stands for.

import * as esbuild from 'esbuild';

const COMMON = {
  bundle: true,
  minify: true,
  target: 'es2022',
  platform: 'browser',
  // Only reached in Node (attention.js reading a file: URL).
  external: ['node:*'],
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
};

export function bundleClassicScript(options) {
  return esbuild.build({ ...COMMON, format: 'iife', ...options });
}

/** An ES module: import.meta.url stays the module's own address; the dynamic imports of web/ are inlined. */
export function bundleModule(options) {
  return esbuild.build({ ...COMMON, format: 'esm', ...options });
}

