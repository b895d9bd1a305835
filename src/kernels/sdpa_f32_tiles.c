/* sdpa_f32_tiles.c: what every float32 kernel (sdpa_f32.c,
 * sdpa_f32_avx2.c, sdpa_f32_avx512.c, each from sdpa_f32_body.h) shares:
 * the work array's layout, and the mask's view of a row and of a tile.
 * Below the kernels and the dispatch that picks one, so that neither calls
 * the other back. */
#include "attention.h"
#include "kernels/kernels.h"

size_t attn__f32_packed_k_size(int n_k, int d_k)
{
    if (n_k <= 0 || d_k <= 0) return 0;
    const size_t tiles = ((size_t)n_k + ATTN__F32_NB - 1) / ATTN__F32_NB;
    size_t cells;
    if (attn__mul_size(&cells, tiles * ATTN__F32_NB, (size_t)d_k) != ATTN_OK)
        return 0;
    return cells;
}

/* kt, then s [TILE], acc [ROWS, d_v], qt [ROWS, d_k], pt [TILE]. */
size_t attn_sdpa_f32_work_size(int n_k, int d_k, int d_v)
{
    const size_t packed = attn__f32_packed_k_size(n_k, d_k);
    size_t rows, total;
    if (packed == 0 || d_v <= 0 ||
        attn__add_size(&rows, (size_t)d_v, (size_t)d_k) != ATTN_OK ||
        attn__mul_size(&rows, rows, ATTN__F32_ROWS) != ATTN_OK ||
        attn__add_size(&total, packed, rows) != ATTN_OK ||
        attn__add_size(&total, total, 2 * (size_t)ATTN__F32_TILE) != ATTN_OK)
        return 0;
    return total;
}

void attn__f32_scratch_init(attn__f32_scratch *scratch,
                            const attn__f32_job *job)
{
    scratch->kt = job->work;
    scratch->s = scratch->kt + attn__f32_packed_k_size(job->n_k, job->d_k);
    scratch->acc = scratch->s + ATTN__F32_TILE;
    scratch->qt = scratch->acc + (size_t)ATTN__F32_ROWS * (size_t)job->d_v;
    scratch->pt = scratch->qt + (size_t)ATTN__F32_ROWS * (size_t)job->d_k;
}

int attn__f32_row_range(const attn__f32_job *job, int i, int *lo, int *hi)
{
    const attn_mask *mask = job->mask;
    const unsigned kinds = mask != NULL ? mask->kinds : 0u;
    if (kinds & (ATTN_MASK_STRIDED | ATTN_MASK_CUSTOM)) return 0;
    int first = 0, last = job->n_k - 1;
    if ((kinds & ATTN_MASK_CAUSAL) && i < last) last = i;
    if ((kinds & ATTN_MASK_KEY_PADDING) &&
        mask->key_length[job->mask_b] - 1 < last)
        last = mask->key_length[job->mask_b] - 1;
    if (kinds & ATTN_MASK_LOCAL) {
        /* i ± window in int64: window may be as large as INT_MAX. */
        const int64_t from = (int64_t)i - mask->window;
        const int64_t to = (int64_t)i + mask->window;
        if (from > first) first = (int)from;
        if (to < last) last = (int)to;
    }
    *lo = first;
    *hi = last;
    return 1;
}

int attn__f32_last_key(const attn__f32_job *job, int i)
{
    int lo, hi;
    return attn__f32_row_range(job, i, &lo, &hi) ? hi : job->n_k - 1;
}

int attn__f32_tile_state(const attn__f32_job *job, int i0, int i1, int j0,
                         int j1)
{
    const attn_mask *mask = job->mask;
    if (mask == NULL) return ATTN__F32_TILE_FULL;
    const unsigned kinds = mask->kinds;
    int full = 1;
    /* Indices are non-negative ints: the differences cannot overflow. */
    if (kinds & ATTN_MASK_CAUSAL) {
        if (j0 > i1) return ATTN__F32_TILE_SKIP;
        if (j1 > i0) full = 0;
    }
    if (kinds & ATTN_MASK_KEY_PADDING) {
        const int length = mask->key_length[job->mask_b];
        if (j0 >= length) return ATTN__F32_TILE_SKIP;
        if (j1 >= length) full = 0;
    }
    if (kinds & ATTN_MASK_LOCAL) {
        const int w = mask->window;
        if (j0 - i1 > w || i0 - j1 > w) return ATTN__F32_TILE_SKIP;
        if (j1 - i0 > w || i1 - j0 > w) full = 0;
    }
    if (kinds & ATTN_MASK_STRIDED) {
        if (j0 > i1) return ATTN__F32_TILE_SKIP;
        if (j1 > i0 || i1 - j0 >= mask->stride) full = 0;
    }
    if (kinds & ATTN_MASK_CUSTOM) full = 0;
    return full ? ATTN__F32_TILE_FULL : ATTN__F32_TILE_PARTIAL;
}
