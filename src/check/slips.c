/* slips.c: the typical slips of a hand computation of attention, each a
 * small variant of the kernels' computation run on the engine's own
 * scores: the kernels again with other options (no scale, 1/d_k, no mask
 * before the softmax), or with their inputs rearranged (Q·K, Vᵀ, the
 * scaled scores transposed for a softmax down the columns). A slip is
 * named when what it gives is what was printed (check.c). To add one: a
 * cause in check.h, a case in vary() and its sentence below. */
#include "attention.h"
#include "check/check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One attention computation whose results a slip changes: a problem's
 * scaled dot-product attention, or one head of a multi-head problem. */
typedef struct block {
    char prefix[ATTN__KEY_CAP]; /* of result names: "" or "heads.1." */
    int batch, n_q, n_k, d_k, d_v;
    const double *scores, *scaled, *weights; /* [batch, n_q, n_k] */
    const double *q, *k; /* [batch, n_q | n_k, d_k], or NULL */
    const double *v;     /* [batch, n_k, d_v], or NULL */
    attn_options opts;
    double scale;
} block;

/* The slipped results, laid out as the engine's. */
typedef struct slipped {
    double *scores, *scaled, *weights, *output;
} slipped;

static const char *const names[ATTN__CAUSES] = {
    "misprint",        "rounding",     "no-scale",           "scale-by-dk",
    "softmax-columns", "no-transpose", "mask-after-softmax", "v-transposed"};

const char *attn__cause_name(int cause)
{
    return cause >= 0 && cause < ATTN__CAUSES ? names[cause] : "";
}

static int applies(const block *b, int cause)
{
    const size_t cells = (size_t)b->batch * (size_t)b->n_q * (size_t)b->n_k;
    switch (cause) {
    case ATTN__NO_SCALE: return fabs(b->scale - 1.0) > 1e-12;
    case ATTN__SCALE_BY_DK:
        return b->d_k > 1 && fabs(b->scale - 1.0 / sqrt(b->d_k)) < 1e-12;
    case ATTN__SOFTMAX_COLUMNS: return b->n_q > 1;
    case ATTN__NO_TRANSPOSE:
        return b->q != NULL && b->k != NULL && b->d_k == b->n_k;
    case ATTN__MASK_AFTER_SOFTMAX:
        for (size_t i = 0; i < cells; i++)
            if (isinf(b->scaled[i])) return 1;
        return 0;
    case ATTN__V_TRANSPOSED: return b->v != NULL && b->n_k == b->d_v;
    default: return 0;
    }
}

