// A Llama decoder in plain float64 JavaScript, written from Hugging Face's
// modeling_llama.py (not from the engine): weights in the checkpoint's
// [out, in] layout, rotate_half over cos and sin tables, repeat_kv, a
// causal softmax. The CLI tests compare `attn model` with it.

const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

/** W [out, in] (flat) times x [in]. */
function linear({ shape: [out, inn], values }, x) {
  return Array.from({ length: out }, (_, o) => dot(values.slice(o * inn, (o + 1) * inn), x));
}

function rmsNorm(x, { values: weight }, eps) {
  const scale = 1 / Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length + eps);
  return x.map((v, i) => weight[i] * v * scale);
}

/** apply_rotary_pos_emb on one head: x cos + rotate_half(x) sin. */
function rope(x, position, theta) {
  const d = x.length;
  const half = d / 2;
  const freqs = Array.from({ length: half }, (_, i) => position / theta ** ((2 * i) / d));
  const angles = [...freqs, ...freqs];
  const rotated = [...x.slice(half).map((v) => -v), ...x.slice(0, half)];
  return x.map((v, i) => v * Math.cos(angles[i]) + rotated[i] * Math.sin(angles[i]));
}

const silu = (z) => z / (1 + Math.exp(-z));

/**
 * The model on ids: attention [layer][head][query][key] (0 after the
 * query) and logits [position][vocab].
 */
export function llamaForward(config, tensors, ids) {
  const t = (name) => tensors[name];
  const heads = config.num_attention_heads;
  const kvHeads = config.num_key_value_heads;
  const d = config.hidden_size / heads;
  const eps = config.rms_norm_eps;
  const n = ids.length;
  const embed = t('model.embed_tokens.weight');
  const h = config.hidden_size;
  let x = ids.map((id) => embed.values.slice(id * h, (id + 1) * h));
  const attention = [];
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    const a = x.map((row) => rmsNorm(row, t(`${p}input_layernorm.weight`), eps));
    const headsOf = (rows, count, position) => Array.from(
      { length: count },
      (_, k) => rope(rows.slice(k * d, (k + 1) * d), position, config.rope_theta),
    );
    const q = a.map((row, i) => headsOf(linear(t(`${p}self_attn.q_proj.weight`), row), heads, i));
    const k = a.map((row, i) => headsOf(linear(t(`${p}self_attn.k_proj.weight`), row), kvHeads, i));
    const v = a.map((row) => {
      const flat = linear(t(`${p}self_attn.v_proj.weight`), row);
      return Array.from({ length: kvHeads }, (_, g) => flat.slice(g * d, (g + 1) * d));
    });
    const layer = [];
    const outputs = Array.from({ length: n }, () => []);
    for (let head = 0; head < heads; head++) {
      const g = Math.floor(head / (heads / kvHeads)); // repeat_kv
      const rows = [];
      for (let i = 0; i < n; i++) {
        const score = (j) => (j <= i ? dot(q[i][head], k[j][g]) / Math.sqrt(d) : -Infinity);
        const scores = Array.from({ length: n }, (_, j) => score(j));
        const top = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - top));
        const total = e.reduce((s2, v2) => s2 + v2, 0);
        const w = e.map((v2) => v2 / total);
        rows.push(w);
        outputs[i].push(...Array.from({ length: d }, (_, c) => w.reduce((s2, wj, j) => s2 + wj * v[j][g][c], 0)));
      }
      layer.push(rows);
    }
    attention.push(layer);
    const hidden = x.map((row, i) => row.map((val, c) => val + linear(t(`${p}self_attn.o_proj.weight`), outputs[i])[c]));
    x = hidden.map((row) => {
      const b = rmsNorm(row, t(`${p}post_attention_layernorm.weight`), eps);
      const gate = linear(t(`${p}mlp.gate_proj.weight`), b);
      const up = linear(t(`${p}mlp.up_proj.weight`), b);
      const down = linear(t(`${p}mlp.down_proj.weight`), gate.map((z, c) => silu(z) * up[c]));
      return row.map((val, c) => val + down[c]);
    });
  }
  const head = config.tie_word_embeddings ? embed : t('lm_head.weight');
  const logits = x.map((row) => linear(head, rmsNorm(row, t('model.norm.weight'), eps)));
  return { attention, logits };
}

/** splitmix64, as the documented sampling rule draws. */
function splitmix(seed) {
  let state = BigInt.asUintN(64, BigInt(seed));
  return () => {
    state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
    let z = state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  };
}

/**
 * `count` ids after the prompt by attn_model_generate's documented rule on
 * the reference's logits: greedy at temperature 0 (ties to the lowest id),
 * else splitmix64 draws from softmax(logits / temperature).
 */
export function llamaGenerate(config, tensors, prompt, count, temperature, seed) {
  const ids = [...prompt];
  const draw = splitmix(seed);
  for (let t = 0; t < count; t++) {
    const z = llamaForward(config, tensors, ids).logits.at(-1);
    let best = 0;
    z.forEach((v, j) => { if (v > z[best]) best = j; });
    if (temperature > 0) {
      const u = Number(draw() >> 11n) * 2 ** -53;
      const p = z.map((v) => Math.exp((v - z[best]) / temperature));
      const target = u * p.reduce((s, v) => s + v, 0);
      let running = 0;
      best = p.findIndex((v) => (running += v) > target);
    }
    ids.push(best);
  }
  return ids;
}
