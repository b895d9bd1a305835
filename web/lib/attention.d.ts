// Types for the JS API of the attention engine (web/lib/attention.js),
// written by hand. Inputs are nested arrays of numbers (a typed array may
// stand for a row); every result follows the shape of the query-side input:
// a vector query gives vector rows, a matrix query matrices, a batch of
// matrices batches. Masked entries of `scaled` are -Infinity.

// ---- Arrays ----

/** Results: a vector, a matrix (an array of rows), a batch of matrices. */
export type Vector = number[];
export type Matrix = number[][];
export type Batch = number[][][];

/** A typed array of numbers; the engine reads it as a plain row. */
export type NumberTypedArray =
  | Float64Array | Float32Array
  | Int8Array | Int16Array | Int32Array
  | Uint8Array | Uint8ClampedArray | Uint16Array | Uint32Array;

/** Inputs may be readonly arrays, and any row may be a typed array. */
export type VectorInput = readonly number[] | NumberTypedArray;
export type MatrixInput = readonly VectorInput[];
export type BatchInput = readonly MatrixInput[];
export type TensorInput = VectorInput | MatrixInput | BatchInput;

/** The result shape for a query-side input shaped like Q. */
export type ShapeOf<Q> =
  Q extends VectorInput ? Vector :
  Q extends MatrixInput ? Matrix :
  Q extends BatchInput ? Batch : never;

/** One axis fewer: per-row values such as softmax's max and sum. */
export type RowValuesOf<Q> =
  Q extends VectorInput ? number :
  Q extends MatrixInput ? Vector :
  Q extends BatchInput ? Matrix : never;

/** One axis more: additive and Luong concat energies [n_q?, n_k, d_a]. */
export type EnergyOf<Q> =
  Q extends VectorInput ? Matrix :
  Q extends MatrixInput ? Batch : never;

/** Keys and values: a batch when the query is a batch, else a matrix. */
export type KeysFor<Q> = Q extends BatchInput ? BatchInput : MatrixInput;
/** An input of Q's rank: a gradient shaped like a result that follows Q. */
export type LikeInput<Q> =
  Q extends VectorInput ? VectorInput :
  Q extends MatrixInput ? MatrixInput : BatchInput;

// ---- Masks ----

/** true (or 1) = this query may attend to this key. */
export type MaskEntry = boolean | 0 | 1;
export type MaskVector = readonly MaskEntry[];
export type MaskMatrix = readonly MaskVector[];
export type MaskBatch = readonly MaskMatrix[];

/**
 * The mask of the dot-product kinds: none, causal (key j <= query i), or
 * which keys each query may attend to, [n_q, n_k] (shared by a batch; [n_k]
 * for a vector query).
 */
export type DotProductMask<Q> =
  | 'none'
  | 'causal'
  | (Q extends VectorInput ? MaskVector | MaskMatrix : MaskMatrix);

/** softmax's mask: shaped like x. */
export type MaskLike<X> =
  X extends VectorInput ? MaskVector :
  X extends MatrixInput ? MaskMatrix :
  X extends BatchInput ? MaskBatch : never;

// ---- Inputs ----

/** Options shared by scaledDotProduct and multiHead. */
export interface DotProductOptions<Q> {
  mask?: DotProductMask<Q>;
  /** Masks keys at index >= keyLength: one length, or one per batch item. */
  keyLength?: number | readonly number[];
  /** Keeps |i - j| <= window. */
  window?: number;
  /** Sparse Transformer pattern: j <= i and (i - j < stride or stride divides i - j). */
  stride?: number;
  /** true: 1/sqrt(d_k) (the default); false: no scaling; or the factor. */
  scale?: boolean | number;
  /** Probability in [0, 1) of zeroing a weight; kept ones are scaled by 1/(1 - p). */
  dropout?: number;
  /** Dropout's seed, an integer in 0..2^53 (default 0). */
  seed?: number;
  /** Labels for the walkthroughs when queries and keys are the same tokens. */
  tokens?: readonly string[];
  /** Labels, one per query and one per key, instead of tokens. */
  queryTokens?: readonly string[];
  keyTokens?: readonly string[];
}

/** Q [n_q, d_k] (or [d_k], or a batch), K [n_k, d_k], V [n_k, d_v]. */
export interface ScaledDotProductInput<Q extends TensorInput> extends DotProductOptions<Q> {
  q: Q;
  k: KeysFor<Q>;
  v: KeysFor<Q>;
  /** dL/d(output), shaped like output: the results then hold gradQ, gradK,
   * gradV, gradWeights and gradScaled too. */
  gradOutput?: LikeInput<Q>;
  /** Instead of gradOutput: the loss ½‖output − target‖², whose gradOutput
   * (output − target) is then a result too. */
  target?: LikeInput<Q>;
  scores?: never;
  dk?: never;
}

/** Starting from given scores [n_q, n_k]: d_k for the default scale 1/sqrt(d_k), */
interface FromScoresWithDk<S extends TensorInput> extends DotProductOptions<S> {
  scores: S;
  dk: number;
  q?: never;
  k?: never;
}
/** or an explicit scale (false or a factor), and then d_k is not needed. */
interface FromScoresWithScale<S extends TensorInput> extends DotProductOptions<S> {
  scores: S;
  dk?: number;
  scale: false | number;
  q?: never;
  k?: never;
}

/** scaledDotProduct from scores; without v there is no output. */
export type ScaledDotProductFromScoresInput<S extends TensorInput> =
  (FromScoresWithDk<S> | FromScoresWithScale<S>) & { v?: never };