/* The slip's scores, scaled, weights and output of batch item `item`. */
static int vary(const block *b, int cause, int item, slipped *out, double *work,
                double *scratch)
{
    const size_t nn = (size_t)b->n_q * (size_t)b->n_k;
    const size_t at = (size_t)item * nn;
    const size_t out_at = (size_t)item * (size_t)b->n_q * (size_t)b->d_v;
    const double *v = b->v != NULL ? b->v + (size_t)item * (size_t)b->n_k *
                                                (size_t)b->d_v
                                   : NULL;
    double *output = b->v != NULL ? out->output + out_at : NULL;
    attn_options opts = b->opts;
    if (opts.mask.key_length != NULL) opts.mask.key_length += item;
    memcpy(out->scores + at, b->scores + at, nn * sizeof *out->scores);
    memcpy(out->scaled + at, b->scaled + at, nn * sizeof *out->scaled);
    memcpy(out->weights + at, b->weights + at, nn * sizeof *out->weights);
    switch (cause) {
    case ATTN__NO_SCALE:
    case ATTN__SCALE_BY_DK:
        opts.scale_kind = cause == ATTN__NO_SCALE ? ATTN_SCALE_NONE
                                                  : ATTN_SCALE_FACTOR;
        opts.scale_factor = 1.0 / b->d_k;
        break;
    case ATTN__NO_TRANSPOSE: {
        const double *q = b->q + (size_t)item * (size_t)b->n_q * (size_t)b->d_k;
        const double *k = b->k + (size_t)item * (size_t)b->n_k * (size_t)b->d_k;
        /* Q·K: K's rows taken as the columns a row of Q meets. */
        const int status = attn_weighted_sum(out->scores + at, q, k, b->n_q,
                                             b->d_k, b->n_k);
        if (status != ATTN_OK) return status;
        break;
    }
    case ATTN__MASK_AFTER_SOFTMAX: {
        opts.mask.kinds = 0;
        const int status = attn_sdpa_from_scores(
            out->scaled + at, out->weights + at, NULL, out->scores + at, NULL,
            1, b->n_q, b->n_k, b->d_k > 0 ? b->d_k : 1, 1, &opts, work);
        if (status != ATTN_OK) return status;
        for (size_t i = 0; i < nn; i++)
            if (isinf(b->scaled[at + i])) out->weights[at + i] = 0.0;
        return v != NULL ? attn_weighted_sum(output, out->weights + at, v,
                                             b->n_q, b->n_k, b->d_v)
                         : ATTN_OK;
    }
    case ATTN__SOFTMAX_COLUMNS: {
        /* The softmax of each column: of each row of the transpose. */
        for (int i = 0; i < b->n_q; i++)
            for (int j = 0; j < b->n_k; j++)
                scratch[(size_t)j * (size_t)b->n_q + (size_t)i] =
                    b->scaled[at + (size_t)i * (size_t)b->n_k + (size_t)j];
        const int status = attn_softmax_rows(scratch, scratch, b->n_k, b->n_q);
        if (status != ATTN_OK) return status;
        for (int i = 0; i < b->n_q; i++)
            for (int j = 0; j < b->n_k; j++)
                out->weights[at + (size_t)i * (size_t)b->n_k + (size_t)j] =
                    scratch[(size_t)j * (size_t)b->n_q + (size_t)i];
        return v != NULL ? attn_weighted_sum(output, out->weights + at, v,
                                             b->n_q, b->n_k, b->d_v)
                         : ATTN_OK;
    }
    case ATTN__V_TRANSPOSED:
        for (int j = 0; j < b->n_k; j++)
            for (int c = 0; c < b->d_v; c++)
                scratch[(size_t)j * (size_t)b->d_v + (size_t)c] =
                    v[(size_t)c * (size_t)b->d_v + (size_t)j];
        return attn_weighted_sum(output, out->weights + at, scratch, b->n_q,
                                 b->n_k, b->d_v);
    default: break;
    }
    return attn_sdpa_from_scores(out->scaled + at, out->weights + at, output,
                                 out->scores + at, v, 1, b->n_q, b->n_k,
                                 b->d_k > 0 ? b->d_k : 1,
                                 v != NULL ? b->d_v : 1, &opts, work);
}

/* Entry `at` of a slipped result named `name`, through a table's
 * transform; NaN when the slip does not give it. */
static double slipped_value(const slipped *s, const block *b,
                            const attn__printed *table, size_t cell)
{
    const size_t prefix = strlen(b->prefix);
    if (strncmp(table->base, b->prefix, prefix) != 0) return NAN;
    const char *name = table->base + prefix;
    attn__ref ref = attn__cell_ref(table, cell);
    size_t flat = 0;
    for (int d = 0; d < ref.rank; d++)
        flat = flat * (size_t)table->base_dims[d] + (size_t)ref.index[d];
    const double *data = strcmp(name, "scores") == 0    ? s->scores
                         : strcmp(name, "scaled") == 0  ? s->scaled
                         : strcmp(name, "weights") == 0 ? s->weights
                         : strcmp(name, "output") == 0 && b->v != NULL
                             ? s->output
                             : NULL;
    if (data == NULL) return NAN;
    switch (table->transform) {
    case ATTN__PERCENT: return 100.0 * data[flat];
    case ATTN__EXP: return exp(data[flat]);
    case ATTN__SUM: {
        double sum = 0.0;
        for (int j = 0; j < b->n_k; j++) sum += exp(data[flat + (size_t)j]);
        return sum;
    }
    default: return data[flat];
    }
}

static const double *result_data(const attn_problem *problem, const char *name)
{
    int rank, dims[3];
    const double *data;
    return attn_problem_result(problem, name, &rank, dims, &data) == ATTN_OK
               ? data
               : NULL;
}

