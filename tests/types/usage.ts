// Type-checked, never run (tests/dist/dist.test.mjs runs tsc over it): every
// method of the JS API used as a consumer would, importing the package by
// its name, with the result types pinned down exactly, and wrong usage that
// the declarations must reject.
import { AttentionError as AttentionErrorClass, DEFAULT_MAX_BYTES, loadAttention } from 'attention-explainer';
import type {
  AnswerVerdict, Attention, AttentionError, Batch, CheckReport, Equation, EquationNode, ErratumCause, FormatStyle, Matrix, MemoryStats,
  Problem, SdpaFlatResult, Vector, WalkthroughStep,
} from 'attention-explainer';

// Equal<A, B> is true only when A and B are the same type.
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function expectType<T>() {
  return <V>(value: V & (Equal<T, V> extends true ? unknown : never)): V => value;
}

const bytes = new Uint8Array(8);
const fromBytes: Promise<Readonly<Attention>> = loadAttention({ wasmBinary: bytes });
void fromBytes;
void loadAttention({ wasmBinary: bytes.buffer });
void loadAttention({ wasmUrl: 'attention.wasm' });
void loadAttention({ wasmUrl: new URL('https://example.org/attention.wasm') });
const attn = await loadAttention();

// Tutorial 000: three tokens, d_k = 2, d_v = 3.
const Q: Matrix = [[1, 0], [0, 1], [1, 1]];
const V: Matrix = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];

// ---- scaledDotProduct: the result follows the query's shape ----
const sdpa = attn.scaledDotProduct({ q: Q, k: Q, v: V, mask: 'causal' });
expectType<Matrix>()(sdpa.scores);
expectType<Matrix>()(sdpa.scaled);
expectType<Matrix>()(sdpa.weights);
expectType<Matrix>()(sdpa.output);
const w01: number = sdpa.weights[0][1];
void w01;

const everyOption = attn.scaledDotProduct({
  q: Q, k: Q, v: V,
  mask: [[true, false, false], [1, 1, 0], [true, true, true]],
  keyLength: 2, window: 1, stride: 2, scale: 0.5, dropout: 0.1, seed: 42,
  tokens: ['the', 'cat', 'sat'],
});
expectType<Matrix>()(everyOption.weights);
attn.scaledDotProduct({ q: Q, k: Q, v: V, scale: false, queryTokens: ['a', 'b', 'c'], keyTokens: ['x', 'y', 'z'] });

const vectorQuery = attn.scaledDotProduct({ q: [1, 0], k: Q, v: V, mask: [true, false, true] });
expectType<Vector>()(vectorQuery.weights);

const typedRows = attn.scaledDotProduct({ q: [new Float64Array([1, 0])], k: Q, v: V });
expectType<Matrix>()(typedRows.output);

const readonlyInput = [[1, 0], [0, 1]] as const;
expectType<Matrix>()(attn.scaledDotProduct({ q: readonlyInput, k: readonlyInput, v: readonlyInput }).output);

const batch: Batch = [Q, Q];
const batched = attn.scaledDotProduct({ q: batch, k: batch, v: [V, V], keyLength: [3, 2] });
expectType<Batch>()(batched.weights);

// From scores: no scores in the result, and an output only with v.
const fromScores = attn.scaledDotProduct({ scores: [[2.1, 0], [1.5, 3.2]], dk: 8, mask: 'causal' });
expectType<{ scaled: Matrix; weights: Matrix }>()({ ...fromScores });
const fromScoresWithV = attn.scaledDotProduct({ scores: [[2.1, 0], [1.5, 3.2]], v: [[1], [2]], scale: false });
expectType<Matrix>()(fromScoresWithV.output);

// ---- multiHead ----
const I2: Matrix = [[1, 0], [0, 1]];
const mha = attn.multiHead({
  x: I2, numHeads: 2, wq: I2, wk: I2, wv: I2, wo: I2,
  bq: [0, 0], bk: [0, 0], bv: [0, 0], bo: [0, 0], mask: 'causal', tokens: ['a', 'b'],
});
expectType<Matrix>()(mha.heads[1].weights);
expectType<Matrix>()(mha.concat);
expectType<Matrix>()(mha.output);
const cross = attn.multiHead({ x: [I2], xkv: [[[1, 1], [2, 2], [3, 3]]], numHeads: 1, wq: I2, wk: I2, wv: I2, wo: [[1], [1]] });
expectType<Batch>()(cross.q);
expectType<Batch>()(cross.heads[0].scaled);

