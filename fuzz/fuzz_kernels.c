/*
 * fuzz_kernels.c: libFuzzer target for the public C entry points with
 * fuzzer-chosen sizes, flags and values. The bytes are read as a little
 * program: which function, its sizes (1..6, or a zero or negative one that
 * must be refused before any buffer is touched), its options (scale kind,
 * mask kinds with window, stride, key lengths and a custom mask, dropout
 * and seed, Luong method, causal) and then the values, as raw doubles (so
 * NaN, infinities and huge numbers occur) or as small integers.
 *
 * Buffers are allocated at exactly the size each function documents, so
 * AddressSanitizer reports any read or write outside them. Checked beyond
 * that: every status is one of attention.h's codes; a successful call
 * leaves finite outputs and weight rows that sum to 1 or are all 0. The
 * problem API (attn_problem_*) is driven the same way, with ranks,
 * dimensions and field types that JSON cannot express.
 */
#include "attention.h"
#include "fuzz_reader.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SIZE = 6 };

/* A size in 1..MAX_SIZE, or (rarely) 0 or -1. */
static int take_size(reader *r)
{
    const unsigned byte = take_byte(r);
    if (byte == 0xFF) return -1;
    if (byte == 0xFE) return 0;
    return 1 + (int)(byte % MAX_SIZE);
}

static double take_double(reader *r, int raw)
{
    if (raw) {
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits |= (uint64_t)take_byte(r) << (8 * i);
        double value;
        memcpy(&value, &bits, sizeof value);
        return value;
    }
    return ((double)take_byte(r) - 128.0) / 16.0;
}

/* count doubles (count >= 1 even for refused sizes, so the pointer is
 * valid); the caller frees. */
static double *take_doubles(reader *r, long count, int raw)
{
    const size_t n = count > 0 ? (size_t)count : 1;
    double *values = malloc(n * sizeof *values);
    if (values == NULL) abort();
    for (size_t i = 0; i < n; i++) values[i] = take_double(r, raw);
    return values;
}

static double *zeros(long count)
{
    const size_t n = count > 0 ? (size_t)count : 1;
    double *values = calloc(n, sizeof *values);
    if (values == NULL) abort();
    return values;
}

static long product(int a, int b, int c)
{
    return (a > 0 && b > 0 && c > 0) ? (long)a * b * c : 1;
}

static void check_finite(const double *x, long count)
{
    for (long i = 0; i < count; i++) check(isfinite(x[i]));
}

/* Rows of weights sum to 1 (within rounding) or are all 0; dropout rescales
 * the kept ones, so only their sign is checked then. */
static void check_rows(const double *w, long rows, int cols, int dropout)
{
    for (long i = 0; i < rows; i++) {
        double sum = 0;
        for (int j = 0; j < cols; j++) {
            check(w[i * cols + j] >= 0);
            sum += w[i * cols + j];
        }
        if (!dropout) check(sum == 0 || fabs(sum - 1) < 1e-9);
    }
}

typedef struct mask_parts {
    int *key_length;
    unsigned char *allowed;
} mask_parts;

static void take_options(reader *r, attn_options *opts, mask_parts *parts,
                         int batch, int n_q, int n_k)
{
    attn_options_init(opts);
    const unsigned flags = take_byte(r);
    opts->scale_kind = (int)(flags % 4); /* 3 is not a kind: refused */
    if (opts->scale_kind == ATTN_SCALE_FACTOR)
        opts->scale_factor = take_double(r, flags & 0x80);
    opts->mask.kinds = take_byte(r) & 0x3F; /* 0x20 is not a kind */
    opts->mask.window = (int)take_byte(r) - 2;
    opts->mask.stride = (int)take_byte(r) % 5 - 1;
    const int kl_count = batch > 0 ? batch : 1;
    parts->key_length = malloc((size_t)kl_count * sizeof(int));
    if (parts->key_length == NULL) abort();
    for (int b = 0; b < kl_count; b++)
        parts->key_length[b] = (int)take_byte(r) % (MAX_SIZE + 2) - 1;
    const long cells = n_q > 0 && n_k > 0 ? (long)n_q * n_k : 1;
    parts->allowed = malloc((size_t)cells);
    if (parts->allowed == NULL) abort();
    for (long c = 0; c < cells; c++) parts->allowed[c] = take_byte(r) & 1;
    opts->mask.key_length = (flags & 0x10) ? NULL : parts->key_length;
    opts->mask.allowed = (flags & 0x20) ? NULL : parts->allowed;
    if (flags & 0x40) {
        const unsigned d = take_byte(r);
        opts->dropout = d == 0xFF ? 1.0 : (double)d / 256.0;
        opts->seed = (uint64_t)take_byte(r) * 0x9E3779B97F4A7C15u;
    }
}

