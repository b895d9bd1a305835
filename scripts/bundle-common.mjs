// One classic script from web/'s ES modules: the esbuild settings that the
// custom element's build (build-element.mjs) and the one-file page's build
// (build-single.mjs) share. Each passes its entry point, where the output
// goes and what import.meta.url stands for.

import * as esbuild from 'esbuild';

export function bundleClassicScript(options) {
  return esbuild.build({
    bundle: true,
    format: 'iife',
    minify: true,
    target: 'es2022',
    platform: 'browser',
    // Only reached in Node (attention.js reading a file: URL).
    external: ['node:*'],
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    ...options,
  });
}