/* A multi-head result's columns of head h, [batch, rows, width]. */
static void head_columns(double *out, const double *in, int batch, int rows,
                         int d_model, int width, int h)
{
    for (size_t r = 0; r < (size_t)batch * (size_t)rows; r++)
        memcpy(out + r * (size_t)width,
               in + r * (size_t)d_model + (size_t)h * (size_t)width,
               (size_t)width * sizeof *out);
}

static int slip_block(attn_check *check, const block *b, int cause,
                      double **values, int *any)
{
    if (!applies(b, cause)) return ATTN_OK;
    const size_t nn = (size_t)b->batch * (size_t)b->n_q * (size_t)b->n_k;
    const size_t no = (size_t)b->batch * (size_t)b->n_q * (size_t)b->d_v;
    const size_t square = (size_t)(b->n_k > b->n_q ? b->n_k : b->n_q);
    const size_t width = (size_t)(b->d_v > b->n_q ? b->d_v : b->n_q);
    const size_t scratch_count = square * width;
    const size_t work_count = attn_sdpa_work_size(b->n_k);
    double *memory = attn__check_alloc(
        check, (3 * nn + no + scratch_count + work_count) * sizeof *memory);
    if (memory == NULL)
        return attn__check_fail(check, ATTN_ERR_NOMEM, "check: out of memory");
    slipped s = {memory, memory + nn, memory + 2 * nn, memory + 3 * nn};
    double *scratch = s.output + no, *work = scratch + scratch_count;
    int status = ATTN_OK;
    for (int item = 0; item < b->batch && status == ATTN_OK; item++)
        status = vary(b, cause, item, &s, work, scratch);
    if (status == ATTN_OK) {
        *any = 1;
        for (int t = 0; t < check->table_count; t++)
            for (size_t i = 0; i < check->tables[t].count; i++) {
                const double x = slipped_value(&s, b, &check->tables[t], i);
                if (!isnan(x)) values[t][i] = x;
            }
    } else {
        status = attn__check_fail(check, status, "check: %s: %s",
                                  attn__cause_name(cause),
                                  attn_status_text(status));
    }
    attn__check_free(check, memory);
    return status;
}

int attn__slip_values(attn_check *check, int cause, double **values)
{
    const attn_problem *problem = check->problem;
    const attn__run_info *info = &problem->info;
    if (info->options.dropout > 0) return 0; /* its draws are per batch item */
    block b;
    memset(&b, 0, sizeof b);
    b.batch = info->batch;
    b.n_q = info->vector_query ? 1 : info->n_q;
    b.n_k = info->n_k;
    b.d_k = info->d_k;
    b.d_v = info->d_v;
    b.opts = info->options;
    b.scale = info->scale;
    int any = 0, status = ATTN_OK;
    switch (problem->kind->id) {
    case ATTN__KIND_SDPA:
        b.scores = info->from_scores ? attn__data_of(problem, "scores")
                                     : result_data(problem, "scores");
        b.scaled = result_data(problem, "scaled");
        b.weights = result_data(problem, "weights");
        b.q = info->from_scores ? NULL : attn__data_of(problem, "q");
        b.k = info->from_scores ? NULL : attn__data_of(problem, "k");
        b.v = info->has_output ? attn__data_of(problem, "v") : NULL;
        status = slip_block(check, &b, cause, values, &any);
        break;
    case ATTN__KIND_SOFTMAX:
        if (info->batch > 1) return 0;
        b.scores = attn__data_of(problem, "x");
        b.scaled = result_data(problem, "scaled");
        b.weights = result_data(problem, "weights");
        attn_options_init(&b.opts);
        b.opts.scale_kind = ATTN_SCALE_FACTOR;
        b.opts.scale_factor = info->scale;
        if (problem->allowed != NULL) {
            b.opts.mask.kinds = ATTN_MASK_CUSTOM;
            b.opts.mask.allowed = problem->allowed;
        }
        b.d_k = 0;
        status = slip_block(check, &b, cause, values, &any);
        break;
    case ATTN__KIND_MULTIHEAD: {
        const int heads = info->num_heads, d_model = info->d_model;
        const size_t rows_q = (size_t)b.batch * (size_t)b.n_q,
                     rows_k = (size_t)b.batch * (size_t)b.n_k;
        double *memory = attn__check_alloc(
            check, (rows_q * (size_t)b.d_k + rows_k * (size_t)(b.d_k + b.d_v)) *
                       sizeof *memory);
        if (memory == NULL)
            return attn__check_fail(check, ATTN_ERR_NOMEM,
                                    "check: out of memory");
        double *q = memory, *k = q + rows_q * (size_t)b.d_k,
               *v = k + rows_k * (size_t)b.d_k;
        b.q = q;
        b.k = k;
        b.v = v;
        for (int h = 0; h < heads && status == ATTN_OK; h++) {
            char name[2 * ATTN__KEY_CAP];
            snprintf(b.prefix, sizeof b.prefix, "heads.%d.", h);
            snprintf(name, sizeof name, "%sscores", b.prefix);
            b.scores = result_data(problem, name);
            snprintf(name, sizeof name, "%sscaled", b.prefix);
            b.scaled = result_data(problem, name);
            snprintf(name, sizeof name, "%sweights", b.prefix);
            b.weights = result_data(problem, name);
            head_columns(q, result_data(problem, "q"), b.batch, b.n_q, d_model,
                         b.d_k, h);
            head_columns(k, result_data(problem, "k"), b.batch, b.n_k, d_model,
                         b.d_k, h);
            head_columns(v, result_data(problem, "v"), b.batch, b.n_k, d_model,
                         b.d_v, h);
            if (b.scores != NULL && b.scaled != NULL && b.weights != NULL)
                status = slip_block(check, &b, cause, values, &any);
        }
        attn__check_free(check, memory);
        break;
    }
    default: return 0;
    }
    return status != ATTN_OK ? -status : any;
}