static void fuzz_sdpa(reader *r, int from_scores)
{
    const int batch = take_size(r), n_q = take_size(r), n_k = take_size(r);
    const int d_k = take_size(r), d_v = take_size(r);
    const int raw = take_byte(r) & 1;
    attn_options opts;
    mask_parts parts;
    take_options(r, &opts, &parts, batch, n_q, n_k);
    const long grid = product(batch, n_q, n_k);
    double *q = take_doubles(r, product(batch, n_q, d_k), raw);
    double *k = take_doubles(r, product(batch, n_k, d_k), raw);
    double *v = take_doubles(r, product(batch, n_k, d_v), raw);
    double *scores = zeros(grid), *scaled = zeros(grid);
    double *weights = zeros(grid), *output = zeros(product(batch, n_q, d_v));
    double *work = zeros(n_k > 0 ? (long)attn_sdpa_work_size(n_k) : 1);
    int status;
    if (from_scores) {
        double *given = take_doubles(r, grid, raw);
        status = attn_sdpa_from_scores(scaled, weights, output, given, v, batch,
                                       n_q, n_k, d_k, d_v, &opts, work);
        free(given);
    } else {
        status = attn_sdpa(scores, scaled, weights, output, q, k, v, batch, n_q,
                           n_k, d_k, d_v, &opts, work);
    }
    check_status(status);
    /* From scores, d_k only matters for the default scale. */
    if (batch <= 0 || n_q <= 0 || n_k <= 0 || d_v <= 0 ||
        (d_k <= 0 &&
         (!from_scores || opts.scale_kind == ATTN_SCALE_INV_SQRT_DK)))
        check(status != ATTN_OK);
    if (status == ATTN_OK) {
        check_finite(output, product(batch, n_q, d_v));
        check_rows(weights, (long)batch * n_q, n_k, opts.dropout > 0);
    }
    free(q);
    free(k);
    free(v);
    free(scores);
    free(scaled);
    free(weights);
    free(output);
    free(work);
    free(parts.key_length);
    free(parts.allowed);
}

static void fuzz_softmax(reader *r)
{
    const int rows = take_size(r), cols = take_size(r);
    const int raw = take_byte(r) & 1;
    const long count = product(rows, cols, 1);
    double *in = take_doubles(r, count, raw);
    /* -INFINITY marks masked entries: put some in. */
    for (long i = 0; i < count; i++)
        if (take_byte(r) % 4 == 0) in[i] = -INFINITY;
    double *out = zeros(count);
    const int status = attn_softmax_rows(out, in, rows, cols);
    check_status(status);
    if (status == ATTN_OK) check_rows(out, rows, cols, 0);
    /* In place as well. */
    check_status(attn_softmax_rows(in, in, rows, cols));
    free(in);
    free(out);
}

static void fuzz_weighted_sum(reader *r)
{
    const int n_q = take_size(r), n_k = take_size(r), d_v = take_size(r);
    const int raw = take_byte(r) & 1;
    double *w = take_doubles(r, product(n_q, n_k, 1), raw);
    double *v = take_doubles(r, product(n_k, d_v, 1), raw);
    double *out = zeros(product(n_q, d_v, 1));
    const int status = attn_weighted_sum(out, w, v, n_q, n_k, d_v);
    check_status(status);
    if (status == ATTN_OK) check_finite(out, product(n_q, d_v, 1));
    free(w);
    free(v);
    free(out);
}

