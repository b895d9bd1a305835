/*
 * sdpa_f32_body.h: the float32 attention kernel, written once over a small
 * set of vector operations and compiled once per instruction set. The file
 * that includes it defines:
 *
 *   VF              the vector type; VW its width in floats
 *   V_ZERO()        all lanes 0             V_SET1(x)     all lanes x
 *   V_LOAD(p)       unaligned load          V_STORE(p, a) unaligned store
 *   V_ADD V_SUB V_MUL V_MAX (a, b)          V_FMA(a, b, c) = a * b + c
 *   V_EXP(x)        e^x for x <= 0 (-INFINITY gives exactly 0), or 2^x
 *                   when F32_EXP2 is 1 (then the scores are scaled by
 *                   log2(e) as Q is packed, which saves the kernel a
 *                   multiplication and half its range reduction)
 *   V_HSUM, V_HMAX  (optional) sum and max of the lanes
 *   V_TRANSPOSE4(r0, r1, r2, r3)  (optional, for VW 4) transposes the
 *                   4 × 4 block held in four vector variables
 *   F32_NAME(name)  the name of this instruction set's copy of `name`
 *   F32_MR          query rows per block: 4, 6, 8 or 12 (at most
 *                   ATTN__F32_MR)
 *   F32_GROUPS      (optional, 1 if not defined) blocks that go through
 *                   the keys together in the online softmax, each tile of K
 *                   and V read once for all of them (F32_MR · F32_GROUPS at
 *                   most ATTN__F32_ROWS)
 *   F32_NB          keys per tile, a multiple of 2·VW (at most ATTN__F32_NB):
 *                   longer tiles spread the per-tile softmax work, shorter
 *                   ones let masks skip more
 *   F32_P_ROWS      1: the online P·V reads P in place, row by row (best
 *                   natively); 0: P is transposed first, so every load of
 *                   the microkernel is at a fixed offset of one pointer
 *                   (best in WASM, where each address costs instructions)
 *
 * and F32_NAME(item) (declared in kernels.h) runs one batch item.
 *
 * The layout is a GEMM's: K is packed once per item into tiles of
 * F32_NB keys, transposed ([tile, d_k, NB]), so the score microkernel
 * keeps F32_MR query rows × 2 vectors of keys in registers and walks
 * d_k with one broadcast per row and two loads per step. Without weights
 * the softmax is online (a running max and sum per row, as FlashAttention):
 * the work array holds the packed K and, for the F32_GROUPS blocks that go
 * through the keys together, one tile of scores and of P and the output
 * accumulators, O(T·d) in all. Tiles every query of a block may not see
 * (causal, local, strided, key padding) are skipped.
 */

/* The register blocks are macros laid out by hand, one row of the block
 * per line, which clang-format would reflow. */
/* clang-format off */

#ifndef F32_GROUPS
#define F32_GROUPS 1
#endif
#if F32_MR > ATTN__F32_MR || F32_NB > ATTN__F32_NB || \
    F32_MR * F32_GROUPS > ATTN__F32_ROWS || \
    F32_MR * F32_GROUPS * F32_NB > ATTN__F32_TILE
#error "sdpa_f32_body.h: F32_MR, F32_GROUPS or F32_NB exceed the work array"
#endif
#define MR F32_MR
#define NB F32_NB
#ifndef F32_EXP2
#define F32_EXP2 0
#endif

/* Horizontal reductions, once per row and tile: the instruction set's own
 * (V_HSUM, V_HMAX) where it defines them, else through memory. */
static float F32_NAME(hsum)(VF a)
{
#ifdef V_HSUM
    return V_HSUM(a);
#else
    float lanes[VW];
    V_STORE(lanes, a);
    float sum = 0.0f;
    for (int i = 0; i < VW; i++) sum += lanes[i];
    return sum;
#endif
}

static float F32_NAME(hmax)(VF a)
{
#ifdef V_HMAX
    return V_HMAX(a);
#else
    float lanes[VW];
    V_STORE(lanes, a);
    float max = lanes[0];
    for (int i = 1; i < VW; i++) max = lanes[i] > max ? lanes[i] : max;
    return max;
#endif
}

