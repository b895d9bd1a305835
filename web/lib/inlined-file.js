// A file carried inside a build, gzipped and written as base64 (the one-file
// page, scripts/build-single.mjs; the notebook and anywidget builds,
// scripts/build-element.mjs), unpacked as a Response to read it from.

export function inlinedFile(base64) {
  const packed = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return new Response(new Blob([packed]).stream().pipeThrough(new DecompressionStream('gzip')));
}