static void fuzz_multihead(reader *r)
{
    attn_mha_dims d;
    d.batch = take_size(r);
    d.n_q = take_size(r);
    const int cross = take_byte(r) & 1;
    d.n_kv = cross ? take_size(r) : d.n_q;
    d.d_q_in = take_size(r);
    d.d_kv_in = cross ? take_size(r) : d.d_q_in;
    d.num_heads = take_size(r);
    d.d_model = d.num_heads > 0 && (take_byte(r) & 3)
                    ? d.num_heads * (1 + (int)take_byte(r) % 3)
                    : take_size(r);
    d.d_out = take_size(r);
    const int raw = take_byte(r) & 1;
    attn_options opts;
    mask_parts parts;
    take_options(r, &opts, &parts, d.batch, d.n_q, d.n_kv);
    double *x_q = take_doubles(r, product(d.batch, d.n_q, d.d_q_in), raw);
    double *x_kv = cross ? take_doubles(r, product(d.batch, d.n_kv, d.d_kv_in),
                                        raw)
                         : NULL;
    attn_mha_params p;
    double *wq = take_doubles(r, product(d.d_q_in, d.d_model, 1), raw);
    double *wk = take_doubles(r, product(d.d_kv_in, d.d_model, 1), raw);
    double *wv = take_doubles(r, product(d.d_kv_in, d.d_model, 1), raw);
    double *wo = take_doubles(r, product(d.d_model, d.d_out, 1), raw);
    double *bq = take_doubles(r, product(d.d_model, 1, 1), raw);
    const int biases = take_byte(r) & 1;
    p.wq = wq;
    p.wk = wk;
    p.wv = wv;
    p.wo = wo;
    p.bq = biases ? bq : NULL;
    p.bk = NULL;
    p.bv = biases ? bq : NULL;
    p.bo = NULL;
    const int heads_ok = d.num_heads > 0 && d.d_model > 0;
    const long grid = heads_ok ? (long)d.batch * d.num_heads * d.n_q * d.n_kv
                               : 1;
    attn_mha_outputs o;
    double *q = zeros(product(d.batch, d.n_q, d.d_model));
    double *k = zeros(product(d.batch, d.n_kv, d.d_model));
    double *v = zeros(product(d.batch, d.n_kv, d.d_model));
    double *scores = zeros(grid > 0 ? grid : 1);
    double *scaled = zeros(grid > 0 ? grid : 1);
    double *weights = zeros(grid > 0 ? grid : 1);
    double *heads = zeros(product(d.batch, d.n_q, d.d_model));
    double *concat = zeros(product(d.batch, d.n_q, d.d_model));
    double *output = zeros(product(d.batch, d.n_q, d.d_out));
    o.q = q;
    o.k = k;
    o.v = v;
    o.scores = scores;
    o.scaled = scaled;
    o.weights = weights;
    o.head_outputs = heads;
    o.concat = concat;
    o.output = output;
    const size_t work_size = attn_multihead_work_size(&d);
    double *work = zeros(work_size > 0 ? (long)work_size : 1);
    const int status = attn_multihead(&o, x_q, x_kv, &p, &d, &opts, work);
    check_status(status);
    if (status == ATTN_OK)
        check_finite(output, product(d.batch, d.n_q, d.d_out));
    free(x_q);
    free(x_kv);
    free(wq);
    free(wk);
    free(wv);
    free(wo);
    free(bq);
    free(q);
    free(k);
    free(v);
    free(scores);
    free(scaled);
    free(weights);
    free(heads);
    free(concat);
    free(output);
    free(work);
    free(parts.key_length);
    free(parts.allowed);
}