export type ScaledDotProductFromScoresWithValuesInput<S extends TensorInput> =
  (FromScoresWithDk<S> | FromScoresWithScale<S>) & { v: KeysFor<S> };

/** x [n_q, d_in] (or a batch); xkv [n_kv, d_kv_in] for cross-attention. */
export interface MultiHeadInput<X extends MatrixInput | BatchInput> extends DotProductOptions<X> {
  x: X;
  xkv?: KeysFor<X>;
  /** Must divide d_model, the columns of wq. */
  numHeads: number;
  /** [d_in, d_model] */
  wq: MatrixInput;
  /** [d_kv_in, d_model] */
  wk: MatrixInput;
  /** [d_kv_in, d_model] */
  wv: MatrixInput;
  /** [d_model, d_out] */
  wo: MatrixInput;
  /** [d_model] */
  bq?: VectorInput;
  bk?: VectorInput;
  bv?: VectorInput;
  /** [d_out] */
  bo?: VectorInput;
  /** dL/d(output): the results then hold gradX, gradWq, ... too. */
  gradOutput?: LikeInput<X>;
}

/** Bahdanau: energy = tanh(s @ ws + h_j @ wh + b), score_j = energy · v. */
export interface AdditiveInput<Q extends VectorInput | MatrixInput> {
  /** [d_s] or [n_q, d_s]: decoder states. */
  query: Q;
  /** [n_k, d_h]: encoder states. */
  keys: MatrixInput;
  /** [d_s, d_a] */
  ws: MatrixInput;
  /** [d_h, d_a] */
  wh: MatrixInput;
  /** [d_a] */
  v: VectorInput;
  /** [d_a] */
  b?: VectorInput;
  /** One label per key. */
  tokens?: readonly string[];
  /** dL/d(context): the results then hold gradQuery, gradKeys, ... too. */
  gradContext?: LikeInput<Q>;
}

interface LuongCommon<Q extends VectorInput | MatrixInput> {
  /** [d_s] or [n_q, d_s] */
  query: Q;
  /** [n_k, d_h] */
  keys: MatrixInput;
  /** One label per key. */
  tokens?: readonly string[];
  /** dL/d(context): the results then hold gradQuery, gradKeys, ... too. */
  gradContext?: LikeInput<Q>;
}
/** score_j = s · h_j (d_s = d_h). */
export interface LuongDotInput<Q extends VectorInput | MatrixInput> extends LuongCommon<Q> {
  method: 'dot';
  w?: never;
  v?: never;
  b?: never;
}
/** score_j = s · (h_j @ w), w [d_h, d_s]. */
export interface LuongGeneralInput<Q extends VectorInput | MatrixInput> extends LuongCommon<Q> {
  method: 'general';
  w: MatrixInput;
  v?: never;
  b?: never;
}
/** score_j = v · tanh([s; h_j] @ w + b), w [d_s + d_h, d_a], v and b [d_a]. */
export interface LuongConcatInput<Q extends VectorInput | MatrixInput> extends LuongCommon<Q> {
  method: 'concat';
  w: MatrixInput;
  v: VectorInput;
  b?: VectorInput;
}
export type LuongInput<Q extends VectorInput | MatrixInput> =
  LuongDotInput<Q> | LuongGeneralInput<Q> | LuongConcatInput<Q>;
export type LuongMethod = LuongInput<VectorInput>['method'];

/** Katharopoulos et al. with phi(x) = elu(x) + 1. */
export interface LinearInput<Q extends TensorInput> {
  q: Q;
  k: KeysFor<Q>;
  v: KeysFor<Q>;
  /** Each query sees only keys j <= i (default false). */
  causal?: boolean;
  tokens?: readonly string[];
  queryTokens?: readonly string[];
  keyTokens?: readonly string[];
  /** dL/d(output): the results then hold gradQ, gradK and gradV too. */
  gradOutput?: LikeInput<Q>;
}

/** A transformer block: multi-head self-attention, add and LayerNorm, a
 * feed-forward network (ReLU), add and LayerNorm; norm 'pre' normalises
 * before each sub-layer instead. x [n, d_model] (or a batch), and
 * multiHead's weights with d_in = d_kv_in = d_out = d_model. */
export interface TransformerBlockInput<X extends MatrixInput | BatchInput>
  extends Omit<MultiHeadInput<X>, 'xkv'> {
  /** The first LayerNorm's scale and shift, [d_model]. */
  gamma1: VectorInput;
  beta1?: VectorInput;
  /** [d_model, d_ff] */
  w1: MatrixInput;
  /** [d_ff] */
  b1?: VectorInput;
  /** [d_ff, d_model] */
  w2: MatrixInput;
  /** [d_model] */
  b2?: VectorInput;
  /** The second LayerNorm's scale and shift, [d_model]. */
  gamma2: VectorInput;
  beta2?: VectorInput;
  /** 'post' (the default) or 'pre'. */
  norm?: 'post' | 'pre';
}

/** Attention through the online softmax (as FlashAttention): the keys in
 * tiles, a running max, sum and output per query; one problem, no batch. */
export interface OnlineSoftmaxInput {
  q: MatrixInput;
  k: MatrixInput;
  v: MatrixInput;
  /** Keys per tile (default 2; at most n_k). */
  tile?: number;
  tokens?: readonly string[];
  queryTokens?: readonly string[];
  keyTokens?: readonly string[];
}

/** Row softmax of x (a vector, each row of a matrix, or of a batch). */
export interface SoftmaxInput<X extends TensorInput> {
  x: X;
  /** Multiplies x first (default 1). */
  scale?: number;
  /** Shaped like x; false = masked (-Infinity, weight 0). */
  mask?: MaskLike<X>;
  /** Labels of the rows and of the entries, for walkthroughs. */
  queryTokens?: readonly string[];
  keyTokens?: readonly string[];
}

