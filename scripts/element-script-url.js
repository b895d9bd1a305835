// Injected first into the custom element's bundle (scripts/build-element.mjs),
// where it stands for import.meta.url: the bundle's own address, read while
// the script runs (document.currentScript is null afterwards), so that the
// engine, KaTeX and the embed snippets resolve against where it was loaded from.
// Imported where there is no document (Node, server-side rendering), it has
// no address and the element is not defined.
export const scriptUrl = globalThis.document?.currentScript?.src || globalThis.document?.baseURI || '';