static void fuzz_additive_luong(reader *r, int luong)
{
    const int n_q = take_size(r), n_k = take_size(r), d_s = take_size(r);
    const int d_h = luong && (take_byte(r) & 1) ? d_s : take_size(r);
    const int d_a = take_size(r);
    const int method = luong ? (int)take_byte(r) % 4 : 0; /* 3: refused */
    const int raw = take_byte(r) & 1;
    double *query = take_doubles(r, product(n_q, d_s, 1), raw);
    double *keys = take_doubles(r, product(n_k, d_h, 1), raw);
    const long w_count = !luong                         ? product(d_s, d_a, 1)
                         : method == ATTN_LUONG_GENERAL ? product(d_h, d_s, 1)
                         : method == ATTN_LUONG_CONCAT && d_s > 0 && d_h > 0
                             ? product(d_s + d_h, d_a, 1)
                             : 1;
    double *w1 = take_doubles(r, w_count, raw);
    double *w2 = take_doubles(r, product(d_h, d_a, 1), raw);
    double *b = take_doubles(r, product(d_a, 1, 1), raw);
    double *v = take_doubles(r, product(d_a, 1, 1), raw);
    const int with_bias = take_byte(r) & 1;
    double *energy = zeros(product(n_q, n_k, d_a));
    double *scores = zeros(product(n_q, n_k, 1));
    double *weights = zeros(product(n_q, n_k, 1));
    double *context = zeros(product(n_q, d_h, 1));
    int status;
    if (luong) {
        const size_t work_size = attn_luong_work_size(method, n_k, d_s, d_a);
        double *work = zeros(work_size > 0 ? (long)work_size : 1);
        status = attn_luong(energy, scores, weights, context, query, keys,
                            method == ATTN_LUONG_DOT ? NULL : w1,
                            with_bias ? b : NULL, v, method, n_q, n_k, d_s, d_h,
                            d_a, work);
        free(work);
    } else {
        const size_t work_size = attn_additive_work_size(n_k, d_s, d_a);
        double *work = zeros(work_size > 0 ? (long)work_size : 1);
        status = attn_additive(energy, scores, weights, context, query, keys,
                               w1, w2, with_bias ? b : NULL, v, n_q, n_k, d_s,
                               d_h, d_a, work);
        free(work);
    }
    check_status(status);
    if (status == ATTN_OK) {
        check_rows(weights, n_q, n_k, 0);
        check_finite(context, product(n_q, d_h, 1));
    }
    free(query);
    free(keys);
    free(w1);
    free(w2);
    free(b);
    free(v);
    free(energy);
    free(scores);
    free(weights);
    free(context);
}

static void fuzz_linear(reader *r)
{
    const int batch = take_size(r), n_q = take_size(r), n_k = take_size(r);
    const int d_k = take_size(r), d_v = take_size(r);
    const int causal = (int)take_byte(r) % 3; /* 2: refused */
    const int raw = take_byte(r) & 1;
    double *q = take_doubles(r, product(batch, n_q, d_k), raw);
    double *k = take_doubles(r, product(batch, n_k, d_k), raw);
    double *v = take_doubles(r, product(batch, n_k, d_v), raw);
    double *out = zeros(product(batch, n_q, d_v));
    const size_t work_size = d_k > 0 && d_v > 0
                                 ? attn_linear_work_size(d_k, d_v)
                                 : 1;
    double *work = zeros(work_size > 0 ? (long)work_size : 1);
    const int status = attn_linear(out, q, k, v, batch, n_q, n_k, d_k, d_v,
                                   causal, work);
    check_status(status);
    if (status == ATTN_OK) check_finite(out, product(batch, n_q, d_v));
    free(q);
    free(k);
    free(v);
    free(out);
    free(work);
}

static void fuzz_mask(reader *r)
{
    const int batch = take_size(r), n_q = take_size(r), n_k = take_size(r);
    attn_options opts;
    mask_parts parts;
    take_options(r, &opts, &parts, batch, n_q, n_k);
    const int status = attn_mask_check(&opts.mask, batch, n_q, n_k);
    check_status(status);
    if (status == ATTN_OK)
        for (int b = 0; b < batch; b++)
            for (int i = 0; i < n_q; i++)
                for (int j = 0; j < n_k; j++) {
                    const int allows = attn_mask_allows(&opts.mask, n_k, b, i,
                                                        j);
                    check(allows == 0 || allows == 1);
                }
    double scale;
    check_status(attn_scale_value(&scale, &opts, n_k));
    check(attn_dropout_keeps(opts.seed, opts.dropout, batch, n_q, n_k) <= 1);
    free(parts.key_length);
    free(parts.allowed);
}

/* The problem API driven directly: a kind (or an unknown one), then up to
 * eight setter calls with fuzzer-chosen fields (known to some kind or not),
 * ranks 0..4, dimensions including 0 and -1, numbers including NaN, then a
 * run under a small byte limit and every format into a short buffer. */