/** output = weights @ v: weights [n_q, n_k] (or [n_k], or a batch), v [n_k, d_v]. */
export interface WeightedSumInput<W extends TensorInput> {
  weights: W;
  v: KeysFor<W>;
  /** Labels for walkthroughs: tokens when queries and keys are the same. */
  tokens?: readonly string[];
  queryTokens?: readonly string[];
  keyTokens?: readonly string[];
}

// ---- Results ----

/** R is Vector, Matrix or Batch, following the query. */
export interface ScaledDotProductResult<R> {
  /** Q Kᵀ */
  scores: R;
  /** scores × scale; masked entries are -Infinity. */
  scaled: R;
  /** Row softmax of scaled (masked entries 0), after dropout if any. */
  weights: R;
  /** weights @ V */
  output: R;
  /** With target: output − target, the gradOutput it stands for. */
  gradOutput?: R;
  /** With gradOutput or target: dL/dQ, dL/dK and dL/dV, shaped like q, k, v. */
  gradQ?: R;
  gradK?: R;
  gradV?: R;
  /** dL/d(weights) and dL/d(scaled), 0 where masked. */
  gradWeights?: R;
  gradScaled?: R;
}
export interface ScaledDotProductFromScoresResult<R> {
  scaled: R;
  weights: R;
}
export interface ScaledDotProductFromScoresWithValuesResult<R>
  extends ScaledDotProductFromScoresResult<R> {
  output: R;
}

/** One head's attention, [batch?, n_q, n_kv] and output [batch?, n_q, d_head]. */
export type HeadResult<R> = ScaledDotProductResult<R>;

/** With gradOutput: dL/d of the attention's projections (a bias's only when given). */
export interface ProjectionGradients {
  gradWq?: Matrix;
  gradWk?: Matrix;
  gradWv?: Matrix;
  gradWo?: Matrix;
  gradBq?: Vector;
  gradBk?: Vector;
  gradBv?: Vector;
  gradBo?: Vector;
}

export interface MultiHeadResult<R> extends ProjectionGradients {
  /** x @ wq + bq */
  q: R;
  /** xkv @ wk + bk */
  k: R;
  /** xkv @ wv + bv */
  v: R;
  /** One entry per head. */
  heads: HeadResult<R>[];
  /** The heads' outputs side by side [batch?, n_q, d_model]. */
  concat: R;
  /** concat @ wo + bo */
  output: R;
  /** With gradOutput: dL/d of x (and xkv), besides the projections'; each
   * head then holds its gradWeights and gradScaled. */
  gradX?: R;
  gradXkv?: R;
}

/** Each stage of the block, [batch?, n, d_model] (ffnHidden [batch?, n, d_ff]). */
export interface TransformerBlockResult<R> extends ProjectionGradients {
  attention: R;
  sum1: R;
  ln1: R;
  ffnHidden: R;
  ffn: R;
  sum2: R;
  ln2: R;
  output: R;
  /** Each head's attention weights, [batch?, n, n]. */
  heads: { weights: R }[];
  /** With gradOutput: dL/d of x and of the LayerNorms' and FFN's
   * parameters, besides the projections' (a bias's only when given). */
  gradX?: R;
  gradGamma1?: Vector;
  gradBeta1?: Vector;
  gradW1?: Matrix;
  gradB1?: Vector;
  gradW2?: Matrix;
  gradB2?: Vector;
  gradGamma2?: Vector;
  gradBeta2?: Vector;
}

export interface AdditiveResult<Q> {
  /** tanh(s @ ws + h_j @ wh + b), [n_q?, n_k, d_a]. */
  energy: EnergyOf<Q>;
  scores: ShapeOf<Q>;
  weights: ShapeOf<Q>;
  /** Σ_j weights_j h_j, [n_q?, d_h]. */
  context: ShapeOf<Q>;
  /** With gradContext: dL/d of the query, the keys and each parameter. */
  gradQuery?: ShapeOf<Q>;
  gradKeys?: Matrix;
  gradWs?: Matrix;
  gradWh?: Matrix;
  gradV?: Vector;
  gradB?: Vector;
}

export interface LuongResult<Q> {
  scores: ShapeOf<Q>;
  weights: ShapeOf<Q>;
  context: ShapeOf<Q>;
  /** With gradContext: dL/d of the query, the keys and w (general, concat). */
  gradQuery?: ShapeOf<Q>;
  gradKeys?: Matrix;
  gradW?: Matrix;
}
export interface LuongConcatResult<Q> extends LuongResult<Q> {
  /** tanh([s; h_j] @ w + b), [n_q?, n_k, d_a]. */
  energy: EnergyOf<Q>;
  gradV?: Vector;
  gradB?: Vector;
}

export interface LinearResult<R> {
  output: R;
  /** With gradOutput: dL/dQ, dL/dK and dL/dV. */
  gradQ?: R;
  gradK?: R;
  gradV?: R;
}

export interface OnlineSoftmaxResult {
  /** q kᵀ / √d_k, [n_q, n_k]. */
  scaled: Matrix;
  /** The running max after each tile, [n_q, tiles]. */
  tileMax: Matrix;
  /** The running sum of exp(s − max) after each tile, [n_q, tiles]. */
  tileSum: Matrix;
  /** The running output, not yet divided, after each tile, [n_q, tiles, d_v]. */
  tileAcc: Batch;
  /** The last tile's running output ÷ its running sum, [n_q, d_v]. */
  output: Matrix;
  /** The plain softmax's weights and output, for the comparison. */
  weights: Matrix;
  plainOutput: Matrix;
}

