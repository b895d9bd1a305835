// Where the custom element (attention-walkthrough.js) finds what it loads
// at run time: the engine (the build that runs here: lib/engine-file.js),
// KaTeX's module and KaTeX's fonts, and where WebAssembly is off the
// build's walkthroughs.
//
// This file is only ever bundled into web/dist/ (scripts/build-element.mjs),
// so each URL is written relative to the built script there, as
// new URL('<literal>', import.meta.url): the form Vite, webpack and Parcel
// recognise in a dependency, copying the file into the app's output and
// rewriting the URL, so an app that imports the element needs no attribute.
// A base (the element's base attribute or the class's assetBase: the folder
// of attention.wasm, KaTeX in ../vendor/katex/) replaces all of them.
// The notebook and anywidget builds put an inline engine in this module's
// place (build-element.mjs).

import { engineFile, engineUrl } from './lib/engine-file.js';

// KaTeX's woff2 fonts (build-element.mjs checks this list against
// web/vendor/katex/fonts/): each its own literal for the bundlers above.
const bundledFonts = () => ({
  'KaTeX_AMS-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_AMS-Regular.woff2', import.meta.url),
  'KaTeX_Caligraphic-Bold.woff2': new URL('../vendor/katex/fonts/KaTeX_Caligraphic-Bold.woff2', import.meta.url),
  'KaTeX_Caligraphic-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Caligraphic-Regular.woff2', import.meta.url),
  'KaTeX_Fraktur-Bold.woff2': new URL('../vendor/katex/fonts/KaTeX_Fraktur-Bold.woff2', import.meta.url),
  'KaTeX_Fraktur-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Fraktur-Regular.woff2', import.meta.url),
  'KaTeX_Main-Bold.woff2': new URL('../vendor/katex/fonts/KaTeX_Main-Bold.woff2', import.meta.url),
  'KaTeX_Main-BoldItalic.woff2': new URL('../vendor/katex/fonts/KaTeX_Main-BoldItalic.woff2', import.meta.url),
  'KaTeX_Main-Italic.woff2': new URL('../vendor/katex/fonts/KaTeX_Main-Italic.woff2', import.meta.url),
  'KaTeX_Main-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Main-Regular.woff2', import.meta.url),
  'KaTeX_Math-BoldItalic.woff2': new URL('../vendor/katex/fonts/KaTeX_Math-BoldItalic.woff2', import.meta.url),
  'KaTeX_Math-Italic.woff2': new URL('../vendor/katex/fonts/KaTeX_Math-Italic.woff2', import.meta.url),
  'KaTeX_SansSerif-Bold.woff2': new URL('../vendor/katex/fonts/KaTeX_SansSerif-Bold.woff2', import.meta.url),
  'KaTeX_SansSerif-Italic.woff2': new URL('../vendor/katex/fonts/KaTeX_SansSerif-Italic.woff2', import.meta.url),
  'KaTeX_SansSerif-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_SansSerif-Regular.woff2', import.meta.url),
  'KaTeX_Script-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Script-Regular.woff2', import.meta.url),
  'KaTeX_Size1-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Size1-Regular.woff2', import.meta.url),
  'KaTeX_Size2-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Size2-Regular.woff2', import.meta.url),
  'KaTeX_Size3-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Size3-Regular.woff2', import.meta.url),
  'KaTeX_Size4-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Size4-Regular.woff2', import.meta.url),
  'KaTeX_Typewriter-Regular.woff2': new URL('../vendor/katex/fonts/KaTeX_Typewriter-Regular.woff2', import.meta.url),
});

/**
 * base: a URL (the folder of attention.wasm) or null for the bundled places.
 * -> { engine(): loadAttention's options (or a promise of them), katex: KaTeX's module URL or null
 *      (formulas only as typeset in advance), font(name): a font's URL, walkthroughs: the folder of
 *      the build's walkthroughs (web/dist/walkthroughs/), read where WebAssembly is off }
 */
export function elementAssets(base) {
  if (base) {
    return {
      engine: () => ({ wasmUrl: new URL(engineFile('attention'), base).href }),
      katex: new URL('../vendor/katex/katex.mjs', base),
      font: (name) => new URL(`../vendor/katex/fonts/${name}`, base),
      walkthroughs: new URL('walkthroughs/', base),
    };
  }
  const fonts = bundledFonts();
  return {
    engine: () => {
      // engine-file.js's literals, bundled here, name the copies beside the bundle.
      return { wasmUrl: engineUrl().href };
    },
    katex: new URL('../vendor/katex/katex.mjs', import.meta.url),
    font: (name) => fonts[name],
    // The build's walkthroughs, beside the bundle (a bundler copies no folder: an app that wants them gives a base).
    walkthroughs: new URL('./walkthroughs/', import.meta.url),
  };
}