static void fuzz_problem_api(reader *r)
{
    static const char *const kinds[] = {
        "scaledDotProduct", "multiHead", "additive",    "luong",
        "linear",           "softmax",   "weightedSum", "noSuchKind"};
    static const char *const fields[] = {
        "q",       "k",         "v",        "scores",      "dk",
        "mask",    "keyLength", "window",   "stride",      "scale",
        "dropout", "seed",      "tokens",   "queryTokens", "keyTokens",
        "x",       "xkv",       "numHeads", "wq",          "wk",
        "wv",      "wo",        "bq",       "bo",          "query",
        "keys",    "ws",        "wh",       "b",           "w",
        "method",  "causal",    "weights",  "nope"};
    static const char *const strings[] = {"causal", "none", "dot", "general",
                                          "concat", "",     "a",   "sideways"};
    const unsigned kind = take_byte(r) % (sizeof kinds / sizeof kinds[0]);
    attn_problem *problem = NULL;
    const int created = attn_problem_create(&problem, kinds[kind], NULL);
    check_status(created);
    if (created != ATTN_OK) {
        check(problem == NULL);
        return;
    }
    const unsigned limit = take_byte(r);
    check(attn_problem_set_max_bytes(problem, limit == 0xFF ? 64 : 16384) ==
          ATTN_OK);
    const int calls = 1 + (int)take_byte(r) % 8;
    for (int c = 0; c < calls; c++) {
        const char *field =
            fields[take_byte(r) % (sizeof fields / sizeof fields[0])];
        int status;
        switch (take_byte(r) % 5) {
        case 0: {
            const int rank = (int)take_byte(r) % 5;
            int dims[4];
            long count = 1;
            for (int d = 0; d < 4; d++) {
                dims[d] = take_size(r);
                if (d < rank && d < 3)
                    count = dims[d] > 0 && count > 0 ? count * dims[d] : 0;
            }
            const int raw = take_byte(r) % 8 == 0;
            double *values = take_doubles(r, count > 0 ? count : 1, raw);
            for (long i = 0; i < count && !raw; i++)
                if (take_byte(r) % 2 == 0) values[i] = (double)(i % 2);
            status = attn_problem_set_tensor(problem, field, rank, dims,
                                             values);
            free(values);
            break;
        }
        case 1:
            status = attn_problem_set_number(
                problem, field, take_double(r, take_byte(r) % 4 == 0));
            break;
        case 2:
            status = attn_problem_set_bool(problem, field, take_byte(r) & 1);
            break;
        case 3:
            status = attn_problem_set_string(
                problem, field,
                strings[take_byte(r) % (sizeof strings / sizeof strings[0])]);
            break;
        default: {
            const int count = (int)take_byte(r) % 8;
            const char *labels[8];
            for (int i = 0; i < count; i++)
                labels[i] = strings[take_byte(r) %
                                    (sizeof strings / sizeof strings[0])];
            status = attn_problem_set_strings(problem, field, count, labels);
            break;
        }
        }
        check_status(status);
        if (status != ATTN_OK) check(attn_problem_error(problem)[0] != '\0');
    }
    const int ran = attn_problem_run(problem);
    check_status(ran);
    if (ran == ATTN_OK) {
        char small[64];
        for (int format = ATTN_FORMAT_JSON; format <= ATTN_FORMAT_LATEX;
             format++) {
            size_t length = 0;
            const int status = attn_problem_format(problem, format, small,
                                                   sizeof small, &length);
            check_status(status);
            if (status == ATTN_OK)
                check(strlen(small) ==
                      (length < sizeof small ? length : sizeof small - 1));
        }
        int rank, dims[3];
        const double *result;
        check_status(
            attn_problem_result(problem, "weights", &rank, dims, &result));
        check_status(attn_problem_result(problem, "heads.99.weights", &rank,
                                         dims, &result));
    } else {
        check(attn_problem_error(problem)[0] != '\0');
    }
    attn_problem_destroy(problem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    switch (take_byte(&r) % 10) {
    case 9: fuzz_problem_api(&r); break;
    case 0: fuzz_sdpa(&r, 0); break;
    case 1: fuzz_sdpa(&r, 1); break;
    case 2: fuzz_softmax(&r); break;
    case 3: fuzz_weighted_sum(&r); break;
    case 4: fuzz_multihead(&r); break;
    case 5: fuzz_additive_luong(&r, 0); break;
    case 6: fuzz_additive_luong(&r, 1); break;
    case 7: fuzz_linear(&r); break;
    default: fuzz_mask(&r); break;
    }
    return 0;
}
