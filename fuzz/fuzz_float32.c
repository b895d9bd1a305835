/*
 * fuzz_float32.c: libFuzzer target holding the float32 kernels
 * (attn_sdpa_f32, attn_linear_f32) to their float64 references (attn_sdpa,
 * attn_linear) on the same inputs. The bytes choose the function, sizes
 * (1..16, or rarely 0 or -1, which both must refuse), options (scale kind,
 * including one that is not a kind; mask kinds with window, stride, key
 * lengths and a custom mask; dropout and seed; causal; weights wanted or
 * not, which switches attn_sdpa_f32 between its two-pass and online
 * softmax) and values in [-1, 1] in steps of 1/128, exact in float, so both
 * precisions start from the same numbers and |Q·K| stays small enough for
 * float32 to keep 1e-4.
 *
 * Findings: statuses that differ; a status outside attention.h's codes; a
 * successful float32 result (weights, output) that differs from float64 by
 * more than 1e-4 relative to max(1, |float64 value|). Buffers are exactly
 * the documented sizes, work from the *_work_size functions, so
 * AddressSanitizer reports any access outside them.
 */
#include "attention.h"
#include "fuzz_reader.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

enum { MAX_SIZE = 16, MAX_BATCH = 3 };
#define TOLERANCE 1e-4

/* A size in 1..limit, or (rarely) 0 or -1. */
static int take_size(reader *r, int limit)
{
    const unsigned byte = take_byte(r);
    if (byte == 0xFF) return -1;
    if (byte == 0xFE) return 0;
    return 1 + (int)(byte % (unsigned)limit);
}

static size_t count_of(int a, int b, int c)
{
    return (a > 0 && b > 0 && c > 0) ? (size_t)a * b * c : 1;
}

/* count values (at least one, so the pointers are valid even for refused
 * sizes), as float and as the same numbers in double. */
static void take_values(reader *r, size_t count, float **f, double **d)
{
    *f = malloc(count * sizeof **f);
    *d = malloc(count * sizeof **d);
    check(*f != NULL && *d != NULL);
    for (size_t i = 0; i < count; i++) {
        (*f)[i] = ((float)take_byte(r) - 128.0f) / 128.0f;
        (*d)[i] = (double)(*f)[i];
    }
}

static void *allocate(size_t count, size_t size)
{
    void *block = calloc(count > 0 ? count : 1, size);
    check(block != NULL);
    return block;
}

static void check_close(const float *f, const double *d, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        check(isfinite(f[i]));
        check(fabs((double)f[i] - d[i]) <= TOLERANCE * fmax(1.0, fabs(d[i])));
    }
}

typedef struct inputs {
    int batch, n_q, n_k, d_k, d_v;
    float *qf, *kf, *vf;
    double *qd, *kd, *vd;
} inputs;

static void take_inputs(reader *r, inputs *in)
{
    in->batch = take_size(r, MAX_BATCH);
    in->n_q = take_size(r, MAX_SIZE);
    in->n_k = take_size(r, MAX_SIZE);
    in->d_k = take_size(r, MAX_SIZE);
    in->d_v = take_size(r, MAX_SIZE);
    take_values(r, count_of(in->batch, in->n_q, in->d_k), &in->qf, &in->qd);
    take_values(r, count_of(in->batch, in->n_k, in->d_k), &in->kf, &in->kd);
    take_values(r, count_of(in->batch, in->n_k, in->d_v), &in->vf, &in->vd);
}

static void free_inputs(inputs *in)
{
    free(in->qf);
    free(in->kf);
    free(in->vf);
    free(in->qd);
    free(in->kd);
    free(in->vd);
}

