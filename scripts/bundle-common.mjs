// One classic script, or one ES module, from web/'s ES modules: the esbuild
// settings that the custom element's builds (build-element.mjs) and the
// one-file page's build (build-single.mjs) share. Each passes its entry
// point, where the output goes and, for a classic script, what
// import.meta.url stands for; and packedScript, which carries a classic
// script compressed.

import { gzipSync } from 'node:zlib';
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


/**
 * A classic script that carries `code` (a classic script) gzipped at level 9
 * as base64, a third of its size, and runs it once the browser's
 * DecompressionStream has unpacked it: as an inline script of its own, so
 * a page that lets this one run inline (the one-file page, a notebook's
 * output cell) lets it run too, and no eval is needed. With `once`, a
 * global's name, a copy of the script on a page where one has run already
 * unpacks nothing (another notebook cell's, even while the first is still
 * unpacking). The script it runs finds where this one came from in
 * data-script-url (element-script-url.js).
 */
export function packedScript(code, { once = null } = {}) {
  const base64 = gzipSync(code, { level: 9 }).toString('base64');
  const first = once ? `if(globalThis.${once})return;globalThis.${once}=true;` : '';
  return `(()=>{${first}const u=document.currentScript?.src;`
    + `new Response(new Blob([Uint8Array.from(atob("${base64}"),(c)=>c.charCodeAt(0))]).stream()`
    + '.pipeThrough(new DecompressionStream("gzip"))).text().then((t)=>{'
    + 'const s=document.createElement("script");if(u)s.dataset.scriptUrl=u;s.textContent=t;document.head.append(s);s.remove()})})();';
}
