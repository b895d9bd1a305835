// Injected first into the custom element's bundle (scripts/build-element.mjs),
// where it stands for import.meta.url: the bundle's own address, read while
// the script runs (document.currentScript is null afterwards), so that the
// engine, KaTeX and the embed snippets resolve against where it was loaded from
// (a packed build's loader passes its own address on: bundle-common.mjs).
// Imported where there is no document (Node, server-side rendering), it has
// no address and the element is not defined.
const script = globalThis.document?.currentScript;
export const scriptUrl = script?.src || script?.dataset.scriptUrl || globalThis.document?.baseURI || '';
