// The engine's attention-only training model (embedding + learned
// positions, layers of x + MHA(x), an unembedding, cross-entropy over the
// counted positions, Adam with the gradient clipped to norm 1) written in
// plain JavaScript with Float64Arrays: the "plain JS" peer of
// bench/train.mjs. A benchmark peer only; the page never uses it.

function normal(random) {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** out [m, n] = a [m, k] · b [k, n] (+ bias [n]). */
function matmul(out, a, b, m, k, n, bias = null) {
  for (let i = 0; i < m; i++) {
    const row = i * n;
    for (let c = 0; c < n; c++) out[row + c] = bias ? bias[c] : 0;
    for (let p = 0; p < k; p++) {
      const x = a[i * k + p];
      const br = p * n;
      for (let c = 0; c < n; c++) out[row + c] += x * b[br + c];
    }
  }
}

/** out [k, n] += aᵀ · b, a [m, k], b [m, n]. */
function matmulTnAdd(out, a, b, m, k, n) {
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const x = a[i * k + p];
      for (let c = 0; c < n; c++) out[p * n + c] += x * b[i * n + c];
    }
  }
}

/** out [m, k] (+)= a [m, n] · bᵀ, b [k, n]. */
function matmulNt(out, a, b, m, n, k, add = false) {
  for (let i = 0; i < m; i++) {
    for (let c = 0; c < k; c++) {
      let sum = 0;
      for (let p = 0; p < n; p++) sum += a[i * n + p] * b[c * n + p];
      out[i * k + c] = add ? out[i * k + c] + sum : sum;
    }
  }
}

function colsumAdd(out, a, m, n) {
  for (let i = 0; i < m; i++) for (let c = 0; c < n; c++) out[c] += a[i * n + c];
}

