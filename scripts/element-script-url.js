// Injected first into the custom element's bundle (scripts/build-element.mjs),
// where it stands for import.meta.url: the bundle's own address, read while
// the script runs (document.currentScript is null afterwards), so that the
// engine, KaTeX and the embed snippets resolve against where it was loaded from.
export const scriptUrl = document.currentScript?.src || document.baseURI;