export interface SoftmaxResult<X> {
  /** x × scale; masked entries are -Infinity. */
  scaled: ShapeOf<X>;
  /** Each row's maximum over its unmasked entries. */
  max: RowValuesOf<X>;
  /** exp(scaled - max); masked entries 0. */
  exp: ShapeOf<X>;
  /** Each row's sum of exp. */
  sum: RowValuesOf<X>;
  weights: ShapeOf<X>;
}

export interface WeightedSumResult<R> {
  output: R;
}

// ---- Problems (run and format) ----

/** Every kind, in the engine's order (web/lib/facts.js, KINDS). */
export type ProblemKind =
  | 'scaledDotProduct' | 'weightedSum' | 'multiHead' | 'additive' | 'luong'
  | 'linear' | 'softmax' | 'transformerBlock' | 'onlineSoftmax';

/** A problem as run and format take it (and as build/attn reads it). */
export type Problem =
  | ({ kind: 'scaledDotProduct' } & (
      | ScaledDotProductInput<TensorInput>
      | ScaledDotProductFromScoresInput<TensorInput>
      | ScaledDotProductFromScoresWithValuesInput<TensorInput>))
  | ({ kind: 'multiHead' } & MultiHeadInput<MatrixInput | BatchInput>)
  | ({ kind: 'additive' } & AdditiveInput<VectorInput | MatrixInput>)
  | ({ kind: 'luong' } & LuongInput<VectorInput | MatrixInput>)
  | ({ kind: 'linear' } & LinearInput<TensorInput>)
  | ({ kind: 'softmax' } & SoftmaxInput<TensorInput>)
  | ({ kind: 'weightedSum' } & WeightedSumInput<TensorInput>)
  | ({ kind: 'transformerBlock' } & TransformerBlockInput<MatrixInput | BatchInput>)
  | ({ kind: 'onlineSoftmax' } & OnlineSoftmaxInput);

/** Any result object run returns. */
export type AttentionResult =
  | ScaledDotProductResult<Vector | Matrix | Batch>
  | ScaledDotProductFromScoresResult<Vector | Matrix | Batch>
  | ScaledDotProductFromScoresWithValuesResult<Vector | Matrix | Batch>
  | MultiHeadResult<Matrix | Batch>
  | AdditiveResult<VectorInput | MatrixInput>
  | LuongResult<VectorInput | MatrixInput>
  | LuongConcatResult<VectorInput | MatrixInput>
  | LinearResult<Vector | Matrix | Batch>
  | SoftmaxResult<TensorInput>
  | WeightedSumResult<Vector | Matrix | Batch>
  | TransformerBlockResult<Matrix | Batch>
  | OnlineSoftmaxResult;

/** format's styles: the result object as JSON, or the walkthrough (LaTeX:
 * a fragment for a document that loads amsmath). */
export type FormatStyle = 'json' | 'text' | 'markdown' | 'latex' | 'steps';

/** How a walkthrough fits the document it goes into (attn.format). */
/** attn.run's options: `results`, the names of the results to return. */
export interface RunOptions {
  results: readonly string[];
}

/** A result read by name: a number, or nested arrays, one per dimension. */
export type NamedResult = number | number[] | number[][] | number[][][];

export interface DocumentOptions {
  title?: string;
  headingLevel?: 1 | 2 | 3 | 4;
}

// ---- check ----

/** Numbers printed for a problem's results, by key: a result's name
 * ("weights"), one row of it ("output_row2", rows from 0), "weightsPercent",
 * "exp" and "sum" (a hand computation's softmax, without subtracting the
 * row's largest), "terms" (weights[i][j] × v[j][c]), and for a multi-head
 * problem `heads: [{ scores, ... }]`. null or -Infinity is a masked −∞;
 * strings (notes) are skipped; keys naming nothing are listed as unchecked. */
export interface PrintedNumbers {
  heads?: Array<Record<string, number | null | NestedPrinted>>;
  [key: string]: number | null | string | NestedPrinted | Array<Record<string, number | null | NestedPrinted>> | undefined;
}
export type NestedPrinted = ReadonlyArray<number | null | NestedPrinted>;

/** How many decimals each printed number was written with: one number for
 * all, or by key a number or nested arrays shaped like the numbers.
 * Without them a table's numbers are read to the most decimals any of them
 * shows (a double has lost 0.410's last zero, never gained a digit), and
 * the report's decimalsInferred says so. */
export type PrintedDecimals = number | Record<string, number | NestedDecimals>;
export type NestedDecimals = ReadonlyArray<number | NestedDecimals>;

export interface CheckOptions {
  decimals?: PrintedDecimals;
  /** 'json' (the default): the report object; else the report as text. */
  format?: 'json' | 'text' | 'markdown' | 'latex';
}

/** A printed cell: its key and its index in the printed numbers (from 0). */
export interface PrintedCell {
  field: string;
  index: number[];
}

/** A printed number the exact value does not round to. */
export interface Erratum extends PrintedCell {
  printed: number;
  exact: number;
  decimals: number;
  /** The walkthrough step (from 0) that computes it, or null. */
  step: number | null;
  /** Its group in `groups`. */
  group: number;
}

export type ErratumCause = 'misprint' | 'rounding' | 'no-scale' | 'scale-by-dk' | 'softmax-columns'
  | 'no-transpose' | 'mask-after-softmax' | 'v-transposed';