static void fuzz_sdpa(reader *r)
{
    inputs in;
    take_inputs(r, &in);
    attn_options opts;
    attn_options_init(&opts);
    const unsigned flags = take_byte(r);
    opts.scale_kind = (int)(flags % 4); /* 3 is not a kind: both refuse */
    if (opts.scale_kind == ATTN_SCALE_FACTOR)
        opts.scale_factor = ((double)take_byte(r) - 128.0) / 64.0;
    opts.mask.kinds = take_byte(r) & 0x3F; /* 0x20 is not a kind */
    opts.mask.window = (int)take_byte(r) % 20 - 2;
    opts.mask.stride = (int)take_byte(r) % 6 - 1;
    int key_length[MAX_BATCH];
    for (int b = 0; b < MAX_BATCH; b++)
        key_length[b] = (int)take_byte(r) % (MAX_SIZE + 2) - 1;
    const size_t cells = count_of(1, in.n_q, in.n_k);
    unsigned char *allowed = allocate(cells, 1);
    for (size_t c = 0; c < cells; c++) allowed[c] = take_byte(r) & 1;
    opts.mask.key_length = (flags & 0x10) ? NULL : key_length;
    opts.mask.allowed = (flags & 0x20) ? NULL : allowed;
    if (flags & 0x40) {
        const unsigned p = take_byte(r);
        opts.dropout = p == 0xFF ? 1.0 : (double)p / 256.0;
        opts.seed = (uint64_t)take_byte(r) * 0x9E3779B97F4A7C15u;
    }
    const int want_weights = (flags & 0x80) != 0;

    const size_t n_weights = count_of(in.batch, in.n_q, in.n_k);
    const size_t n_output = count_of(in.batch, in.n_q, in.d_v);
    double *weights_d = allocate(n_weights, sizeof(double));
    double *output_d = allocate(n_output, sizeof(double));
    double *work_d = allocate(attn_sdpa_work_size(in.n_k), sizeof(double));
    float *weights_f = want_weights ? allocate(n_weights, sizeof(float)) : NULL;
    float *output_f = allocate(n_output, sizeof(float));
    float *work_f = allocate(attn_sdpa_f32_work_size(in.n_k, in.d_k, in.d_v),
                             sizeof(float));

    const int status_d = attn_sdpa(NULL, NULL, weights_d, output_d, in.qd,
                                   in.kd, in.vd, in.batch, in.n_q, in.n_k,
                                   in.d_k, in.d_v, &opts, work_d);
    const int status_f = attn_sdpa_f32(weights_f, output_f, in.qf, in.kf, in.vf,
                                       in.batch, in.n_q, in.n_k, in.d_k, in.d_v,
                                       &opts, work_f);
    check_status(status_d);
    check_status(status_f);
    check(status_f == status_d);
    if (status_f == ATTN_OK) {
        if (want_weights) check_close(weights_f, weights_d, n_weights);
        check_close(output_f, output_d, n_output);
    }
    free(weights_d);
    free(output_d);
    free(work_d);
    free(weights_f);
    free(output_f);
    free(work_f);
    free(allowed);
    free_inputs(&in);
}

static void fuzz_linear(reader *r)
{
    inputs in;
    take_inputs(r, &in);
    const unsigned causal_byte = take_byte(r);
    /* 2 is neither 0 nor 1: both refuse it */
    const int causal = causal_byte == 0xFF ? 2 : (int)(causal_byte & 1);
    const size_t n_output = count_of(in.batch, in.n_q, in.d_v);
    double *output_d = allocate(n_output, sizeof(double));
    double *work_d = allocate(attn_linear_work_size(in.d_k, in.d_v),
                              sizeof(double));
    float *output_f = allocate(n_output, sizeof(float));
    float *work_f = allocate(attn_linear_f32_work_size(in.d_k, in.d_v),
                             sizeof(float));
    const int status_d = attn_linear(output_d, in.qd, in.kd, in.vd, in.batch,
                                     in.n_q, in.n_k, in.d_k, in.d_v, causal,
                                     work_d);
    const int status_f = attn_linear_f32(output_f, in.qf, in.kf, in.vf,
                                         in.batch, in.n_q, in.n_k, in.d_k,
                                         in.d_v, causal, work_f);
    check_status(status_d);
    check_status(status_f);
    check(status_f == status_d);
    if (status_f == ATTN_OK) check_close(output_f, output_d, n_output);
    free(output_d);
    free(work_d);
    free(output_f);
    free(work_f);
    free_inputs(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    if (take_byte(&r) % 4 == 3)
        fuzz_linear(&r);
    else
        fuzz_sdpa(&r);
    return 0;
}
