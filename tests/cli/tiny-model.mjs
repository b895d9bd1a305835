// A tiny Llama-architecture checkpoint that the tests make themselves:
// config.json and model.safetensors (F32 or F16) with seeded weights, each
// a multiple of 1/1024 below 2 in size (exact in F16, F32 and float64), so
// that the float64 reference in llama-reference.mjs reads the same numbers
// as the engine.
//
//   node tests/cli/tiny-model.mjs DIR    writes the default tiny model in DIR

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A byte-level model: ids 0-255 are bytes, 256-258 special. */
export const TINY = {
  vocab_size: 259,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 32,
  rope_theta: 10000,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: false,
};

/** mulberry32: a seeded generator of floats in [0, 1). */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** IEEE binary16 bits of x, a multiple of 1/1024 below 2048 in size. */
function halfBits(x) {
  if (x === 0) return 0;
  const sign = x < 0 ? 0x8000 : 0;
  const m = Math.abs(x);
  const e = Math.floor(Math.log2(m));
  return sign | ((e + 15) << 10) | (m / 2 ** e * 1024 - 1024);
}

/**
 * The tensors of a checkpoint of this config, in the checkpoint's layout
 * ([out, in] for projections): { name: { shape, values } } in file order.
 */
export function tinyWeights(config, seed = 1) {
  const random = generator(seed);
  const h = config.hidden_size;
  const kv = (h / config.num_attention_heads) * config.num_key_value_heads;
  const ff = config.intermediate_size;
  // uniform multiples of 1/1024 in [lo, hi)
  const fill = (count, lo, hi) => Array.from(
    { length: count },
    () => Math.floor((lo + (hi - lo) * random()) * 1024) / 1024,
  );
  const tensors = {};
  const add = (name, shape, lo, hi) => {
    tensors[name] = { shape, values: fill(shape.reduce((p, d) => p * d, 1), lo, hi) };
  };
  add('model.embed_tokens.weight', [config.vocab_size, h], -1, 1);
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    add(`${p}input_layernorm.weight`, [h], 0.5, 1.5);
    add(`${p}self_attn.q_proj.weight`, [h, h], -1, 1);
    add(`${p}self_attn.k_proj.weight`, [kv, h], -1, 1);
    add(`${p}self_attn.v_proj.weight`, [kv, h], -0.5, 0.5);
    add(`${p}self_attn.o_proj.weight`, [h, h], -0.5, 0.5);
    add(`${p}post_attention_layernorm.weight`, [h], 0.5, 1.5);
    add(`${p}mlp.gate_proj.weight`, [ff, h], -0.5, 0.5);
    add(`${p}mlp.up_proj.weight`, [ff, h], -0.5, 0.5);
    add(`${p}mlp.down_proj.weight`, [h, ff], -0.5, 0.5);
  }
  add('model.norm.weight', [h], 0.5, 1.5);
  if (!config.tie_word_embeddings) add('lm_head.weight', [config.vocab_size, h], -1, 1);
  return tensors;
}

/** The bytes of a safetensors file holding the tensors as dtype F32 or F16. */
export function safetensorsBytes(tensors, dtype = 'F32') {
  const width = dtype === 'F16' ? 2 : 4;
  const header = {};
  let offset = 0;
  for (const [name, { shape, values }] of Object.entries(tensors)) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + values.length * width] };
    offset += values.length * width;
  }
  const json = Buffer.from(JSON.stringify(header));
  const file = Buffer.alloc(8 + json.length + offset);
  file.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(file, 8);
  let at = 8 + json.length;
  for (const { values } of Object.values(tensors)) {
    for (const v of values) {
      if (width === 2) file.writeUInt16LE(halfBits(v), at);
      else file.writeFloatLE(v, at);
      at += width;
    }
  }
  return file;
}

/** Writes config.json and model.safetensors into dir; the tensors written. */
export function writeTinyModel(dir, config = TINY, { seed = 1, dtype = 'F32' } = {}) {
  const tensors = tinyWeights(config, seed);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify({ ...config, hidden_act: 'silu' }, null, 2)}\n`);
  writeFileSync(join(dir, 'model.safetensors'), safetensorsBytes(tensors, dtype));
  return tensors;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.length !== 3) {
    console.error('usage: node tests/cli/tiny-model.mjs DIR');
    process.exit(2);
  }
  writeTinyModel(process.argv[2]);
}