export interface ErratumGroup {
  cause: ErratumCause;
  /** A misprint's first misprinted number; null for the other causes. */
  root: PrintedCell | null;
  /** misprint: the numbers that are wrong of themselves (one table, one step). */
  roots?: PrintedCell[];
  /** misprint: the later numbers that follow from them. */
  carried?: PrintedCell[];
  /** rounding: the printed tables whose rounded numbers these follow from. */
  intermediates?: string[];
  /** One sentence a learner can read. */
  explanation: string;
}

export interface CheckReport {
  /** How many printed numbers were compared. */
  checked: number;
  errata: Erratum[];
  groups: ErratumGroup[];
  /** Printed keys that name nothing of this problem. */
  unchecked: string[];
  /** The decimals the check read a table's numbers to where none were
   * given (the most any of them shows), by printed key; {} when every
   * number came with its decimals. */
  decimalsInferred: Record<string, number>;
}

/** The cell a learner answers: a result's name ("weights",
 * "heads.0.scores"), its row and column from 0, and the text as typed. */
export interface AnswerCell {
  result: string;
  row: number;
  col: number;
  typed: string;
}

/** attn.answer's verdict (attn_check_answer in attention.h). */
export interface AnswerVerdict {
  result: string;
  row: number;
  col: number;
  typed: string;
  /** false when the text is no number: the verdict asks for one. */
  readable: boolean;
  /** The decimals graded: those typed, at least 2. */
  decimals: number;
  right: boolean;
  /** The number read; null when none. */
  value: number | null;
  /** null for a masked −∞. */
  exact: number | null;
  /** The exact value to the decimals graded, as text. */
  rounded: string;
  /** null when right; a slip's name, "rounding" or "misprint". */
  cause: ErratumCause | null;
  /** The walkthrough's step that computes the cell, from 0. */
  step: number | null;
  verdict: string;
  /** "" when right. */
  hint: string;
}

// ---- sdpaFlat ----

/** Flat row-major numbers. */
export type FlatInput = readonly number[] | NumberTypedArray;

/** Scaled dot-product attention over flat arrays, for timing. */
export interface SdpaFlatInput {
  /** [batch, nQ, dK] */
  q: FlatInput;
  /** [batch, nK, dK] */
  k: FlatInput;
  /** [batch, nK, dV] */
  v: FlatInput;
  /** Default 1. */
  batch?: number;
  nQ: number;
  nK: number;
  dK: number;
  dV: number;
  /** A factor, false for none; true or absent: 1/sqrt(dK). */
  scale?: number | boolean;
  causal?: boolean;
  /** Keep |i - j| <= window. */
  window?: number;
  /** The Sparse Transformer's strided pattern (j <= i implied). */
  stride?: number;
  /** Mask the keys at index >= keyLength: one integer from 0 to nK, or one per batch item. */
  keyLength?: number | readonly number[];
  /** A custom mask, flat [nQ, nK]: true (or 1) = may attend. */
  allowed?: readonly (boolean | number)[] | Uint8Array;
  /** true to also return the weights. */
  weights?: boolean;
  /** The most bytes of WebAssembly memory the call may allocate (inputs,
   *  outputs, weights and scratch); default: the engine's maxBytes. */
  maxBytes?: number;
  /** [batch, nQ, dV]: an array to write the output into (and return as
   *  `output`) instead of a new one, for small calls made often. */
  output?: Float64Array;
}

/** The float32 path: q, k and v all Float32Arrays (attn_sdpa_f32). */
export interface SdpaFlat32Input extends Omit<SdpaFlatInput, 'q' | 'k' | 'v' | 'output'> {
  /** [batch, nQ, dK] */
  q: Float32Array;
  /** [batch, nK, dK] */
  k: Float32Array;
  /** [batch, nK, dV] */
  v: Float32Array;
  /** [batch, nQ, dV]: as for SdpaFlatInput, in float32. */
  output?: Float32Array;
}

/** Linear attention over flat arrays, for timing. */
export interface LinearFlatInput {
  /** [batch, nQ, dK] */
  q: FlatInput;
  /** [batch, nK, dK] */
  k: FlatInput;
  /** [batch, nK, dV] */
  v: FlatInput;
  /** Default 1. */
  batch?: number;
  nQ: number;
  nK: number;
  dK: number;
  dV: number;
  causal?: boolean;
  /** As for SdpaFlatInput. */
  maxBytes?: number;
  /** As for SdpaFlatInput. */
  output?: Float64Array;
}

export interface SdpaFlatResult {
  /** [batch, nQ, dV] */
  output: Float64Array;
}
export interface SdpaFlatResultWithWeights extends SdpaFlatResult {
  /** [batch, nQ, nK] */
  weights: Float64Array;
}

/** Linear attention in float32: q, k and v all Float32Arrays. */
export interface LinearFlat32Input extends Omit<LinearFlatInput, 'q' | 'k' | 'v' | 'output'> {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  output?: Float32Array;
}

export interface SdpaFlat32Result {
  /** [batch, nQ, dV] */
  output: Float32Array;
}
export interface SdpaFlat32ResultWithWeights extends SdpaFlat32Result {
  /** [batch, nQ, nK] */
  weights: Float32Array;
}

// ---- Memory ----

export interface MemoryStats {
  /** Bytes malloc'd in the module right now. */
  allocatedBytes: number;
  /** Size of the WebAssembly memory. */
  memoryBytes: number;
}

// ---- Errors ----