// ---- additive and luong: energy has one axis more than the scores ----
const additive = attn.additive({ query: [1, 0], keys: I2, ws: I2, wh: I2, v: [1, 1], b: [0, 0], tokens: ['x', 'y'] });
expectType<Matrix>()(additive.energy);
expectType<Vector>()(additive.weights);
expectType<Vector>()(additive.context);
expectType<Batch>()(attn.additive({ query: I2, keys: I2, ws: I2, wh: I2, v: [1, 1] }).energy);

const dot = attn.luong({ query: [1, 0], keys: I2, method: 'dot' });
expectType<Vector>()(dot.scores);
const general = attn.luong({ query: I2, keys: I2, method: 'general', w: I2 });
expectType<Matrix>()(general.context);
const concat = attn.luong({ query: [1, 0], keys: I2, method: 'concat', w: [[1, 0], [0, 1], [1, 1], [0, 0]], v: [1, 1] });
expectType<Matrix>()(concat.energy);
expectType<Vector>()(concat.weights);

// ---- linear, softmax, weightedSum ----
expectType<Matrix>()(attn.linear({ q: Q, k: Q, v: V, causal: true }).output);
expectType<Batch>()(attn.linear({ q: batch, k: batch, v: [V, V] }).output);

const softmaxRow = attn.softmax({ x: [0.5, 0.8, 0.3, 0.9], mask: [true, true, true, false], scale: 1 });
expectType<number>()(softmaxRow.max);
expectType<number>()(softmaxRow.sum);
expectType<Vector>()(softmaxRow.exp);
const softmaxRows = attn.softmax({ x: I2 });
expectType<Vector>()(softmaxRows.max);
expectType<Matrix>()(softmaxRows.weights);

expectType<Vector>()(attn.weightedSum({ weights: [0.17, 0.23, 0.6], v: V }).output);
expectType<Matrix>()(attn.weightedSum({ weights: [[0.17, 0.23, 0.6]], v: V }).output);

const online = attn.onlineSoftmax({ q: Q, k: Q, v: V, tile: 2 });
expectType<Batch>()(online.tileAcc);
expectType<Matrix>()(online.plainOutput);
expectType<Matrix>()(attn.run({ kind: 'onlineSoftmax', q: Q, k: Q, v: V }).tileMax);

const block = { x: I2, numHeads: 1, wq: I2, wk: I2, wv: I2, wo: I2, gamma1: [1, 1], w1: I2, w2: I2, gamma2: [1, 1] };
expectType<Matrix>()(attn.run({ kind: 'transformerBlock', ...block }).ln2);
expectType<Batch>()(attn.run({ kind: 'transformerBlock', ...block, x: [I2], norm: 'pre' }).heads[0].weights);
// @ts-expect-error transformerBlock's norm is 'post' or 'pre'
attn.run({ kind: 'transformerBlock', ...block, norm: 'mid' });
// @ts-expect-error transformerBlock is self-attention: no xkv
attn.run({ kind: 'transformerBlock', ...block, xkv: I2 });
attn.run({ kind: 'scaledDotProduct', q: Q, k: Q, v: V, gradOutput: V });
attn.additive({ query: [1, 0], keys: I2, ws: I2, wh: I2, v: [1, 1], gradContext: [1, 0] });
// @ts-expect-error a gradient has the rank of the result it is of
attn.linear({ q: Q, k: Q, v: V, gradOutput: [1, 2, 3] });

// ---- run and format ----
expectType<Matrix>()(attn.run({ kind: 'scaledDotProduct', q: Q, k: Q, v: V }).weights);
expectType<number>()(attn.run({ kind: 'softmax', x: [100, 95, 5, 3] }).max);
expectType<Matrix>()(attn.run({ kind: 'luong', query: [1, 0], keys: I2, method: 'concat', w: I2, v: [1] }).energy);
const problem: Problem = { kind: 'linear', q: Q, k: Q, v: V };
attn.run(problem);
const markdown: string = attn.format({ kind: 'softmax', x: [100, 95, 5, 3] }, 'markdown');
const json: string = attn.format(problem);
const style: FormatStyle = 'text';
attn.format(problem, style);
const titled: string = attn.format(problem, 'markdown', { title: 'Attention in lecture 7', headingLevel: 2 });
// @ts-expect-error heading levels go from 1 to 4
attn.format(problem, 'markdown', { headingLevel: 5 });
void markdown; void json; void titled;

