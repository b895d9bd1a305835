#!/usr/bin/env node
// `make model`: retrains the shipped model from scratch with `attn model
// train` (the same settings and seed write the same config.json and
// model.safetensors, byte for byte), then writes its card, README.md: the
// text and its licence, the settings, the time, the held-out loss, sample
// continuations and the heads found by the scores below.
//
//   node scripts/make-model.mjs [DIR]          retrain (default models/kjv-genesis)
//   node scripts/make-model.mjs --card [DIR]   only rewrite the card, from the
//                                              weights and DIR/training.json
//
// Every number in the card comes from the engine: `attn model train`'s
// summary, `attn model generate`'s ids and `attn model run`'s attention.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../', import.meta.url));
const attn = join(repo, 'build/attn');
const cardOnly = process.argv[2] === '--card';
const dir = process.argv[cardOnly ? 3 : 2] ?? join(repo, 'models/kjv-genesis');
const TEXT = 'genesis.txt';

// The shipped model's settings: `attn model train`'s options.
const SETTINGS = {
  hidden: 64, intermediate: 192, layers: 2, heads: 4, 'kv-heads': 2,
  seq: 64, batch: 16, steps: 1500, lr: 0.003, seed: 1,
};

const PROMPTS = ['And God said', 'In the beginning', 'And Joseph', 'Abraham begat'];
const SAMPLE_TOKENS = 80;

function run(args, inherit = false) {
  return execFileSync(attn, args, {
    encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', inherit ? 'inherit' : 'pipe'],
  });
}

function decode(ids) {
  return Buffer.from(ids).toString('utf8');
}

function generate(prompt, extra = []) {
  const { ids, prompt: n } = JSON.parse(run(['model', 'generate', '--model', dir, '--text', prompt,
    '--tokens', String(SAMPLE_TOKENS), ...extra]));
  return { prompt, continuation: decode(ids.slice(n)) };
}

function attention(text) {
  return JSON.parse(run(['model', 'run', '--model', dir, '--text', text])).attention;
}

// Mean over the queries from `from` on of the weight each head puts on
// key(q): [layer][head] of means.
function headScores(weights, from, key) {
  return weights.map((layer) => layer.map((head) => {
    let sum = 0;
    let count = 0;
    for (let q = from; q < head.length; q++) {
      sum += head[q][key(q)];
      count++;
    }
    return sum / count;
  }));
}

// Previous-token and first-token scores on a held-out passage; the
// induction score on random letters seen twice, within the 64 positions the
// model was trained on: a query in the second copy attending to the key
// just after its own earlier occurrence is what an induction head does.
function findHeads(passage) {
  const plain = attention(passage);
  let state = 12345;
  const letters = Array.from({ length: 24 }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return String.fromCharCode(97 + (state % 26));
  }).join('');
  const twice = attention(letters + letters);
  const n = letters.length;
  // Mean over the queries of Σ_k weight · (q − k): how far back a head looks.
  const distance = plain.map((layer) => layer.map((head) => head.slice(1)
    .reduce((sum, row, i) => sum + row.reduce((s, w, k) => s + w * (i + 1 - k), 0), 0) / (head.length - 1)));
  return {
    previous: headScores(plain, 1, (q) => q - 1),
    self: headScores(plain, 1, (q) => q),
    distance,
    first: headScores(plain, 1, () => 0),
    induction: headScores(twice, n, (q) => q - n + 1),
    letters,
    passage,
  };
}

const NAMES = [['previous', 'previous-token'], ['first', 'first-token'], ['induction', 'induction'],
  ['self', 'current-token']];
const THRESHOLD = 0.4;

function headTable(scores) {
  const rows = ['| head | previous-token | first-token | induction | itself | mean distance | looks like |',
    '|---|---|---|---|---|---|---|'];
  scores.previous.forEach((layer, l) => layer.forEach((_, h) => {
    const values = NAMES.map(([key]) => scores[key][l][h]);
    const names = NAMES.filter((_, i) => values[i] > THRESHOLD).map(([, name]) => name);
    rows.push(`| layer ${l}, head ${h} | ${values.map((v) => v.toFixed(3)).join(' | ')} | `
      + `${scores.distance[l][h].toFixed(2)} | ${names.join(', ') || '—'} |`);
  }));
  return rows.join('\n');
}

// For each kind of head, the heads that pass the threshold, or none and
// the highest score.
function findings(scores) {
  return NAMES.map(([key, name]) => {
    const heads = scores[key].flatMap((layer, l) => layer.map((v, h) => ({ v, at: `layer ${l}, head ${h}` })));
    const found = heads.filter(({ v }) => v > THRESHOLD).map(({ at }) => at);
    const best = heads.reduce((a, b) => (b.v > a.v ? b : a));
    return `- ${name}: ${found.length ? found.join('; ') : `none (the highest, ${best.at}, scores ${best.v.toFixed(3)})`}`;
  }).join('\n');
}