/** attn_status codes (src/attention.h); their numbers never change. */
export type AttentionStatus =
  | 1  // ATTN_ERR_NULL
  | 2  // ATTN_ERR_SIZE
  | 3  // ATTN_ERR_SIZE_OVERFLOW
  | 4  // ATTN_ERR_HEADS
  | 5  // ATTN_ERR_OPTION (an unknown kind)
  | 6  // ATTN_ERR_RANGE
  | 7  // ATTN_ERR_NOT_FINITE
  | 8  // ATTN_ERR_OVERFLOW_VALUE
  | 9  // ATTN_ERR_NOMEM
  | 10 // ATTN_ERR_INPUT (a field missing, unknown or misshapen)
  | 11 // ATTN_ERR_STATE
  | 12 // ATTN_ERR_TOO_LARGE (above maxBytes, or beyond what wasm32 can hold)
  | 13 // ATTN_ERR_KV_HEADS
  | 14 // ATTN_ERR_HEAD_DIM
  | 15 // ATTN_ERR_POSITION
  | 16 // ATTN_ERR_CACHE_FULL
  | 17 // ATTN_ERR_TOKEN
  | 18; // ATTN_ERR_FORMAT (a model file malformed)

/**
 * What every call on the engine throws for any bad input (and loadAttention
 * for bad options, a wasmUrl that is not a URL or bytes that are not the
 * engine; a failed fetch stays a plain Error): an Error whose
 * message names the field and the expected shape (build/attn's words) and
 * whose status is the attn_status code, so `error instanceof
 * AttentionError` tells the engine's errors apart. When the caller's own
 * code threw while the call read its input (a getter), that exception is
 * the `cause`.
 */
export class AttentionError extends Error {
  constructor(message: string, status: AttentionStatus, options?: { cause?: unknown });
  readonly name: 'AttentionError';
  status: AttentionStatus;
}

/** The default byte limit of one problem or one *Flat call: 256 MiB. */
export const DEFAULT_MAX_BYTES: number;
/** The largest block one call may ask the wasm32 malloc for: 2^31 - 1. */
export const MAX_BLOCK_BYTES: number;

// ---- The engine ----

export interface Attention {
  scaledDotProduct<Q extends TensorInput>(
    input: ScaledDotProductInput<Q>): ScaledDotProductResult<ShapeOf<Q>>;
  scaledDotProduct<S extends TensorInput>(
    input: ScaledDotProductFromScoresWithValuesInput<S>):
    ScaledDotProductFromScoresWithValuesResult<ShapeOf<S>>;
  scaledDotProduct<S extends TensorInput>(
    input: ScaledDotProductFromScoresInput<S>): ScaledDotProductFromScoresResult<ShapeOf<S>>;

  multiHead<X extends MatrixInput | BatchInput>(
    input: MultiHeadInput<X>): MultiHeadResult<ShapeOf<X>>;

  additive<Q extends VectorInput | MatrixInput>(input: AdditiveInput<Q>): AdditiveResult<Q>;

  luong<Q extends VectorInput | MatrixInput>(input: LuongConcatInput<Q>): LuongConcatResult<Q>;
  luong<Q extends VectorInput | MatrixInput>(
    input: LuongDotInput<Q> | LuongGeneralInput<Q>): LuongResult<Q>;

  linear<Q extends TensorInput>(input: LinearInput<Q>): LinearResult<ShapeOf<Q>>;

  softmax<X extends TensorInput>(input: SoftmaxInput<X>): SoftmaxResult<X>;

  weightedSum<W extends TensorInput>(input: WeightedSumInput<W>): WeightedSumResult<ShapeOf<W>>;

  onlineSoftmax(input: OnlineSoftmaxInput): OnlineSoftmaxResult;

  /** Only the results named (attn_problem_result's names: "weights",
   * "gradScaled", "heads.1.scores"), each nested one array per dimension,
   * read from the engine's memory: no JSON is written or parsed, which
   * shows when the other results are large. */
  run(problem: Problem, options: RunOptions): Record<string, NamedResult>;
  /** Any problem by its kind; the same result as the method of that name. */
  run<Q extends TensorInput>(
    problem: { kind: 'scaledDotProduct' } & ScaledDotProductInput<Q>):
    ScaledDotProductResult<ShapeOf<Q>>;
  run<S extends TensorInput>(
    problem: { kind: 'scaledDotProduct' } & ScaledDotProductFromScoresWithValuesInput<S>):
    ScaledDotProductFromScoresWithValuesResult<ShapeOf<S>>;
  run<S extends TensorInput>(
    problem: { kind: 'scaledDotProduct' } & ScaledDotProductFromScoresInput<S>):
    ScaledDotProductFromScoresResult<ShapeOf<S>>;
  run<X extends MatrixInput | BatchInput>(
    problem: { kind: 'multiHead' } & MultiHeadInput<X>): MultiHeadResult<ShapeOf<X>>;
  run<Q extends VectorInput | MatrixInput>(
    problem: { kind: 'additive' } & AdditiveInput<Q>): AdditiveResult<Q>;
  run<Q extends VectorInput | MatrixInput>(
    problem: { kind: 'luong' } & LuongConcatInput<Q>): LuongConcatResult<Q>;
  run<Q extends VectorInput | MatrixInput>(
    problem: { kind: 'luong' } & (LuongDotInput<Q> | LuongGeneralInput<Q>)): LuongResult<Q>;
  run<Q extends TensorInput>(
    problem: { kind: 'linear' } & LinearInput<Q>): LinearResult<ShapeOf<Q>>;
  run<X extends TensorInput>(
    problem: { kind: 'softmax' } & SoftmaxInput<X>): SoftmaxResult<X>;
  run<W extends TensorInput>(
    problem: { kind: 'weightedSum' } & WeightedSumInput<W>): WeightedSumResult<ShapeOf<W>>;
  run<X extends MatrixInput | BatchInput>(
    problem: { kind: 'transformerBlock' } & TransformerBlockInput<X>): TransformerBlockResult<ShapeOf<X>>;
  run(problem: { kind: 'onlineSoftmax' } & OnlineSoftmaxInput): OnlineSoftmaxResult;
  run(problem: Problem): AttentionResult;

