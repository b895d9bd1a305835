// Random problems of every kind and option, drawn from a seed, for comparing
// the WASM engine with the native CLI.
import { randomSource } from './support.mjs';

const batchOf = (count, make) => Array.from({ length: count }, make);

function sdpaProblems(r) {
  const n = r.integer(1, 6);
  const nK = r.integer(1, 6);
  const dK = r.integer(1, 5);
  const dV = r.integer(1, 5);
  const q = r.matrix(n, dK, -3, 3);
  const k = r.matrix(nK, dK, -3, 3);
  const v = r.matrix(nK, dV, -3, 3);
  const square = { q, k: r.matrix(n, dK, -3, 3), v: r.matrix(n, dV, -3, 3) };
  const kind = 'scaledDotProduct';
  const allowed = batchOf(n, () => batchOf(nK, () => r.uniform(0, 1) < 0.6));
  return [
    { kind, q, k, v },
    { kind, q, k, v, scale: r.uniform(-2, 2) },
    { kind, q, k, v, scale: false, mask: allowed },
    { kind, q, k, v, keyLength: r.integer(0, nK) },
    { kind, ...square, mask: 'causal' },
    { kind, ...square, window: r.integer(0, 2) },
    { kind, ...square, stride: r.integer(1, 3), scale: true },
    { kind, q: batchOf(2, () => r.matrix(n, dK, -3, 3)), k: batchOf(2, () => r.matrix(nK, dK, -3, 3)),
      v: batchOf(2, () => r.matrix(nK, dV, -3, 3)), keyLength: [r.integer(0, nK), nK] },
    { kind, scores: r.matrix(n, nK, -5, 5), v, dk: dK },
    { kind, scores: r.matrix(n, nK, -5, 5), mask: allowed, scale: r.uniform(0.1, 1) },
  ];
}

function multiHeadProblems(r) {
  const numHeads = r.integer(1, 3);
  const dModel = numHeads * r.integer(1, 3);
  const [n, nKv, dIn, dKvIn, dOut] = [r.integer(1, 5), r.integer(1, 5), r.integer(1, 4),
                                      r.integer(1, 4), r.integer(1, 4)];
  const self = {
    kind: 'multiHead', x: r.matrix(n, dIn), numHeads,
    wq: r.matrix(dIn, dModel), wk: r.matrix(dIn, dModel), wv: r.matrix(dIn, dModel),
    wo: r.matrix(dModel, dOut),
  };
  const biases = {
    bq: r.vector(dModel), bk: r.vector(dModel), bv: r.vector(dModel), bo: r.vector(dOut),
  };
  const cross = {
    ...self, xkv: r.matrix(nKv, dKvIn), wk: r.matrix(dKvIn, dModel), wv: r.matrix(dKvIn, dModel),
  };
  return [self, { ...self, ...biases, mask: 'causal' }, { ...cross, ...biases }];
}

function recurrentProblems(r) {
  const [nQ, nK, dS, dH, dA] = [r.integer(1, 3), r.integer(1, 5), r.integer(1, 4),
                                r.integer(1, 4), r.integer(1, 4)];
  const query = r.matrix(nQ, dS);
  const keys = r.matrix(nK, dH);
  return [
    { kind: 'additive', query, keys, ws: r.matrix(dS, dA), wh: r.matrix(dH, dA), v: r.vector(dA) },
    { kind: 'additive', query: r.vector(dS), keys, ws: r.matrix(dS, dA), wh: r.matrix(dH, dA),
      v: r.vector(dA), b: r.vector(dA) },
    { kind: 'luong', query: r.matrix(nQ, dH), keys, method: 'dot' },
    { kind: 'luong', query, keys, method: 'general', w: r.matrix(dH, dS) },
    { kind: 'luong', query, keys, method: 'concat', w: r.matrix(dS + dH, dA), v: r.vector(dA),
      b: r.vector(dA) },
  ];
}

function otherProblems(r) {
  const [n, nK, dK, dV] = [r.integer(1, 5), r.integer(1, 5), r.integer(1, 4), r.integer(1, 4)];
  return [
    { kind: 'linear', q: r.matrix(n, dK, -2, 2), k: r.matrix(nK, dK, -2, 2), v: r.matrix(nK, dV) },
    { kind: 'linear', q: r.matrix(n, dK, -2, 2), k: r.matrix(n, dK, -2, 2), v: r.matrix(n, dV),
      causal: true },
    { kind: 'softmax', x: r.vector(nK, -10, 10) },
    { kind: 'softmax', x: r.matrix(n, nK, -10, 10), scale: r.uniform(0.1, 2) },
    { kind: 'weightedSum', weights: r.matrix(n, nK, 0, 1), v: r.matrix(nK, dV) },
    { kind: 'onlineSoftmax', q: r.matrix(n, dK, -3, 3), k: r.matrix(nK + 2, dK, -3, 3), v: r.matrix(nK + 2, dV),
      tile: r.integer(1, 3) },
  ];
}

/** Problems of every kind drawn from seed. */
export function randomProblems(seed) {
  const r = randomSource(seed);
  return [...sdpaProblems(r), ...multiHeadProblems(r), ...recurrentProblems(r), ...otherProblems(r)];
}
