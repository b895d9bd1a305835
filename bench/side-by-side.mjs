// Timing several implementations of scaled dot-product attention side by
// side in one process, their samples taken in turn, so that whatever else
// the machine does falls on all of them alike: the inputs, the two WASM
// peers' calls and the rounds. No Node API here: bench/impl.mjs runs it in
// Node (CPU time), bench/browser-side-by-side.mjs in the browsers (wall
// time), each with its own clock and its own way of loading the peers.

export const D = 64;

// The generator of bench_sdpa.c: uniform in [-1, 1) from a 64-bit LCG.
function uniformFiller(seed) {
  let state = BigInt(seed);
  return (length) => {
    const x = new Float64Array(length);
    for (let i = 0; i < length; i++) {
      state = BigInt.asUintN(64, state * 6364136223846793005n + 1442695040888963407n);
      x[i] = Number(state >> 11n) / 9007199254740992 * 2 - 1;
    }
    return x;
  };
}

/** q, k and v of T rows of D, the same for every implementation. */
export function inputs(t) {
  const fill = uniformFiller(42);
  return { q: fill(t * D), k: fill(t * D), v: fill(t * D) };
}

/** The engine's sdpaFlat on case c's inputs as arrays of Type. */
export function engineCall(attn, { t, causal }, Type) {
  const { q, k, v } = inputs(t);
  const args = { q: Type.from(q), k: Type.from(k), v: Type.from(v), nQ: t, nK: t, dK: D, dV: D, causal };
  return () => attn.sdpaFlat(args);
}

/**
 * onnxruntime's prepare(c) -> { call, release } for a full case c (the
 * model has no mask): `ort` is onnxruntime-web or -node, `model(t, d)` the
 * model's bytes (bench/onnx_model.mjs).
 */
export const onnxRuntime = (ort, sessionOptions, model) => async ({ t }) => {
  const session = await ort.InferenceSession.create(model(t, D), sessionOptions);
  const { q, k, v } = inputs(t);
  const feeds = {
    q: new ort.Tensor('float32', Float32Array.from(q), [t, D]),
    k: new ort.Tensor('float32', Float32Array.from(k), [t, D]),
    v: new ort.Tensor('float32', Float32Array.from(v), [t, D]),
  };
  return {
    call: async () => {
      const { output } = await session.run(feeds);
      return output.data;
    },
    release: () => session.release(),
  };
};

/** tfjs's prepare(c) -> { call, release } for a full case c, `tf` on its wasm backend. */
export const tfjs = (tf) => ({ t }) => {
  const { q, k, v } = inputs(t);
  const qt = tf.tensor2d(Float32Array.from(q), [t, D]);
  const kt = tf.tensor2d(Float32Array.from(k), [t, D]);
  const vt = tf.tensor2d(Float32Array.from(v), [t, D]);
  const scale = 1 / Math.sqrt(D);
  // matMul(a, transpose(b)) rather than transposeB: far faster in 4.22.
  const call = () => {
    const output = tf.tidy(() => tf.matMul(tf.softmax(tf.matMul(tf.mul(qt, scale), tf.transpose(kt))), vt));
    const data = output.dataSync();
    output.dispose();
    return data;
  };
  return { call, release: () => tf.dispose([qt, kt, vt]) };
};

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

/**
 * For each of `sizes`, every contender ({ name, prepare(c) }) warmed, then
 * `rounds` rounds of one sample each in turn (clock: { warm(call),
 * sample(call) -> seconds per call }): per size, each contender's median
 * time in ms and the median over the rounds of its time over the first
 * one's. Returns [{ t, rows: [{ name, ms, ratio }] }].
 */
export async function sideBySide({ contenders, sizes, rounds, clock }) {
  const results = [];
  for (const t of sizes) {
    const runs = [];
    for (const { prepare } of contenders) runs.push(await prepare({ t, causal: false }));
    for (const { call } of runs) await clock.warm(call);
    const times = runs.map(() => []);
    for (let s = 0; s < rounds; s++) {
      for (const [i, { call }] of runs.entries()) times[i].push(await clock.sample(call));
    }
    for (const { release } of runs) await release();
    results.push({ t, rows: contenders.map(({ name }, i) => ({
      name, ms: median(times[i]) * 1e3, ratio: median(times[i].map((time, s) => time / times[0][s])),
    })) });
  }
  return results;
}

/** sideBySide's results as lines of text, one per contender and size. */
export function sideBySideLines(results) {
  return results.flatMap(({ t, rows }) => rows.map(({ name, ms, ratio }) =>
    `  T=${String(t).padEnd(5)} ${name.padEnd(48)} ${ms.toFixed(2).padStart(8)} ms  × ${ratio.toFixed(2)}`));
}