  /** The result as JSON (the default) or the walkthrough as text, Markdown,
   * LaTeX or steps (JSON): every walkthrough format renders the same steps.
   * `document` places a walkthrough in a document: its own title replaced
   * (at most 200 bytes, no control characters) and its title's heading level
   * (1 to 4; the steps one level under it). */
  format(problem: Problem, style?: FormatStyle, document?: DocumentOptions): string;

  /** The walkthrough as data: the engine's steps, with their equations. */
  steps(problem: Problem): WalkthroughSteps;

  /** The result and the steps from one run; with `equations: false` each
   * step without its equations (a step that has some says how many in
   * `equationCount`), for stepEquations to give one step's. */
  walkthrough(problem: Problem, options?: { equations?: boolean }): { result: AttentionResult; steps: WalkthroughSteps };

  /** The equations of step `number` (from 1), exactly as steps() gives them. */
  stepEquations(problem: Problem, number: number): Equation[];

  /** Which printed numbers are wrong and why: each the exact value does
   * not round to, grouped by cause (a misprint and what it was carried
   * into, rounding, or a named slip), each group with one sentence. */
  check(problem: Problem, printed: PrintedNumbers, options?: CheckOptions & { format?: 'json' }): CheckReport;
  check(problem: Problem, printed: PrintedNumbers, options: CheckOptions & { format: 'text' | 'markdown' | 'latex' }): string;
  /** A learner's typed value for one cell, graded by the check's rule. */
  answer(problem: Problem, cell: AnswerCell): AnswerVerdict;

  /** Float32Arrays in: computed in float32, Float32Arrays out. */
  sdpaFlat(input: SdpaFlat32Input & { weights: true }): SdpaFlat32ResultWithWeights;
  sdpaFlat(input: SdpaFlat32Input): SdpaFlat32Result;
  sdpaFlat(input: SdpaFlatInput & { weights: true }): SdpaFlatResultWithWeights;
  sdpaFlat(input: SdpaFlatInput): SdpaFlatResult;
  linearFlat(input: LinearFlat32Input): SdpaFlat32Result;
  linearFlat(input: LinearFlatInput): SdpaFlatResult;

  /** A tiny transformer that learns a task (docs/js-api.md, "The
   * trainer"); bad settings throw an AttentionError naming the setting.
   * Its model, Adam's moments, batches and held-out set count against the
   * engine's maxBytes: above it the call throws ATTN_ERR_TOO_LARGE (12),
   * naming the bytes needed and the limit (the largest settings need some
   * 380 MiB, more than the default 256 MiB). The trainer's memory belongs
   * to the returned object: dispose() frees it at once; a trainer dropped
   * without dispose() is freed when the garbage collector finds neither it
   * nor any of its methods reachable, which may be much later. */
  createTrainer(settings: TrainerSettings): Trainer;

  /** A Llama-architecture checkpoint (docs/models.md), run exactly in
   * float64: its config.json (text or bytes) and model.safetensors (F32,
   * F16 or BF16), or in Node (attention-node.js) the path of a folder
   * holding them. The engine checks every size against the file and the
   * engine's maxBytes before it allocates; a bad file throws an
   * AttentionError naming what is wrong. Not in attention-page.wasm. Its
   * memory belongs to the returned object, freed by dispose() (or, later,
   * by the garbage collector). */
  model(source: ModelFiles | string): LanguageModel;

  memoryStats(): MemoryStats;

  /** The float32 kernel sdpaFlat runs in this build of the engine:
   * 'wasm-relaxed-simd' (fused multiply-add, where relaxed SIMD runs),
   * 'wasm-simd128' or 'scalar'. */
  kernelName(): 'wasm-relaxed-simd' | 'wasm-simd128' | 'scalar';
}

export type TrainerTask = 'copy' | 'reverse' | 'sort' | 'previousToken' | 'induction' | 'lookup';

/** Settings; any left out take the task's defaults. */
export interface TrainerSettings {
  task: TrainerTask;
  seed?: number;
  layers?: number;
  heads?: number;
  dModel?: number;
  /** 0: attention and residual only; above 0: transformer blocks. */
  dFF?: number;
  seqLength?: number;
  vocab?: number;
  batchSize?: number;
  learningRate?: number;
  /** Scores × 1/√d_head (true) or unscaled. */
  scale?: boolean | number;
  causal?: boolean | number;
  /** The task's documented step budget. */
  steps?: number;
}

/** Every setting, resolved. */
export interface TrainerConfig {
  task: TrainerTask;
  seed: number;
  layers: number;
  heads: number;
  dModel: number;
  dFF: number;
  seqLength: number;
  vocab: number;
  batchSize: number;
  learningRate: number;
  scale: boolean;
  causal: boolean;
  steps: number;
}

export interface Trainer {
  readonly config: TrainerConfig;
  /** n Adam steps on fresh seeded batches; loss is the last batch's. */
  step(n?: number): { step: number; loss: number };
  /** Loss and token accuracy on the 256 held-out examples. */
  evaluate(): { loss: number; accuracy: number };
  example(index: number): { tokens: number[]; targets: number[]; counted: boolean[] };
  /** attention[layer][head][query][key]. */
  predict(tokens: number[]): { predicted: number[]; attention: number[][][][] };
  attention(layer: number, head: number, example?: number): number[][];
  /** The queries, keys and values (each [tokens, dModel / heads]) a head
   * attends with: scaled dot-product attention on them gives its weights. */
  head(layer: number, head: number, tokens: number[]): { q: number[][]; k: number[][]; v: number[][] };
  /** Frees the trainer's engine memory now (a second call does nothing);
   * every other method then throws ATTN_ERR_STATE. */
  dispose(): void;
}