function quote(text) {
  return '`' + text.replace(/\n/g, '⏎').replace(/`/g, "'") + '`';
}

function card(summary, samples, sampled, scores) {
  const s = SETTINGS;
  const megabytes = (readFileSync(join(dir, 'model.safetensors')).length / 1e6).toFixed(2);
  return `# kjv-genesis: a byte-level Llama trained by this project

A ${s.layers}-layer Llama-architecture decoder (hidden size ${s.hidden}, ${s.heads} attention heads
sharing ${s['kv-heads']} key/value heads, SiLU-gated MLP of ${s.intermediate}, RMSNorm, rotary
position embeddings, tied embeddings) that reads UTF-8 bytes: a byte's id is its value
(0–255), and no beginning-of-text token is added. Trained from scratch by the project's own
C trainer (\`attn model train\`, float64), stored as F32 (${megabytes} MB). \`make model\` retrains it
from the same seed to the same config.json and model.safetensors, byte for byte.

## The text

\`${TEXT}\`: the Book of Genesis in the King James Version (1611), one verse per line, its
verse numbers removed, as the Debian package \`bible-kjv-text\` ships it (printed by
\`bible -f gen1:1-50:26\` of the package \`bible-kjv\`). The KJV text is in the public
domain; the package's copyright file says "The copyright for the King James Version text of
the Bible is expired". ${summary.text_bytes} bytes train it; the last ${summary.held_out_bytes} bytes
(from Genesis 46) are held out.

## Training

| setting | value |
|---|---|
| windows | ${s.batch} a step, ${s.seq} bytes each, drawn uniformly from the training bytes |
| steps | ${s.steps} |
| optimiser | Adam (β₁ 0.9, β₂ 0.95, ε 1e-8), gradient norm clipped to 1 |
| learning rate | ${s.lr}, falling along a cosine to a tenth |
| initial weights | normal, σ = 1/√fan-in (o_proj and down_proj / √(2·layers)), embedding σ 0.02; seed ${s.seed} |
| time | ${summary.seconds} s on this machine's 2 cores, shared with other work (${summary.cpu_seconds} s of CPU) |
| loss of the last step | ${summary.last_step_loss} nats per byte |
| held-out loss | **${summary.held_out_loss} nats per byte** (${(summary.held_out_loss / Math.LN2).toFixed(3)} bits; a uniform guess is ${Math.log(256).toFixed(3)}) |

## Sample continuations

Greedy (the highest logit each time, ties to the lowest id), ${SAMPLE_TOKENS} bytes after each prompt:

${samples.map((x) => `- ${quote(x.prompt)} → ${quote(x.continuation)}`).join('\n')}

At temperature 0.8, seed 1: ${quote(sampled.prompt)} → ${quote(sampled.continuation)}

## Its heads

Each head's mean attention weight, over the queries after the first, on the key a kind of head
looks for: the previous position (previous-token), position 0 (first-token), its own position
(itself), and the mean distance back it looks (Σ weight · (query − key)), on the first ${s.seq}
held-out bytes (${quote(scores.passage)}); and on 24 random letters seen twice (${quote(scores.letters)} twice), the
position just after the query's own earlier occurrence, over the queries of the second copy
(induction). A head is named when its score passes ${THRESHOLD}. Computed by
\`scripts/make-model.mjs\` from \`attn model run\`'s attention weights; look at one with
\`build/attn model run --model models/kjv-genesis --text "..." --layer L --head H --format text\`.

${headTable(scores)}

What that finds:

${findings(scores)}

Regenerate with \`make model\` (its time and this card's time vary; the weights do not).
`;
}

const flags = Object.entries(SETTINGS).flatMap(([k, v]) => [`--${k}`, String(v)]);
const summaryPath = join(dir, 'training.json');
if (!cardOnly) {
  writeFileSync(summaryPath, run(['model', 'train', '--text', join(dir, TEXT), '--out', dir, ...flags], true));
}
const summary = JSON.parse(readFileSync(summaryPath, 'utf8'));
const samples = PROMPTS.map((p) => generate(p));
const sampled = generate('And the LORD', ['--temperature', '0.8', '--seed', '1']);
const text = readFileSync(join(dir, TEXT), 'utf8');
// As many bytes as a training window: the positions the model has learnt.
const passage = text.slice(text.length - summary.held_out_bytes).slice(0, SETTINGS.seq);
const scores = findHeads(passage);
writeFileSync(join(dir, 'README.md'), card(summary, samples, sampled, scores));
console.log(`wrote ${dir}: held-out loss ${summary.held_out_loss} nats per byte in ${summary.seconds} s`);
