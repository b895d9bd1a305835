// element-assets.js for the builds that must load nothing from beside
// themselves (scripts/build-element.mjs puts this module in its place): the
// notebook build, written into an output cell, and the anywidget module,
// which a host loads from text. The engine comes gzipped inside the bundle
// (the virtual module `attention-inline:engine`); there is no KaTeX, the
// formulas being typeset in advance as MathML.

import wasmGzip from 'attention-inline:engine';
import { inlinedFile } from './lib/inlined-file.js';

export function elementAssets() {
  return {
    engine: async () => ({ wasmBinary: await inlinedFile(wasmGzip).arrayBuffer() }),
    katex: null,
    font: () => {
      throw new Error('the self-contained element has no KaTeX fonts');
    },
    // No build's walkthroughs: without WebAssembly it says so.
    walkthroughs: null,
  };
}