void attn__slip_sentence(const attn_check *check, int cause, const char *fields,
                         char *out, size_t cap)
{
    const attn__run_info *info = &check->problem->info;
    char root[ATTN__NUMBER_CAP], scale[ATTN__NUMBER_CAP];
    attn__format_rounded(root, sqrt(info->d_k));
    attn__format_rounded(scale, info->scale);
    const int inverse_root = info->d_k > 0 &&
                             fabs(info->scale - 1.0 / sqrt(info->d_k)) < 1e-12;
    const char *lead = "The numbers printed for";
    switch (cause) {
    case ATTN__NO_SCALE:
        if (inverse_root)
            snprintf(out, cap,
                     "%s %s are what the computation gives without "
                     "dividing the scores by √d_k = %s.",
                     lead, fields, root);
        else
            snprintf(out, cap,
                     "%s %s are what the computation gives without "
                     "multiplying the scores by the scale %s.",
                     lead, fields, scale);
        break;
    case ATTN__SCALE_BY_DK:
        snprintf(out, cap,
                 "%s %s are what the computation gives when the "
                 "scores are divided by d_k = %d instead of √d_k = %s.",
                 lead, fields, info->d_k, root);
        break;
    case ATTN__SOFTMAX_COLUMNS:
        snprintf(out, cap,
                 "%s %s are what the computation gives with the "
                 "softmax taken down each column instead of along each row: "
                 "each column of those weights sums to 1, where each row "
                 "should.",
                 lead, fields);
        break;
    case ATTN__NO_TRANSPOSE:
        snprintf(out, cap,
                 "%s %s are what the computation gives with Q·K "
                 "instead of Q·Kᵀ: each score meets a row of Q with a column "
                 "of K instead of a row of K.",
                 lead, fields);
        break;
    case ATTN__MASK_AFTER_SOFTMAX:
        snprintf(out, cap,
                 "%s %s are what the computation gives with the "
                 "mask applied after the softmax: the masked weights set to 0 "
                 "without renormalising, so the rows sum to less than 1.",
                 lead, fields);
        break;
    case ATTN__V_TRANSPOSED:
        snprintf(out, cap,
                 "%s %s are what the computation gives with the "
                 "weights multiplying Vᵀ instead of V: each output row mixes "
                 "the columns of V instead of its rows.",
                 lead, fields);
        break;
    default: out[0] = '\0';
    }
}