/* Rounds n up to a multiple of 2·VW (the score microkernel's step). */
static int F32_NAME(round_up)(int n)
{
    return (n + 2 * VW - 1) / (2 * VW) * (2 * VW);
}

#if defined(V_TRANSPOSE4) && VW == 4
#define F32_TRANSPOSE_ROWS 1
/* out[(c + i) · stride + r] = rows[r][c + i] · factor for the 4 rows and
 * the columns up to n's last multiple of 4, by 4 × 4 blocks transposed in
 * registers (where a loop of single floats would go through WASM's lane
 * extractions); returns how many columns that is. */
static int F32_NAME(transpose_rows)(float *out, size_t stride,
                                    const float *const rows[4], int n,
                                    float factor)
{
    const VF f = V_SET1(factor);
    int c = 0;
    for (; c + 4 <= n; c += 4) {
        VF r0 = V_MUL(V_LOAD(rows[0] + c), f), r1 = V_MUL(V_LOAD(rows[1] + c), f);
        VF r2 = V_MUL(V_LOAD(rows[2] + c), f), r3 = V_MUL(V_LOAD(rows[3] + c), f);
        V_TRANSPOSE4(r0, r1, r2, r3);
        V_STORE(out + (size_t)c * stride, r0);
        V_STORE(out + (size_t)(c + 1) * stride, r1);
        V_STORE(out + (size_t)(c + 2) * stride, r2);
        V_STORE(out + (size_t)(c + 3) * stride, r3);
    }
    return c;
}
#else
#define F32_TRANSPOSE_ROWS 0
#endif

/* kt [tiles, d_k, NB]: key j0 + jj of tile t, column c at
 * kt[(t * d_k + c) * NB + jj]; keys past n_k are 0 up to the microkernel's
 * step, and the rest of the last tile is never read. Every loop here runs
 * down the columns: one along a column of zeros would become a call of
 * memset per column, which at T = 4 cost a tenth of the call. */
static void F32_NAME(pack_k)(float *kt, const float *k, int n_k, int d_k)
{
    const int tiles = (n_k + NB - 1) / NB;
    for (int t = 0; t < tiles; t++) {
        float *tile = kt + (size_t)t * (size_t)d_k * NB;
        const float *k_rows = k + (size_t)t * NB * (size_t)d_k;
        const int left = n_k - t * NB < NB ? n_k - t * NB : NB;
        int jj = 0;
#if F32_TRANSPOSE_ROWS
        for (; jj + 4 <= left; jj += 4) {
            const float *const rows[4] = {
                k_rows + (size_t)jj * (size_t)d_k,
                k_rows + (size_t)(jj + 1) * (size_t)d_k,
                k_rows + (size_t)(jj + 2) * (size_t)d_k,
                k_rows + (size_t)(jj + 3) * (size_t)d_k,
            };
            const int done = F32_NAME(transpose_rows)(tile + jj, NB, rows, d_k, 1.0f);
            for (int r = 0; r < 4; r++)
                for (int c = done; c < d_k; c++)
                    tile[(size_t)c * NB + (size_t)(jj + r)] = rows[r][c];
        }
#endif
        for (; jj < left; jj++) {
            const float *k_row = k_rows + (size_t)jj * (size_t)d_k;
            for (int c = 0; c < d_k; c++) tile[(size_t)c * NB + jj] = k_row[c];
        }
        const int packed = F32_NAME(round_up)(left);
        for (; jj < packed && jj % VW != 0; jj++)
            for (int c = 0; c < d_k; c++) tile[(size_t)c * NB + jj] = 0.0f;
        for (; jj < packed; jj += VW)
            for (int c = 0; c < d_k; c++) V_STORE(tile + (size_t)c * NB + jj, V_ZERO());
    }
}

/* The microkernels below are unrolled by hand for MR query rows: 12 with
 * AVX-512 (24 accumulators of its 32 registers), 6 with AVX2 (the classic
 * 6 × 2-vector GEMM block: 12 accumulators, 2 loads and 6 broadcasts per
 * step, 15 registers of 16), 4 in WASM, whose compilers keep a scratch
 * register or two for themselves (8 is there to try). */
#if MR == 12
#define F32_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#elif MR == 8
#define F32_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#elif MR == 6
#define F32_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#elif MR == 4
#define F32_ROWS(X) X(0) X(1) X(2) X(3)
#else
#error "sdpa_f32_body.h: F32_MR must be 4, 6, 8 or 12"
#endif