export interface ModelFiles {
  /** config.json: Hugging Face's LlamaConfig names. */
  config: string | Uint8Array | ArrayBuffer;
  /** model.safetensors. */
  weights: Uint8Array | ArrayBuffer;
}

/** LlamaConfig's names, as the engine read them. */
export interface LanguageModelConfig {
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  max_position_embeddings: number;
  rope_theta: number;
  rms_norm_eps: number;
  tie_word_embeddings: boolean;
}

/** The text's UTF-8 bytes (a byte's id is its value, nothing added), or the ids. */
export type ModelTokens = { text: string; ids?: undefined } | { ids: number[]; text?: undefined };

export interface LanguageModel {
  readonly config: LanguageModelConfig;
  /** As `attn model run --format json`: a row of attention has an entry
   * per position, 0 after the query. */
  run(input: ModelTokens): { ids: number[]; attention: number[][][][]; logits: number[][] };
  /** As `attn model generate --format json`: the prompt's ids, then
   * `tokens` more; greedy at temperature 0 (ties to the lowest id), else
   * drawn with the seed (0 to 2^53 - 1, or a BigInt to 2^64 - 1); the same
   * ids with cache false. */
  generate(input: ModelTokens & { tokens: number; temperature?: number; seed?: number | bigint; cache?: boolean }):
    { ids: number[]; prompt: number };
  /** What a head attends with: q and k after the rotary embedding, v as
   * projected, each [position][head_dim]. */
  head(layer: number, head: number, input: ModelTokens): { q: number[][]; k: number[][]; v: number[][] };
  /** That head's walkthrough on the text: the steps, as steps() gives them. */
  walkthrough(layer: number, head: number, input: ModelTokens & { format?: 'steps' }): WalkthroughSteps;
  walkthrough(layer: number, head: number, input: ModelTokens & { format: 'json' }): AttentionResult;
  walkthrough(layer: number, head: number, input: ModelTokens & { format: 'text' | 'markdown' | 'latex' }): string;
  /** Each token as the engine labels it (attn_token_label): 'a', '\u2423' for a space, '\\xc3' for a byte alone. */
  labels(input: ModelTokens): string[];
  /** Frees the model's engine memory now (a second call does nothing);
   * every other method then throws ATTN_ERR_STATE. */
  dispose(): void;
}

/** A cell of a tensor: its name ("q", "scores", "heads.1.weights", or a
 * quantity the steps name: "max", "exp", "sum", "terms", "S", "z") and its
 * indices from 0, as the results index it (batch first when batched). */
export type CellRef = [string, ...number[]];

/** A number: from a cell (ref), or a constant. v is -Infinity where masked. */
export interface EquationLeaf { v: number; ref?: CellRef }

/** An operation on its operands; v is its value, absent when a vector. */
export interface EquationOperation {
  op: 'add' | 'sub' | 'mul' | 'div' | 'exp' | 'max' | 'sqrt' | 'tanh' | 'phi' | 'vec';
  v?: number;
  ref?: CellRef;
  args: EquationNode[];
}

export type EquationNode = EquationLeaf | EquationOperation;

/**
 * label = chain[0] = chain[1] = …: every expression has the last one's value.
 * repeat: in a step that gathers the repeats of an operation, the name of the
 * repeat this equation starts ("Score of sat against mat"); the equations up
 * to the next one with a repeat are its own.
 */
export interface Equation { label: string; repeat?: string; chain: EquationNode[] }

/** Part of a tensor a step reads (produces false) or computes. */
export interface StepRegion {
  name: string;
  produces: boolean;
  batch?: number;
  all?: true;
  rows?: [number, number];
  cols?: [number, number];
  cell?: [number, number];
  /** Of scaled: true = just its masked cells, false = just the others. */
  masked?: boolean;
}

export interface WalkthroughStep {
  /** Stable: "inputs", "score-0-1", "softmax-2", "h1-output-0", "b2-mask", … */
  id: string;
  /** From 1, as every format counts. */
  number: number;
  title: string;
  /** "Batch item 2 › Head 1", or "". */
  group: string;
  text?: string[];
  formula?: { tex: string; plain: string };
  regions?: StepRegion[];
  equations?: Equation[];
  /** With walkthrough(problem, { equations: false }): how many equations
   * the step has, in place of them. */
  equationCount?: number;
  /** The tables an export shows at this step, by tensor. */
  tables?: { name: string; tensor: string; note?: string }[];
}

export interface WalkthroughSteps {
  title: string;
  intro: string;
  steps: WalkthroughStep[];
}

export interface LoadOptions {
  /** The module's bytes, used as they are. */
  wasmBinary?: ArrayBuffer | ArrayBufferView;
  /** Where to fetch it, resolved as fetch would (against the page);
   *  default: attention.wasm next to attention.js. */
  wasmUrl?: string | URL;
  /** The most bytes one problem may hold (inputs, results, scratch) and one
   *  *Flat call may allocate: an integer from 1 to 2^32 - 1; default
   *  DEFAULT_MAX_BYTES. Above it a call throws ATTN_ERR_TOO_LARGE (12). */
  maxBytes?: number;
}

/** Compiles and instantiates attention.wasm. */
export function loadAttention(options?: LoadOptions): Promise<Readonly<Attention>>;

/** The default export: `import attention from 'attention-explainer'`. */
declare const attention: { readonly loadAttention: typeof loadAttention; readonly AttentionError: typeof AttentionError };
export default attention;
