// Every test vector (tests/vectors/*.json) through the WASM engine: the
// exact values they record must come back within their tolerance.
import { test } from 'node:test';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { assertClose, loadEngine, nullsToMinusInfinity } from './support.mjs';

const DEFAULT_TOLERANCE = 1e-9; // relative, as in tests/support/allclose

// The shared vectors, and a few of our own computed offline (linear
// attention, which no tutorial works through).
function vectorFiles() {
  const shared = fileURLToPath(new URL('../vectors/', import.meta.url));
  let names = [];
  try {
    names = readdirSync(shared).filter((name) => name.endsWith('.json'));
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  return [...names.sort().map((name) => `${shared}${name}`),
          fileURLToPath(new URL('./fixtures/local-vectors.json', import.meta.url))];
}

for (const file of vectorFiles()) {
  const vectors = JSON.parse(readFileSync(file, 'utf8'));
  // Other records (claims.json's claims about printed numbers) have no input.
  for (const vector of vectors.filter((record) => record.input && record.expected)) {
    test(`vector ${vector.id} (${file.split('/').pop()}) matches its exact values in WASM`, async () => {
      const attn = await loadEngine();
      const result = attn.run(vector.input);
      const tolerance = typeof vector.tolerance === 'number' ? vector.tolerance : DEFAULT_TOLERANCE;
      assertClose(result, nullsToMinusInfinity(vector.expected), tolerance, vector.id);
    });
  }
}
