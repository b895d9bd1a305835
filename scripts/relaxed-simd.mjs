// Rewrites a module that Debian's emscripten 3.1.6 built with -mrelaxed-simd
// to relaxed SIMD's standard encoding, in place (build.sh, for the
// -relaxed.wasm builds). That compiler writes the fused multiply-add as the
// pre-standard f32x4.fma, 0xfd 0xaf 0x01, which no engine accepts today; the
// standard f32x4.relaxed_madd is 0xfd 0x105, LEB128 0x85 0x02: the same
// length, so every other byte of the module stays where it is.
//
// The rewrite replaces the three bytes wherever they occur in the code
// section, then proves it touched instructions only: wabt reads the result
// with relaxed SIMD on and validates it (a pre-standard opcode left over
// would be an unknown instruction), and its disassembly must hold exactly
// as many f32x4.relaxed_madd as bytes were rewritten. Three such bytes
// inside an immediate (a constant, an offset) would have been rewritten too
// but decode as no instruction, so the counts would differ.
//
//   node scripts/relaxed-simd.mjs FILE.wasm

import { readFile, writeFile } from 'node:fs/promises';

const PRE_STANDARD = [0xfd, 0xaf, 0x01];
const STANDARD = [0xfd, 0x85, 0x02];
const CODE_SECTION = 10;

// An unsigned LEB128 at bytes[at]: [value, the offset after it].
function leb(bytes, at) {
  let value = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, at];
  }
}

// [start, end) of the module's code section.
function codeSection(bytes) {
  for (let at = 8; at < bytes.length;) {
    const id = bytes[at];
    const [size, start] = leb(bytes, at + 1);
    if (id === CODE_SECTION) return [start, start + size];
    at = start + size;
  }
  throw new Error('relaxed-simd: the module has no code section');
}

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/relaxed-simd.mjs FILE.wasm');
  process.exit(2);
}
const bytes = new Uint8Array(await readFile(file));
const [start, end] = codeSection(bytes);
let rewritten = 0;
for (let at = start; at + PRE_STANDARD.length <= end; at++) {
  if (PRE_STANDARD.every((byte, i) => bytes[at + i] === byte)) {
    bytes.set(STANDARD, at);
    rewritten++;
  }
}

// wabt is a devDependency: say so where npm ci has not run.
const wabtInit = await import('wabt').then((module) => module.default, () => {
  console.error('relaxed-simd: needs wabt from npm (run npm ci) to check the rewritten module');
  process.exit(1);
});
const wabt = await wabtInit();
let text;
try {
  const module = wabt.readWasm(bytes, { readDebugNames: false, simd: true, relaxed_simd: true });
  module.validate();
  text = module.toText({});
  module.destroy();
} catch (error) {
  console.error(`relaxed-simd: ${file} does not validate after the rewrite: ${error.message}`);
  process.exit(1);
}
const madds = text.split('f32x4.relaxed_madd').length - 1;
if (rewritten === 0 || madds !== rewritten) {
  console.error(`relaxed-simd: ${file}: rewrote ${rewritten} byte sequences but the module holds ${madds} `
    + 'f32x4.relaxed_madd (none rewritten, or some were not instructions)');
  process.exit(1);
}
await writeFile(file, bytes);
console.log(`relaxed-simd: ${file}: ${rewritten} f32x4.relaxed_madd`);