// ---- sdpaFlat: typed arrays in and out ----
const flat = attn.sdpaFlat({ q: Float64Array.from(Q.flat()), k: Q.flat(), v: V.flat(), nQ: 3, nK: 3, dK: 2, dV: 3 });
expectType<SdpaFlatResult>()(flat);
const output: Float64Array = flat.output;
void output;
const withWeights = attn.sdpaFlat({ q: Q.flat(), k: Q.flat(), v: V.flat(), batch: 1, nQ: 3, nK: 3, dK: 2, dV: 3, scale: 0.5, causal: true, weights: true });
const flatWeights: Float64Array = withWeights.weights;
void flatWeights;
const local = attn.sdpaFlat({ q: Q.flat(), k: Q.flat(), v: V.flat(), nQ: 3, nK: 3, dK: 2, dV: 3, window: 1, stride: 2 });
expectType<SdpaFlatResult>()(local);
const linearOutput: Float64Array = attn.linearFlat({ q: Q.flat(), k: Q.flat(), v: V.flat(), nQ: 3, nK: 3, dK: 2, dV: 3, causal: true }).output;
void linearOutput;
const f32 = Float32Array.from(Q.flat());
const fast32: Float32Array = attn.sdpaFlat({ q: f32, k: f32, v: Float32Array.from(V.flat()), nQ: 3, nK: 3, dK: 2, dV: 3, causal: true, keyLength: 2 }).output;
const fastWeights32: Float32Array = attn.sdpaFlat({ q: f32, k: f32, v: f32, nQ: 3, nK: 3, dK: 2, dV: 2, allowed: [true, false, true, true, true, false, false, true, true], weights: true }).weights;
const linear32: Float32Array = attn.linearFlat({ q: f32, k: f32, v: f32, nQ: 3, nK: 3, dK: 2, dV: 2 }).output;
void fast32; void fastWeights32; void linear32;
// Written into the caller's arrays, of the inputs' type.
const into32: Float32Array = attn.sdpaFlat({ q: f32, k: f32, v: f32, nQ: 3, nK: 3, dK: 2, dV: 2, output: new Float32Array(6) }).output;
const into64: Float64Array = attn.linearFlat({ q: Q.flat(), k: Q.flat(), v: V.flat(), nQ: 3, nK: 3, dK: 2, dV: 3, output: new Float64Array(9) }).output;
void into32; void into64;

// @ts-expect-error linearFlat takes no scale
attn.linearFlat({ q: Q.flat(), k: Q.flat(), v: V.flat(), nQ: 3, nK: 3, dK: 2, dV: 3, scale: 0.5 });

// ---- memoryStats and errors ----
const stats: MemoryStats = attn.memoryStats();
const grown: number = stats.memoryBytes - stats.allocatedBytes;
void grown;

try {
  attn.scaledDotProduct({ q: Q, k: [[1, 2, 3]], v: V });
} catch (error) {
  const { status, message } = error as AttentionError;
  const isInputError: boolean = status === 10;
  void isInputError; void message;
}

// AttentionError is a class: instanceof narrows to it, status 12 included.
try {
  attn.sdpaFlat({ q: Q.flat(), k: Q.flat(), v: V.flat(), nQ: 3, nK: 3, dK: 2, dV: 3, maxBytes: 64 });
} catch (error) {
  if (error instanceof AttentionErrorClass) {
    const tooLarge: boolean = error.status === 12;
    const name: 'AttentionError' = error.name;
    void tooLarge; void name;
  }
}
void loadAttention({ maxBytes: DEFAULT_MAX_BYTES * 2 });
attn.linearFlat({ q: Q.flat(), k: Q.flat(), v: V.flat(), nQ: 3, nK: 3, dK: 2, dV: 3, maxBytes: 1 << 20 });
// @ts-expect-error there is no status 19
const noSuchStatus: AttentionErrorClass['status'] = 19;
void noSuchStatus;

