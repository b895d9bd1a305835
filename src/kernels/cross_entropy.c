/* cross_entropy.c: a language model's loss, the mean over rows of
 * −log softmax(logits)[target], and its gradient. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

int attn_cross_entropy(double *loss, double *grad_logits, const double *logits,
                       const int *targets, int n, int vocab)
{
    if (loss == NULL || logits == NULL || targets == NULL) return ATTN_ERR_NULL;
    const int sizes[] = {n, vocab};
    int status = attn__check_sizes(sizes, 2);
    size_t cells = 0;
    if (status == ATTN_OK) status = attn__count3(&cells, n, vocab, 1);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(logits, cells)) return ATTN_ERR_NOT_FINITE;
    for (int r = 0; r < n; r++)
        if (targets[r] < 0 || targets[r] >= vocab) return ATTN_ERR_TOKEN;
    double total = 0.0;
    for (int r = 0; r < n; r++) {
        const double *z = logits + (size_t)r * (size_t)vocab;
        double max = z[0];
        for (int t = 1; t < vocab; t++)
            if (z[t] > max) max = z[t];
        double sum = 0.0;
        for (int t = 0; t < vocab; t++) sum += exp(z[t] - max);
        /* log-sum-exp with the maximum taken out: nothing overflows, and
         * the large terms cancel before the small one is added. */
        total += (max - z[targets[r]]) + log(sum);
        if (grad_logits == NULL) continue;
        double *g = grad_logits + (size_t)r * (size_t)vocab;
        for (int t = 0; t < vocab; t++) g[t] = exp(z[t] - max) / sum / n;
        g[targets[r]] -= 1.0 / n;
    }
    *loss = total / n;
    return isfinite(*loss) ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}
