// Scaled dot-product attention on several cores: the query rows split into
// blocks, each block run by its own instance of the engine in its own Web
// Worker (attention-worker.js), on top of attention.js's public sdpaFlat.
// K and V are copied to each worker once (setKeys), then every call sends
// each worker only its block of Q and gets back its block of the output.
// Plain messages, no SharedArrayBuffer: it works on any page that may start
// a worker, cross-origin isolated or not (embeds included).
//
//   const pool = await createAttentionPool({ size, spawn, wasmBinary })
//     spawn(): a new worker (postMessage, addEventListener, terminate),
//     wasmBinary: the engine's bytes, sent to each worker, which loads it
//   await pool.setKeys({ k, v, nK, dK, dV })
//   await pool.sdpa({ q, nQ, scale?, keyLength?, weights? })
//     -> { output, weights? }: what engine.sdpaFlat gives for the whole of q
//        (batch 1), to the bit: every row goes through the same kernel in
//        the same order as in one call (blocks start at multiples of
//        ROW_ALIGN, so each kernel groups the rows as it would in one call)
//   pool.close(): terminates the workers; a call in progress rejects with
//     PoolClosedError
//
//   serveAttention(port, load) is the worker's side: load(wasmBinary) gives
//   an engine (loadAttention), port is the worker's global scope.
//
// Masks that depend on where a query is (causal, local, strided, a custom
// pattern) are refused: a block's first row would be taken for query 0.

/** Rows per block are a multiple of this: 96 is a multiple of the rows every
 * float32 kernel takes at once (4, 12, 32). */
export const ROW_ALIGN = 96;
/** The most workers the page starts, however many cores the device reports. */
export const MAX_WORKERS = 8;

/** How many workers to start here: the device's cores, at most MAX_WORKERS. */
export function workerCount(navigator = globalThis.navigator) {
  const cores = Number(navigator?.hardwareConcurrency);
  return Number.isInteger(cores) && cores > 1 ? Math.min(cores, MAX_WORKERS) : 1;
}

/** What a call on a closed pool, or one in progress when it closed, rejects with. */
export class PoolClosedError extends Error {
  constructor() {
    super('the workers were stopped');
    this.name = 'PoolClosedError';
  }
}

const POSITIONAL = ['causal', 'window', 'stride', 'allowed', 'batch'];

/** [from, to) query rows per block: at most `parts` blocks, each but the last a multiple of ROW_ALIGN rows. */
export function rowBlocks(nQ, parts) {
  const rows = Math.ceil(Math.ceil(nQ / parts) / ROW_ALIGN) * ROW_ALIGN;
  const blocks = [];
  for (let from = 0; from < nQ; from += rows) blocks.push([from, Math.min(nQ, from + rows)]);
  return blocks;
}

// One worker: its requests answered in order, one at a time.
function connect(worker) {
  const waiting = [];
  let failure = null;
  const fail = (error) => {
    failure ??= error;
    for (const { reject } of waiting.splice(0)) reject(failure);
  };
  worker.addEventListener('message', (event) => {
    const { resolve, reject } = waiting.shift() ?? {};
    if (event.data.type === 'error') reject?.(new Error(event.data.message));
    else resolve?.(event.data);
  });
  // A worker whose script fails to load or throws outside a request.
  worker.addEventListener('error', (event) => {
    event.preventDefault?.();
    fail(new Error(`a worker stopped${event.message ? `: ${event.message}` : ''}`));
  });
  return {
    request(message, transfer = []) {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        worker.postMessage(message, transfer);
      });
    },
    close() {
      fail(new PoolClosedError());
      worker.terminate();
    },
  };
}

export async function createAttentionPool({ size, spawn, wasmBinary }) {
  const workers = [];
  const close = () => workers.forEach((worker) => worker.close());
  try {
    for (let i = 0; i < size; i++) workers.push(connect(spawn()));
    await Promise.all(workers.map((worker) => worker.request({ type: 'load', wasmBinary })));
  } catch (error) {
    close();
    throw error;
  }
  let keys = null;
  return {
    size,
    async setKeys({ k, v, nK, dK, dV }) {
      keys = { nK, dK, dV };
      await Promise.all(workers.map((worker) => worker.request({ type: 'keys', k, v, nK, dK, dV })));
    },
    async sdpa({ q, nQ, weights = false, ...options }) {
      const given = POSITIONAL.filter((name) => options[name] !== undefined);
      if (given.length > 0) throw new Error(`the workers split queries into blocks, so they cannot apply ${given.join(', ')}`);
      if (!keys) throw new Error('setKeys first: the workers have no keys');
      const { nK, dK, dV } = keys;
      const blocks = rowBlocks(nQ, workers.length);
      const parts = await Promise.all(blocks.map(([from, to], i) => {
        const block = q.slice(from * dK, to * dK);
        return workers[i].request({ type: 'rows', q: block, nQ: to - from, weights, options }, [block.buffer]);
      }));
      const Type = parts[0].output.constructor;
      const output = new Type(nQ * dV);
      const all = weights ? new Type(nQ * nK) : null;
      parts.forEach((part, i) => {
        output.set(part.output, blocks[i][0] * dV);
        all?.set(part.weights, blocks[i][0] * nK);
      });
      return weights ? { output, weights: all } : { output };
    },
    close,
  };
}

/** The worker's side: answers each message of the pool with one reply. */
export function serveAttention(port, load) {
  let engine = null;
  let keys = null;
  const answer = {
    async load({ wasmBinary }) {
      engine = await load(wasmBinary);
      return { type: 'loaded' };
    },
    keys({ k, v, nK, dK, dV }) {
      keys = { k, v, nK, dK, dV };
      return { type: 'ready' };
    },
    rows({ q, nQ, weights, options }) {
      const result = engine.sdpaFlat({ ...options, ...keys, q, nQ, weights });
      return { type: 'rows', ...result };
    },
  };
  // One message at a time, in order (a load is awaited before the next).
  let queue = Promise.resolve();
  port.addEventListener('message', (event) => {
    queue = queue.then(async () => {
      let reply;
      try {
        reply = await answer[event.data.type](event.data);
      } catch (error) {
        reply = { type: 'error', message: error.message };
      }
      const transfer = [reply.output?.buffer, reply.weights?.buffer].filter(Boolean);
      port.postMessage(reply, transfer);
    });
  });
  port.start?.();
}