/* s [MR, NB] = Q block × packed keys 0..nb of one tile (nb a multiple of
 * 2·VW), with the block packed as qt [d_k, MR]: MR × 2 vectors of
 * accumulators, one broadcast per row, and every load at a fixed offset
 * from two pointers that step through d_k. Also, while the scores are in
 * registers: row_max [MR], each row's largest, and the return value, 1 if
 * every score is finite (x - x is 0 for a finite x and NaN otherwise, and
 * NaN survives the sum). */
static int F32_NAME(tile_scores)(float *s, float *row_max, const float *qt,
                                 const float *kt_tile, int d_k, int nb)
{
#define F32_DECLARE_ROW(r) VF max##r = V_SET1(-INFINITY);
    F32_ROWS(F32_DECLARE_ROW)
    VF check = V_ZERO();
#define F32_DECLARE(r) VF a##r##0 = V_ZERO(), a##r##1 = V_ZERO();
#define F32_STEP(r) { const VF b = V_SET1(qp[r]); \
                      a##r##0 = V_FMA(b, k0, a##r##0); \
                      a##r##1 = V_FMA(b, k1, a##r##1); }
#define F32_SAVE(r) V_STORE(s + r * NB + jj, a##r##0); \
                    V_STORE(s + r * NB + jj + VW, a##r##1); \
                    max##r = V_MAX(max##r, V_MAX(a##r##0, a##r##1)); \
                    check = V_ADD(check, V_ADD(V_SUB(a##r##0, a##r##0), \
                                               V_SUB(a##r##1, a##r##1)));
#define F32_SAVE_MAX(r) row_max[r] = F32_NAME(hmax)(max##r);
    for (int jj = 0; jj < nb; jj += 2 * VW) {
        F32_ROWS(F32_DECLARE)
        const float *kp = kt_tile + jj;
        const float *qp = qt;
        for (int c = 0; c < d_k; c++, kp += NB, qp += MR) {
            const VF k0 = V_LOAD(kp);
            const VF k1 = V_LOAD(kp + VW);
            F32_ROWS(F32_STEP)
        }
        F32_ROWS(F32_SAVE)
    }
    F32_ROWS(F32_SAVE_MAX)
    return F32_NAME(hsum)(check) == 0.0f;
#undef F32_DECLARE_ROW
#undef F32_DECLARE
#undef F32_STEP
#undef F32_SAVE
#undef F32_SAVE_MAX
}

/* acc [MR, d_v] += p @ v [nv, d_v], with p packed as pt [nv, MR]. */
static void F32_NAME(tile_pv)(float *acc, int d_v, const float *pt,
                              const float *v, int nv)
{
#define F32_POINTERS(r) float *c##r = acc + r * d_v;
    F32_ROWS(F32_POINTERS)
#undef F32_POINTERS
    int c = 0;
#define F32_LOAD_ACC(r) VF a##r##0 = V_LOAD(c##r + c), \
                           a##r##1 = V_LOAD(c##r + c + VW);
#define F32_STEP(r) { const VF b = V_SET1(pp[r]); \
                      a##r##0 = V_FMA(b, v0, a##r##0); \
                      a##r##1 = V_FMA(b, v1, a##r##1); }
#define F32_SAVE(r) V_STORE(c##r + c, a##r##0); V_STORE(c##r + c + VW, a##r##1);
    for (; c + 2 * VW <= d_v; c += 2 * VW) {
        F32_ROWS(F32_LOAD_ACC)
        const float *pp = pt;
        const float *v_row = v + c;
        for (int j = 0; j < nv; j++, pp += MR, v_row += d_v) {
            const VF v0 = V_LOAD(v_row), v1 = V_LOAD(v_row + VW);
            F32_ROWS(F32_STEP)
        }
        F32_ROWS(F32_SAVE)
    }
#undef F32_LOAD_ACC
#undef F32_STEP
#undef F32_SAVE
#define F32_LOAD_ONE(r) float a##r = c##r[c];
#define F32_STEP_ONE(r) a##r += pp[r] * x;
#define F32_SAVE_ONE(r) c##r[c] = a##r;
    for (; c < d_v; c++) { /* columns left over: one at a time */
        F32_ROWS(F32_LOAD_ONE)
        const float *pp = pt;
        for (int j = 0; j < nv; j++, pp += MR) {
            const float x = v[(size_t)j * (size_t)d_v + c];
            F32_ROWS(F32_STEP_ONE)
        }
        F32_ROWS(F32_SAVE_ONE)
    }
#undef F32_LOAD_ONE
#undef F32_STEP_ONE
#undef F32_SAVE_ONE
}

#if F32_P_ROWS
/* tile_pv reading p in place as rows [MR, nv], p_stride apart: natively
 * the broadcasts address each row directly, which beats transposing P. */
static void F32_NAME(tile_pv_rows)(float *acc, int d_v, const float *p,
                                   size_t p_stride, const float *v, int nv)
{
#define F32_POINTERS(r) const float *p##r = p + r * p_stride; \
                        float *c##r = acc + r * d_v;
    F32_ROWS(F32_POINTERS)
#undef F32_POINTERS
    int c = 0;
#define F32_LOAD_ACC(r) VF a##r##0 = V_LOAD(c##r + c), \
                           a##r##1 = V_LOAD(c##r + c + VW);
#define F32_STEP(r) { const VF b = V_SET1(p##r[j]); \
                      a##r##0 = V_FMA(b, v0, a##r##0); \
                      a##r##1 = V_FMA(b, v1, a##r##1); }
#define F32_SAVE(r) V_STORE(c##r + c, a##r##0); V_STORE(c##r + c + VW, a##r##1);
    for (; c + 2 * VW <= d_v; c += 2 * VW) {
        F32_ROWS(F32_LOAD_ACC)
        for (int j = 0; j < nv; j++) {
            const float *v_row = v + (size_t)j * (size_t)d_v + c;
            const VF v0 = V_LOAD(v_row), v1 = V_LOAD(v_row + VW);
            F32_ROWS(F32_STEP)
        }
        F32_ROWS(F32_SAVE)
    }
#undef F32_LOAD_ACC
#undef F32_STEP
#undef F32_SAVE
#define F32_LOAD_ONE(r) float a##r = c##r[c];
#define F32_STEP_ONE(r) a##r += p##r[j] * x;
#define F32_SAVE_ONE(r) c##r[c] = a##r;
    for (; c < d_v; c++) {
        F32_ROWS(F32_LOAD_ONE)
        for (int j = 0; j < nv; j++) {
            const float x = v[(size_t)j * (size_t)d_v + c];
            F32_ROWS(F32_STEP_ONE)
        }
        F32_ROWS(F32_SAVE_ONE)
    }
#undef F32_LOAD_ONE
#undef F32_STEP_ONE
#undef F32_SAVE_ONE
}
#endif

/* x within lo..hi */
static int F32_NAME(clamp)(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Masked entries of row (keys j0.., nv of them real, nb computed) become
 * -INFINITY; keys past nv too. */
static void F32_NAME(mask_row)(float *row, const attn__f32_job *job,
                               int state, int i, int j0, int nv, int nb)
{
    int lo, hi;
    if (state == ATTN__F32_TILE_PARTIAL) {
        if (attn__f32_row_range(job, i, &lo, &hi)) { /* a range: two spans */
            const int first = F32_NAME(clamp)(lo - j0, 0, nv);
            const int end = F32_NAME(clamp)(hi - j0 + 1, first, nv);
            for (int jj = 0; jj < first; jj++) row[jj] = -INFINITY;
            for (int jj = end; jj < nv; jj++) row[jj] = -INFINITY;
        } else {
            for (int jj = 0; jj < nv; jj++)
                if (!attn_mask_allows(job->mask, job->n_k, job->mask_b, i,
                                      j0 + jj))
                    row[jj] = -INFINITY;
        }
    }
    for (int jj = nv; jj < nb; jj++) row[jj] = -INFINITY;
}

static float F32_NAME(max_row)(const float *row, int nb)
{
    VF m = V_SET1(-INFINITY);
    for (int jj = 0; jj < nb; jj += VW) m = V_MAX(m, V_LOAD(row + jj));
    return F32_NAME(hmax)(m);
}

/* The maximum of a row of scaled scores once masked (tile_max, its
 * maximum before, when the mask leaves the row whole), masking it. Every
 * score the tile computed was checked for overflow, masked or not, as
 * attn_sdpa does; keys no query of the block may see are not computed, as
 * tiles it may not see are not. */
static float F32_NAME(prepare_row)(float *row, const attn__f32_job *job,
                                   int state, int i, int j0, int nv, int nb,
                                   float tile_max)
{
    if (state == ATTN__F32_TILE_FULL && nv == nb) return tile_max;
    F32_NAME(mask_row)(row, job, state, i, j0, nv, nb);
    return F32_NAME(max_row)(row, nb);
}

/* row = exp(row - max) over nb entries (a multiple of VW); returns the sum. */
static float F32_NAME(exp_row)(float *row, int nb, float max)
{
    const VF vmax = V_SET1(max);
    VF sum = V_ZERO();
    for (int jj = 0; jj < nb; jj += VW) {
        const VF e = V_EXP(V_SUB(V_LOAD(row + jj), vmax));
        sum = V_ADD(sum, e);
        V_STORE(row + jj, e);
    }
    return F32_NAME(hsum)(sum);
}

static void F32_NAME(dropout_row)(float *row, const attn__f32_job *job,
                                  int i, int j0, int nv)
{
    const float inv_keep = (float)(1.0 / (1.0 - job->dropout));
    for (int jj = 0; jj < nv; jj++)
        row[jj] = attn_dropout_keeps(job->seed, job->dropout, job->dropout_b,
                                     i, j0 + jj)
                      ? row[jj] * inv_keep : 0.0f;
}

/* qt [d_k, MR]: the block's query rows side by side, times the scale (so
 * the scores come out scaled); rows past n_q repeat the last real one, and
 * their results are never written out. */
static void F32_NAME(pack_q)(float *qt, const attn__f32_job *job, int i0)
{
    /* In base 2 the scores are in units of log2(e): e^(s - m) = 2^(s' - m'). */
    const float factor = F32_EXP2 ? job->scale * 1.44269504088896341f
                                  : job->scale;
    const float *rows[MR];
    for (int r = 0; r < MR; r++) {
        const int i = i0 + r < job->n_q ? i0 + r : job->n_q - 1;
        rows[r] = job->q + (size_t)i * (size_t)job->d_k;
    }
    int done = 0;
#if F32_TRANSPOSE_ROWS && MR == 4
    done = F32_NAME(transpose_rows)(qt, MR, rows, job->d_k, factor);
#endif
    for (int r = 0; r < MR; r++)
        for (int c = done; c < job->d_k; c++)
            qt[(size_t)c * MR + (size_t)r] = rows[r][c] * factor;
}

#if !F32_P_ROWS
/* pt [nv, MR] = s [MR, nv] (rows NB apart): P transposed for tile_pv, by
 * 4 × 4 blocks in registers where the instruction set has V_TRANSPOSE4
 * and a block is 4 rows of 4. */
static void F32_NAME(transpose_p)(float *pt, const float *s, int nv)
{
    int jj = 0;
#if defined(V_TRANSPOSE4) && MR == 4 && VW == 4
    for (; jj + 4 <= nv; jj += 4) {
        VF r0 = V_LOAD(s + jj), r1 = V_LOAD(s + NB + jj);
        VF r2 = V_LOAD(s + 2 * NB + jj), r3 = V_LOAD(s + 3 * NB + jj);
        V_TRANSPOSE4(r0, r1, r2, r3);
        V_STORE(pt + 4 * jj, r0);
        V_STORE(pt + 4 * jj + 4, r1);
        V_STORE(pt + 4 * jj + 8, r2);
        V_STORE(pt + 4 * jj + 12, r3);
    }
#endif
    for (; jj < nv; jj++)
        for (int r = 0; r < MR; r++)
            pt[(size_t)jj * MR + (size_t)r] = s[(size_t)r * NB + (size_t)jj];
}
#endif

/* One block of MR query rows in the online softmax: a running max and
 * sum per row, its packed queries and its output accumulators. */
typedef struct {
    int i0, rows;  /* its first query and how many are real */
    int keys;      /* keys 0..keys-1 are the most any of its rows may see */
    float m[MR], l[MR];
    float *qt;     /* [d_k, MR] */
    float *acc;    /* [MR, d_v] */
    float *s;      /* [MR, NB] this tile's scores, then P */
    float *pt;     /* [NB, MR] P transposed */
    int nv;        /* keys of this tile it adds: 0 if none */
} F32_NAME(online_block);

static void F32_NAME(online_start)(F32_NAME(online_block) *b,
                                   const attn__f32_job *job, int i0,
                                   float *qt, float *acc, float *s, float *pt)
{
    b->s = s;
    b->pt = pt;
    b->i0 = i0;
    b->rows = job->n_q - i0 < MR ? job->n_q - i0 : MR;
    b->keys = attn__f32_last_key(job, i0 + b->rows - 1) + 1;
    b->qt = qt;
    b->acc = acc;
    F32_NAME(pack_q)(qt, job, i0);
    for (int r = 0; r < MR; r++) {
        b->m[r] = -INFINITY;
        b->l[r] = 0.0f;
    }
    for (size_t a = 0; a < (size_t)MR * (size_t)job->d_v; a++) acc[a] = 0.0f;
}

/* P of the tile of keys from j0 for block b (in b->s, or b->pt where P
 * is read transposed), its sums added to b's, b's accumulators rescaled
 * where its max grew; b->nv, the keys of the tile it adds (0: none). */
static int F32_NAME(online_tile)(F32_NAME(online_block) *b,
                                 const attn__f32_job *job, int j0,
                                 const attn__f32_scratch *w)
{
    const int d_k = job->d_k, d_v = job->d_v, i0 = b->i0, rows = b->rows;
    float *s = b->s;
    const int nv = b->keys - j0 < NB ? b->keys - j0 : NB;
    b->nv = 0;
    if (nv <= 0) return ATTN_OK;
    const int state = attn__f32_tile_state(job, i0, i0 + rows - 1, j0,
                                           j0 + nv - 1);
    if (state == ATTN__F32_TILE_SKIP) return ATTN_OK;
    b->nv = nv;
    const int nb = F32_NAME(round_up)(nv);
    float row_max[MR];
    if (!F32_NAME(tile_scores)(s, row_max, b->qt,
                               w->kt + (size_t)(j0 / NB) * (size_t)d_k * NB,
                               d_k, nb))
        return ATTN_ERR_OVERFLOW_VALUE;
    for (int r = 0; r < MR; r++) {
        float *row = s + (size_t)r * NB;
        if (r >= rows) { /* padding rows: contribute nothing */
            for (int jj = 0; jj < nv; jj++) row[jj] = 0.0f;
            continue;
        }
        const float tile_max = F32_NAME(prepare_row)(row, job, state, i0 + r,
                                                     j0, nv, nb, row_max[r]);
        const float m_old = b->m[r];
        const float m_new = tile_max > m_old ? tile_max : m_old;
        if (m_new == -INFINITY) { /* every key so far masked */
            for (int jj = 0; jj < nv; jj++) row[jj] = 0.0f;
            continue;
        }
        /* While m was -inf nothing was accumulated: acc and l are 0;
         * once the max settles, most tiles leave it as it is. */
        const float alpha = m_old == -INFINITY ? 0.0f
                            : m_old == m_new  ? 1.0f
                            : F32_EXP2        ? exp2f(m_old - m_new)
                                              : expf(m_old - m_new);
        const float sum = F32_NAME(exp_row)(row, nb, m_new);
        b->l[r] = b->l[r] * alpha + sum;
        b->m[r] = m_new;
        if (alpha != 1.0f && alpha != 0.0f) {
            float *acc_row = b->acc + (size_t)r * (size_t)d_v;
            for (int c = 0; c < d_v; c++) acc_row[c] *= alpha;
        }
        if (job->dropout > 0.0)
            F32_NAME(dropout_row)(row, job, i0 + r, j0, nv);
    }
#if !F32_P_ROWS
    F32_NAME(transpose_p)(b->pt, s, nv);
#endif
    return ATTN_OK;
}

/* Adds P · V for the tile of keys from j0 that online_tile made P of. */
static void F32_NAME(online_pv)(F32_NAME(online_block) *b,
                                const attn__f32_job *job, int j0)
{
    if (b->nv == 0) return;
#if F32_P_ROWS
    F32_NAME(tile_pv_rows)(b->acc, job->d_v, b->s, NB,
                           job->v + (size_t)j0 * (size_t)job->d_v, b->nv);
#else
    F32_NAME(tile_pv)(b->acc, job->d_v, b->pt,
                      job->v + (size_t)j0 * (size_t)job->d_v, b->nv);
#endif
}

/* The block's output rows: the accumulators over the sums. */
static int F32_NAME(online_finish)(const F32_NAME(online_block) *b,
                                   const attn__f32_job *job)
{
    const int d_v = job->d_v;
    for (int r = 0; r < b->rows; r++) {
        float *out = job->output + (size_t)(b->i0 + r) * (size_t)d_v;
        const float *acc_row = b->acc + (size_t)r * (size_t)d_v;
        const float inv = b->l[r] > 0.0f ? 1.0f / b->l[r] : 0.0f;
        for (int c = 0; c < d_v; c++) out[c] = acc_row[c] * inv;
        if (!attn__all_finite_f32(out, (size_t)d_v))
            return ATTN_ERR_OVERFLOW_VALUE;
    }
    return ATTN_OK;
}

/* Online softmax: no weights, O(T·d) memory. F32_GROUPS blocks of MR
 * query rows from i0 go through the keys together, tile by tile: first the
 * scores and P of every block, then P · V of every block, so each tile of
 * K and then of V is read from memory once for all of them and used while
 * it is in the nearest cache. */
static int F32_NAME(blocks_online)(const attn__f32_job *job, int i0,
                                   const attn__f32_scratch *w)
{
    F32_NAME(online_block) blocks[F32_GROUPS];
    int groups = 0, keys = 0;
    for (; groups < F32_GROUPS && i0 + groups * MR < job->n_q; groups++) {
        F32_NAME(online_block) *b = &blocks[groups];
        F32_NAME(online_start)(b, job, i0 + groups * MR,
                               w->qt + (size_t)groups * MR * (size_t)job->d_k,
                               w->acc + (size_t)groups * MR * (size_t)job->d_v,
                               w->s + (size_t)groups * MR * NB,
                               w->pt + (size_t)groups * MR * NB);
        if (b->keys > keys) keys = b->keys;
    }
    for (int j0 = 0; j0 < keys; j0 += NB) {
        for (int g = 0; g < groups; g++) {
            const int status = F32_NAME(online_tile)(&blocks[g], job, j0, w);
            if (status != ATTN_OK) return status;
        }
        for (int g = 0; g < groups; g++) F32_NAME(online_pv)(&blocks[g], job, j0);
    }
    for (int g = 0; g < groups; g++) {
        const int status = F32_NAME(online_finish)(&blocks[g], job);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

/* Two passes through the weights array: scaled scores, then the exact row
 * softmax (and dropout) in place, then the output from the weights. */
static int F32_NAME(block_weights)(const attn__f32_job *job, int i0,
                                   const attn__f32_scratch *scratch)
{
    const int n_k = job->n_k, d_k = job->d_k, d_v = job->d_v;
    const int rows = job->n_q - i0 < MR ? job->n_q - i0 : MR;
    float *s = scratch->s, *acc = scratch->acc, *pt = scratch->pt;
    F32_NAME(pack_q)(scratch->qt, job, i0);
    float *w = job->weights + (size_t)i0 * (size_t)n_k; /* [rows, n_k] */
    float m[MR];
    for (int r = 0; r < MR; r++) m[r] = -INFINITY;

    const int keys = attn__f32_last_key(job, i0 + rows - 1) + 1;
    for (int j0 = 0; j0 < n_k; j0 += NB) {
        const int in_tile = n_k - j0 < NB ? n_k - j0 : NB;
        const int nv = keys - j0 < in_tile ? keys - j0 : in_tile; /* computed */
        const int state = nv <= 0 ? ATTN__F32_TILE_SKIP
                          : attn__f32_tile_state(job, i0, i0 + rows - 1, j0,
                                                 j0 + nv - 1);
        const int hidden = state == ATTN__F32_TILE_SKIP ? 0 : nv; /* from here */
        for (int r = 0; r < rows; r++) /* keys no row of the block sees */
            for (int jj = hidden; jj < in_tile; jj++)
                w[(size_t)r * (size_t)n_k + (size_t)(j0 + jj)] = -INFINITY;
        if (state == ATTN__F32_TILE_SKIP) continue;
        const int nb = F32_NAME(round_up)(nv);
        float row_max[MR];
        if (!F32_NAME(tile_scores)(s, row_max, scratch->qt,
                                   scratch->kt + (size_t)(j0 / NB) * (size_t)d_k * NB,
                                   d_k, nb))
            return ATTN_ERR_OVERFLOW_VALUE;
        for (int r = 0; r < rows; r++) {
            float *row = s + (size_t)r * NB;
            const float tile_max = F32_NAME(prepare_row)(row, job, state, i0 + r,
                                                         j0, nv, nb, row_max[r]);
            if (tile_max > m[r]) m[r] = tile_max;
            float *w_row = w + (size_t)r * (size_t)n_k + (size_t)j0;
            for (int jj = 0; jj < nv; jj++) w_row[jj] = row[jj];
        }
    }

    for (int r = 0; r < rows; r++) {
        float *w_row = w + (size_t)r * (size_t)n_k;
        if (m[r] == -INFINITY) { /* a fully masked row: all 0 */
            for (int j = 0; j < n_k; j++) w_row[j] = 0.0f;
            continue;
        }
        const int whole = n_k / VW * VW;
        float sum = F32_NAME(exp_row)(w_row, whole, m[r]);
        for (int j = whole; j < n_k; j++) { /* the tail, one at a time */
            float tail[VW];
            for (int t = 0; t < VW; t++) tail[t] = -INFINITY;
            tail[0] = w_row[j] - m[r];
            V_STORE(tail, V_EXP(V_LOAD(tail)));
            w_row[j] = tail[0];
            sum += tail[0];
        }
        const float inv = 1.0f / sum;
        for (int j = 0; j < n_k; j++) w_row[j] *= inv;
        if (job->dropout > 0.0)
            F32_NAME(dropout_row)(w_row, job, i0 + r, 0, n_k);
    }
    if (job->output == NULL) return ATTN_OK;

    for (size_t a = 0; a < (size_t)MR * (size_t)d_v; a++) acc[a] = 0.0f;
    for (int j0 = 0; j0 < keys; j0 += NB) {
        const int nv = keys - j0 < NB ? keys - j0 : NB;
        if (attn__f32_tile_state(job, i0, i0 + rows - 1, j0, j0 + nv - 1) ==
            ATTN__F32_TILE_SKIP)
            continue;
        for (int jj = 0; jj < nv; jj++) /* P, transposed; padding rows 0 */
            for (int r = 0; r < MR; r++)
                pt[(size_t)jj * MR + (size_t)r] =
                    r < rows ? w[(size_t)r * (size_t)n_k + (size_t)(j0 + jj)]
                             : 0.0f;
        F32_NAME(tile_pv)(acc, d_v, pt, job->v + (size_t)j0 * (size_t)d_v, nv);
    }
    for (int r = 0; r < rows; r++) {
        float *out = job->output + (size_t)(i0 + r) * (size_t)d_v;
        for (int c = 0; c < d_v; c++)
            out[c] = acc[(size_t)r * (size_t)d_v + (size_t)c];
        if (!attn__all_finite_f32(out, (size_t)d_v))
            return ATTN_ERR_OVERFLOW_VALUE;
    }
    return ATTN_OK;
}

int F32_NAME(item)(const attn__f32_job *job)
{
    attn__f32_scratch scratch;
    attn__f32_scratch_init(&scratch, job);
    F32_NAME(pack_k)(scratch.kt, job->k, job->n_k, job->d_k);
    const int step = job->weights != NULL ? MR : MR * F32_GROUPS;
    for (int i0 = 0; i0 < job->n_q; i0 += step) {
        const int status = job->weights != NULL
            ? F32_NAME(block_weights)(job, i0, &scratch)
            : F32_NAME(blocks_online)(job, i0, &scratch);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

#undef F32_ROWS
#undef F32_EXP2
#undef F32_GROUPS
#undef F32_TRANSPOSE_ROWS
#undef MR
#undef NB
/* clang-format on */