// ---- wrong usage the declarations reject ----
// @ts-expect-error k is missing
attn.scaledDotProduct({ q: Q, v: V });
// @ts-expect-error a mask is 'none', 'causal' or a boolean matrix
attn.scaledDotProduct({ q: Q, k: Q, v: V, mask: 'future' });
// @ts-expect-error scores and q are alternatives
attn.scaledDotProduct({ scores: Q, q: Q, k: Q, dk: 2 });
// @ts-expect-error from scores, d_k is needed unless a scale is given
attn.scaledDotProduct({ scores: Q });
// @ts-expect-error values are numbers, not strings
attn.linear({ q: [['1', '0']], k: Q, v: V });
// @ts-expect-error a batch query needs batched keys
attn.scaledDotProduct({ q: batch, k: Q, v: V });
// @ts-expect-error multiHead takes no vector x
attn.multiHead({ x: [1, 0], numHeads: 1, wq: I2, wk: I2, wv: I2, wo: I2 });
// @ts-expect-error luong's general method needs w
attn.luong({ query: [1, 0], keys: I2, method: 'general' });
// @ts-expect-error luong's dot method takes no v
attn.luong({ query: [1, 0], keys: I2, method: 'dot', v: [1, 1] });
// @ts-expect-error additive takes no batch of queries
attn.additive({ query: [I2], keys: I2, ws: I2, wh: I2, v: [1, 1] });
// @ts-expect-error softmax's scale is a number only
attn.softmax({ x: [1, 2], scale: true });
// @ts-expect-error softmax's mask is shaped like x
attn.softmax({ x: [1, 2], mask: [[true, false]] });
// @ts-expect-error weightedSum's labels are strings
attn.weightedSum({ weights: [[1]], v: [[1]], tokens: [1] });
// @ts-expect-error the format style is 'json', 'text', 'markdown', 'latex' or 'steps'
attn.format(problem, 'html');
// @ts-expect-error an unknown kind
attn.run({ kind: 'sparse', q: Q, k: Q, v: V });
// @ts-expect-error sdpaFlat needs its sizes
attn.sdpaFlat({ q: Q.flat(), k: Q.flat(), v: V.flat() });
// @ts-expect-error without weights: true there are no weights
attn.sdpaFlat({ q: Q.flat(), k: Q.flat(), v: V.flat(), nQ: 3, nK: 3, dK: 2, dV: 3 }).weights;
// @ts-expect-error results are matrices, not vectors
const notAVector: Vector = sdpa.weights;
// @ts-expect-error wasmBinary is bytes
void loadAttention({ wasmBinary: 'attention.wasm' });
// @ts-expect-error the engine is frozen
attn.softmax = attn.softmax;
void notAVector;

// The walkthrough as data: steps, regions and equations are typed.
const walked = attn.walkthrough({ kind: 'softmax', x: [1, 2, 3] });
const firstStep: WalkthroughStep = walked.steps.steps[0];
const stepTitle: string = firstStep.title;
const equation: Equation | undefined = attn.steps({ kind: 'softmax', x: [1, 2] }).steps[1].equations?.[0];
const firstNode: EquationNode | undefined = equation?.chain[0];
const produced: boolean | undefined = firstStep.regions?.[0].produces;
const stepsJson: string = attn.format({ kind: 'softmax', x: [1, 2] }, 'steps');
void stepTitle; void firstNode; void produced; void stepsJson;

// The check of printed numbers: the report and its groups are typed.
const report: CheckReport = attn.check({ kind: 'softmax', x: [1, 2, 3] }, { weights: [0.09, 0.24, 0.67] }, { decimals: 2 });
const cause: ErratumCause | undefined = report.groups[0]?.cause;
const where: number | null | undefined = report.errata[0]?.step;
const reportText: string = attn.check({ kind: 'softmax', x: [1, 2] }, { weights: [0.27, null] }, { format: 'markdown' });
// @ts-expect-error a check's format has no steps
attn.check({ kind: 'softmax', x: [1, 2] }, {}, { format: 'steps' });
void cause; void where; void reportText;

// A learner's answer for one cell: the verdict is typed.
const graded: AnswerVerdict = attn.answer({ kind: 'softmax', x: [1, 2] }, { result: 'weights', row: 0, col: 0, typed: '0.27' });
const gradedCause: ErratumCause | null = graded.cause;
// @ts-expect-error the typed answer is text, as the learner typed it
attn.answer({ kind: 'softmax', x: [1, 2] }, { result: 'weights', row: 0, col: 0, typed: 0.27 });
void gradedCause;
// A language model: its run, generation and a head's walkthrough are typed.
const lm = attn.model({ config: '{}', weights: new Uint8Array(0) });
const heads: number = lm.config.num_attention_heads;
const firstWeight: number = lm.run({ text: 'the cat' }).attention[0][0][0][0];
const generated: number[] = lm.generate({ ids: [1, 2], tokens: 3, seed: 2n ** 60n, cache: false }).ids;
const headSteps: WalkthroughStep[] = lm.walkthrough(0, 1, { text: 'cat' }).steps;
const headText: string = lm.walkthrough(0, 1, { text: 'cat', format: 'latex' });
// @ts-expect-error the text or its ids, not both
lm.run({ text: 'cat', ids: [1] });
lm.dispose();
void heads; void firstWeight; void generated; void headSteps; void headText;
