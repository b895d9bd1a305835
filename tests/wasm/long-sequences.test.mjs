// web/lib/long-sequences.js, which the "Cheaper attention" section's worker
// runs: what it reports for each size, checked against what each method
// must hold (the times are only checked to be times).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { loadAttention } from '../../web/lib/attention-node.js';
import { FULL_WEIGHTS_LIMIT, measureLongSequences } from '../../web/lib/long-sequences.js';

const PAGE_MODULE = fileURLToPath(new URL('../../web/lib/attention-page.wasm', import.meta.url));

test('each size reports full, online and linear attention with the memory each must hold, full stopping at its limit', async () => {
  const wasmBinary = await readFile(PAGE_MODULE);
  const heard = [];
  await measureLongSequences({ newEngine: () => loadAttention({ wasmBinary }), post: (message) => heard.push(message),
      sizes: [256, 8192], d: 8 });
  assert.deepEqual(heard.map(({ type, T, method }) => [type, T, method]), [
    ['row', 256, 'full'], ['row', 256, 'online'], ['row', 256, 'linear'],
    ['skipped', 8192, 'full'], ['row', 8192, 'online'], ['row', 8192, 'linear'], ['done', undefined, undefined],
  ]);
  const at = (T, method) => heard.find((message) => message.T === T && message.method === method);
  assert.equal(at(8192, 'full').bytes, 4 * 8192 * 8192);
  assert.ok(at(8192, 'full').bytes > FULL_WEIGHTS_LIMIT && 4 * 4096 * 4096 <= FULL_WEIGHTS_LIMIT, 'the limit falls between 4096 and 8192');
  for (const T of [256, 8192]) {
    for (const method of ['online', 'linear']) {
      const { ms, bytes } = at(T, method);
      assert.ok(ms > 0, `${method} at ${T}: ${ms} ms`);
      // q, k, v and the output, 4·T·d bytes each, and a working space that does not grow with T².
      assert.ok(bytes >= 16 * T * 8 && bytes < 16 * T * 8 + 4 * T * 64, `${method} at ${T}: ${bytes} bytes`);
    }
  }
  assert.ok(at(256, 'full').bytes >= 4 * 256 * 256 + 16 * 256 * 8, `full at 256: ${at(256, 'full').bytes} bytes`);
});

test('a failing engine is reported as an error message, not thrown', async () => {
  const heard = [];
  await measureLongSequences({ newEngine: async () => { throw new Error('no engine here'); }, post: (message) => heard.push(message), sizes: [256] });
  assert.deepEqual(heard, [{ type: 'error', message: 'no engine here' }]);
});
