// The bad problems every binding is fed (tests/bindings/messages.test.mjs):
// JSON values only, so that the CLI, the JS API and Python all receive the
// same input. Each kind with a field of the wrong shape, one missing, one
// misspelt, an unknown field, a misspelt kind; misspelt masks and methods,
// and names with a NUL. Each is { input, todo }, todo naming why the
// bindings do not agree yet (issue 35: every message written once in C).
const Q = [[1, 0], [0, 1], [1, 1]];
const V = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
const W = [[1, 0], [0, 1]];

/** A good problem of each kind, to spoil one field at a time. */
export const GOOD = {
  scaledDotProduct: { kind: 'scaledDotProduct', q: Q, k: Q, v: V },
  weightedSum: { kind: 'weightedSum', weights: [0.2, 0.3, 0.5], v: V },
  multiHead: { kind: 'multiHead', x: Q, numHeads: 1, wq: W, wk: W, wv: W, wo: W },
  additive: { kind: 'additive', query: [1, 0], keys: Q, ws: W, wh: W, v: [1, 1] },
  luong: { kind: 'luong', query: [1, 0], keys: Q, method: 'dot' },
  linear: { kind: 'linear', q: Q, k: Q, v: V },
  softmax: { kind: 'softmax', x: [1, 2, 3] },
  transformerBlock: {
    kind: 'transformerBlock', x: Q, numHeads: 1, wq: W, wk: W, wv: W, wo: W,
    gamma1: [1, 1], w1: W, w2: W, gamma2: [1, 1],
  },
  onlineSoftmax: { kind: 'onlineSoftmax', q: Q, k: Q, v: V },
};

const NUL = 'the CLI and Python hand the library JSON text, whose \\u0000 it refuses; JS still sets each field itself, with its own text';

/** Spoilt values for a field holding a tensor, and why the bindings differ on it, if they do. */
const SPOILT_TENSORS = [
  [[[1, 0], [0, 1, 2]]],
  [[[[1, 0], [0, 1]], [[1, 0], [0]]]],
  [[[1, 0], ['0', 1]]],
  [[[1, 0], 1]],
  [[[1, 0], [null, 1]]],
  [[[[[1]]]]],
  [[]],
  [[[]]],
  [[[1, 2, 3, 4, 5, 6, 7]]],
  ['sideways'],
  [{ rows: 2 }],
];

function* spoilt() {
  for (const [kind, good] of Object.entries(GOOD)) {
    const tensors = Object.keys(good).filter((field) => Array.isArray(good[field]));
    for (const field of tensors) {
      for (const [value, todo] of SPOILT_TENSORS.slice(0, field === tensors[0] ? SPOILT_TENSORS.length : 4)) {
        // softmax takes any shape: a row of 7 is a batch of one
        if (kind !== 'softmax' || value.length !== 1 || value[0].length !== 7) {
          yield { input: { ...good, [field]: value }, todo };
        }
      }
      const { [field]: _dropped, ...missing } = good;
      yield { input: missing };
    }
    yield { input: { ...good, [`${Object.keys(good)[1]}s`]: [1] } }; // a misspelt field
    yield { input: { ...good, colour: 'blue' } };
    yield { input: { ...good, kind: `${kind}x` } };
  }
}

export const BAD_INPUTS = [
  ...spoilt(),
  { input: { ...GOOD.scaledDotProduct, mask: 'casual' } },
  { input: { ...GOOD.scaledDotProduct, mask: null }, todo: 'Python\u2019s None leaves a field out, as JS\u2019s undefined does' },
  { input: { ...GOOD.scaledDotProduct, mask: [[true, false], [false, true]] } },
  { input: { ...GOOD.scaledDotProduct, tokens: ['a', 'b'] } },
  { input: { ...GOOD.scaledDotProduct, dropout: 1.5 } },
  { input: { ...GOOD.luong, method: 'genral' } },
  { input: { kind: 'noSuchKind' } },
  { input: { kind: 3 } },
  { input: { q: Q } },
  { input: { ...GOOD.scaledDotProduct, tokens: ['a', 'b\u0000c', 'd'] }, todo: NUL },
  { input: { ...GOOD.luong, method: 'scaled\u0000dot' }, todo: NUL },
  { input: { kind: 'softmax\u0000x', x: [1, 2] }, todo: NUL },
  { input: { ...GOOD.softmax, 'x\u0000y': [1] }, todo: NUL },
];
