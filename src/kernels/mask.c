/* mask.c: the mask kinds of attention.h and their combination. */
#include "attention.h"
#include "kernels/kernels.h"

#define ATTN__MASK_KNOWN_KINDS                                     \
    (ATTN_MASK_CAUSAL | ATTN_MASK_KEY_PADDING | ATTN_MASK_CUSTOM | \
     ATTN_MASK_LOCAL | ATTN_MASK_STRIDED)

int attn_mask_check(const attn_mask *mask, int batch, int n_q, int n_k)
{
    if (mask == NULL) return ATTN_ERR_NULL;
    const int sizes[] = {batch, n_q, n_k};
    int status = attn__check_sizes(sizes, 3);
    if (status != ATTN_OK) return status;
    if (mask->kinds & ~(unsigned)ATTN__MASK_KNOWN_KINDS) return ATTN_ERR_OPTION;

    if ((mask->kinds & ATTN_MASK_KEY_PADDING) && mask->key_length == NULL)
        return ATTN_ERR_NULL;
    if (mask->kinds & ATTN_MASK_CUSTOM) {
        if (mask->allowed == NULL) return ATTN_ERR_NULL;
        size_t cells; /* the custom pattern is [n_q, n_k] */
        status = attn__count3(&cells, n_q, n_k, 1);
        if (status != ATTN_OK) return status;
    }
    if (mask->kinds & ATTN_MASK_KEY_PADDING)
        for (int b = 0; b < batch; b++)
            if (mask->key_length[b] < 0 || mask->key_length[b] > n_k)
                return ATTN_ERR_RANGE;
    if ((mask->kinds & ATTN_MASK_LOCAL) && mask->window < 0)
        return ATTN_ERR_RANGE;
    if ((mask->kinds & ATTN_MASK_STRIDED) && mask->stride < 1)
        return ATTN_ERR_RANGE;
    return ATTN_OK;
}

int attn_mask_allows(const attn_mask *mask, int n_k, int b, int i, int j)
{
    const unsigned kinds = mask->kinds;
    if ((kinds & ATTN_MASK_CAUSAL) && j > i) return 0;
    if ((kinds & ATTN_MASK_KEY_PADDING) && j >= mask->key_length[b]) return 0;
    if ((kinds & ATTN_MASK_CUSTOM) &&
        !mask->allowed[(size_t)i * (size_t)n_k + (size_t)j])
        return 0;
    /* i and j are non-negative ints, so i - j cannot overflow. */
    if ((kinds & ATTN_MASK_LOCAL) &&
        (i - j > mask->window || j - i > mask->window))
        return 0;
    if (kinds & ATTN_MASK_STRIDED) {
        if (j > i) return 0;
        const int distance = i - j;
        if (distance >= mask->stride && distance % mask->stride != 0) return 0;
    }
    return 1;
}
