/* embedding.c: a decoder's token embedding (a row of the table per token)
 * and its unembedding (logits against the rows of a table, the lm_head or,
 * tied, the embedding itself), each with its gradient. */
#include "attention.h"
#include "kernels/kernels.h"

/* The sizes, the table finite, and every token in 0..vocab − 1. */
static int check_args(const double *table, const int *tokens, int n, int vocab,
                      int d)
{
    const int sizes[] = {n, vocab, d};
    int status = attn__check_sizes(sizes, 3);
    if (status != ATTN_OK) return status;
    const int counts[][3] = {{vocab, d, 1}, {n, d, 1}, {n, vocab, 1}};
    status = attn__check_counts(counts, 3);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(table, (size_t)vocab * (size_t)d))
        return ATTN_ERR_NOT_FINITE;
    if (tokens != NULL)
        for (int r = 0; r < n; r++)
            if (tokens[r] < 0 || tokens[r] >= vocab) return ATTN_ERR_TOKEN;
    return ATTN_OK;
}

int attn_embedding(double *output, const double *table, const int *tokens,
                   int n, int vocab, int d)
{
    if (output == NULL || table == NULL || tokens == NULL) return ATTN_ERR_NULL;
    int status = check_args(table, tokens, n, vocab, d);
    if (status != ATTN_OK) return status;
    for (int r = 0; r < n; r++)
        attn__copy(output + (size_t)r * (size_t)d,
                   table + (size_t)tokens[r] * (size_t)d, d);
    return ATTN_OK;
}

int attn_embedding_backward(double *grad_table, const double *d_output,
                            const int *tokens, int n, int vocab, int d)
{
    if (grad_table == NULL || d_output == NULL || tokens == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(NULL, tokens, n, vocab, d);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(d_output, (size_t)n * (size_t)d))
        return ATTN_ERR_NOT_FINITE;
    for (int r = 0; r < n; r++) {
        double *row = grad_table + (size_t)tokens[r] * (size_t)d;
        const double *add = d_output + (size_t)r * (size_t)d;
        for (int j = 0; j < d; j++) row[j] += add[j];
    }
    return attn__all_finite(grad_table, (size_t)vocab * (size_t)d)
               ? ATTN_OK
               : ATTN_ERR_OVERFLOW_VALUE;
}

int attn_unembedding(double *logits, const double *hidden, const double *table,
                     int n, int vocab, int d)
{
    if (logits == NULL || hidden == NULL || table == NULL) return ATTN_ERR_NULL;
    int status = check_args(table, NULL, n, vocab, d);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(hidden, (size_t)n * (size_t)d))
        return ATTN_ERR_NOT_FINITE;
    /* attn__dots, as attn_decoder_forward: the same bits as its logits. */
    for (int r = 0; r < n; r++)
        attn__dots(logits + (size_t)r * (size_t)vocab,
                   hidden + (size_t)r * (size_t)d, table, (size_t)d, vocab, d);
    return attn__all_finite(logits, (size_t)n * (size_t)vocab)
               ? ATTN_OK
               : ATTN_ERR_OVERFLOW_VALUE;
}

int attn_unembedding_backward(double *grad_hidden, double *grad_table,
                              const double *d_logits, const double *hidden,
                              const double *table, int n, int vocab, int d)
{
    if (d_logits == NULL || hidden == NULL || table == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(table, NULL, n, vocab, d);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(hidden, (size_t)n * (size_t)d) ||
        !attn__all_finite(d_logits, (size_t)n * (size_t)vocab))
        return ATTN_ERR_NOT_FINITE;
    if (grad_hidden != NULL) {
        attn__zero(grad_hidden, (size_t)n * (size_t)d);
        for (int r = 0; r < n; r++) {
            double *out = grad_hidden + (size_t)r * (size_t)d;
            const double *dl = d_logits + (size_t)r * (size_t)vocab;
            for (int t = 0; t < vocab; t++) {
                const double g = dl[t];
                const double *row = table + (size_t)t * (size_t)d;
                for (int j = 0; j < d; j++) out[j] += g * row[j];
            }
        }
    }
    if (grad_table != NULL)
        attn__matmul_tn_add(grad_table, d_logits, hidden, n, vocab, d);
    const int finite = attn__all_finite(grad_hidden, (size_t)n * (size_t)d) &&
                       attn__all_finite(grad_table, (size_t)vocab * (size_t)d);
    return finite ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}