export function plainModel(config, random) {
  const { vocab: V, seqLength: T, dModel: d, heads: H, layers: L, causal, learningRate } = config;
  const dh = d / H;
  const scale = config.scale ? 1 / Math.sqrt(dh) : 1;
  const shapes = [['embed', V * d, 1], ['position', T * d, 1]];
  for (let l = 0; l < L; l++) {
    for (const w of ['wq', 'wk', 'wv', 'wo']) shapes.push([`${w}${l}`, d * d, 1 / Math.sqrt(d)]);
    for (const b of ['bq', 'bk', 'bv', 'bo']) shapes.push([`${b}${l}`, d, 0]);
  }
  shapes.push(['unembed', d * V, 1 / Math.sqrt(d)], ['bias', V, 0]);
  const params = {};
  const grads = {};
  const m1 = {};
  const m2 = {};
  for (const [name, size, deviation] of shapes) {
    params[name] = Float64Array.from({ length: size }, () => deviation * normal(random));
    grads[name] = new Float64Array(size);
    m1[name] = new Float64Array(size);
    m2[name] = new Float64Array(size);
  }
  let step = 0;

  function forward(tokens, B) {
    const R = B * T;
    const h = new Float64Array(R * d);
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < d; c++) h[r * d + c] = params.embed[tokens[r] * d + c] + params.position[(r % T) * d + c];
    }
    const acts = [h];
    const caches = [];
    for (let l = 0; l < L; l++) {
      const x = acts[l];
      const [q, k, v] = ['q', 'k', 'v'].map((p) => {
        const out = new Float64Array(R * d);
        matmul(out, x, params[`w${p}${l}`], R, d, d, params[`b${p}${l}`]);
        return out;
      });
      const weights = new Float64Array(B * H * T * T);
      const concat = new Float64Array(R * d);
      for (let b = 0; b < B; b++) {
        for (let hd = 0; hd < H; hd++) {
          for (let i = 0; i < T; i++) {
            const w = weights.subarray(((b * H + hd) * T + i) * T, ((b * H + hd) * T + i + 1) * T);
            let top = -Infinity;
            for (let j = 0; j < T; j++) {
              if (causal && j > i) { w[j] = -Infinity; continue; }
              let s = 0;
              for (let c = 0; c < dh; c++) s += q[(b * T + i) * d + hd * dh + c] * k[(b * T + j) * d + hd * dh + c];
              w[j] = s * scale;
              if (w[j] > top) top = w[j];
            }
            let sum = 0;
            for (let j = 0; j < T; j++) { w[j] = w[j] === -Infinity ? 0 : Math.exp(w[j] - top); sum += w[j]; }
            for (let j = 0; j < T; j++) w[j] /= sum;
            for (let c = 0; c < dh; c++) {
              let o = 0;
              for (let j = 0; j < T; j++) o += w[j] * v[(b * T + j) * d + hd * dh + c];
              concat[(b * T + i) * d + hd * dh + c] = o;
            }
          }
        }
      }
      const y = new Float64Array(R * d);
      matmul(y, concat, params[`wo${l}`], R, d, d, params[`bo${l}`]);
      for (let i = 0; i < R * d; i++) y[i] += x[i];
      acts.push(y);
      caches.push({ q, k, v, weights, concat });
    }
    const logits = new Float64Array(R * V);
    matmul(logits, acts[L], params.unembed, R, d, V, params.bias);
    return { acts, caches, logits };
  }

  function backward(tokens, B, { acts, caches }, dLogits) {
    const R = B * T;
    for (const g of Object.values(grads)) g.fill(0);
    matmulTnAdd(grads.unembed, acts[L], dLogits, R, d, V);
    colsumAdd(grads.bias, dLogits, R, V);
    let dy = new Float64Array(R * d);
    matmulNt(dy, dLogits, params.unembed, R, V, d);
    for (let l = L - 1; l >= 0; l--) {
      const x = acts[l];
      const { q, k, v, weights, concat } = caches[l];
      const dx = Float64Array.from(dy); // the residual
      matmulTnAdd(grads[`wo${l}`], concat, dy, R, d, d);
      colsumAdd(grads[`bo${l}`], dy, R, d);
      const dConcat = new Float64Array(R * d);
      matmulNt(dConcat, dy, params[`wo${l}`], R, d, d);
      const dq = new Float64Array(R * d);
      const dk = new Float64Array(R * d);
      const dv = new Float64Array(R * d);
      const dP = new Float64Array(T);
      for (let b = 0; b < B; b++) {
        for (let hd = 0; hd < H; hd++) {
          for (let i = 0; i < T; i++) {
            const w = weights.subarray(((b * H + hd) * T + i) * T, ((b * H + hd) * T + i + 1) * T);
            const dO = (c) => dConcat[(b * T + i) * d + hd * dh + c];
            let dot = 0;
            for (let j = 0; j < T; j++) {
              let s = 0;
              for (let c = 0; c < dh; c++) {
                s += dO(c) * v[(b * T + j) * d + hd * dh + c];
                dv[(b * T + j) * d + hd * dh + c] += w[j] * dO(c);
              }
              dP[j] = s;
              dot += s * w[j];
            }
            for (let j = 0; j < T; j++) {
              const dS = w[j] * (dP[j] - dot) * scale;
              if (dS === 0) continue;
              for (let c = 0; c < dh; c++) {
                dq[(b * T + i) * d + hd * dh + c] += dS * k[(b * T + j) * d + hd * dh + c];
                dk[(b * T + j) * d + hd * dh + c] += dS * q[(b * T + i) * d + hd * dh + c];
              }
            }
          }
        }
      }
      for (const [p, dp] of [['q', dq], ['k', dk], ['v', dv]]) {
        matmulTnAdd(grads[`w${p}${l}`], x, dp, R, d, d);
        colsumAdd(grads[`b${p}${l}`], dp, R, d);
        matmulNt(dx, dp, params[`w${p}${l}`], R, d, d, true);
      }
      dy = dx;
    }
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < d; c++) {
        grads.embed[tokens[r] * d + c] += dy[r * d + c];
        grads.position[(r % T) * d + c] += dy[r * d + c];
      }
    }
  }

  function adam() {
    let norm = 0;
    for (const g of Object.values(grads)) for (const x of g) norm += x * x;
    const clip = Math.sqrt(norm) > 1 ? 1 / Math.sqrt(norm) : 1;
    step += 1;
    const c1 = 1 - 0.9 ** step;
    const c2 = 1 - 0.999 ** step;
    for (const name of Object.keys(params)) {
      const p = params[name];
      const g = grads[name];
      for (let i = 0; i < p.length; i++) {
        const gi = g[i] * clip;
        m1[name][i] = 0.9 * m1[name][i] + 0.1 * gi;
        m2[name][i] = 0.999 * m2[name][i] + 0.001 * gi * gi;
        p[i] -= (learningRate * (m1[name][i] / c1)) / (Math.sqrt(m2[name][i] / c2) + 1e-8);
      }
    }
  }

  /** Cross-entropy over counted positions; dLogits when asked. */
  function loss(logits, targets, counted, withGradient) {
    const total = counted.reduce((a, c) => a + (c ? 1 : 0), 0);
    const dLogits = withGradient ? new Float64Array(logits.length) : null;
    let right = 0;
    for (let r = 0; r < targets.length; r++) {
      const z = logits.subarray(r * V, (r + 1) * V);
      let best = 0;
      for (let c = 1; c < V; c++) if (z[c] > z[best]) best = c;
      if (counted[r] && best === targets[r]) right += 1;
      if (!withGradient || !counted[r]) continue;
      let sum = 0;
      for (let c = 0; c < V; c++) sum += Math.exp(z[c] - z[best]);
      for (let c = 0; c < V; c++) {
        dLogits[r * V + c] = (Math.exp(z[c] - z[best]) / sum - (c === targets[r] ? 1 : 0)) / total;
      }
    }
    return { right, total, dLogits };
  }

  return {
    step(tokens, targets, B) {
      const pass = forward(tokens, B);
      const { dLogits } = loss(pass.logits, targets, targets.map(() => true), true);
      backward(tokens, B, pass, dLogits);
      adam();
    },
    accuracy(examples) {
      const tokens = examples.flatMap((e) => e.tokens);
      const { logits } = forward(tokens, examples.length);
      const { right, total } = loss(logits, examples.flatMap((e) => e.targets), examples.flatMap((e) => e.counted),
          false);
      return right / total;
    },
  };
}
