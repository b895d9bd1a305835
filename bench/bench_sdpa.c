/*
 * bench_sdpa: times this engine natively, one implementation per process:
 *
 *   bench_sdpa f64    attn_sdpa (double)
 *   bench_sdpa f32    attn_sdpa_f32 (the kernel attn_f32_kernel_name names)
 *   bench_sdpa peak   the machine's float32 FMA peak on one core: 12
 *                     independent chains of vfmadd on 16 floats with
 *                     AVX-512F, else 10 on 8 floats with AVX2 + FMA
 *
 * For each case (T = 256, 1024, 2048, and 1024 causal; d_k = d_v = 64,
 * batch 1, output only) it prints one JSON line with SAMPLES samples of
 * CPU seconds per call, each sample a mean over batches of doubling size
 * until SAMPLE_SECONDS have passed; bench/bench.mjs takes the median.
 * Inputs are uniform in [-1, 1) from the generator bench/impl.mjs uses.
 */
#define _POSIX_C_SOURCE 199309L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attention.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_FMA_PEAK 1
#endif

#define D 64
#define SAMPLES 7
#define SAMPLE_SECONDS 0.05

typedef struct bench_case {
    int t;
    int causal;
} bench_case;

static const bench_case cases[] = {{256, 0}, {1024, 0}, {2048, 0}, {1024, 1}};

/* CPU time of this process, not wall time: the machine may be shared, and
 * time spent running other processes is not this code's. */
static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fill_uniform(double *x, size_t n, unsigned long long *state)
{
    for (size_t i = 0; i < n; i++) {
        *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    }
}

typedef struct problem {
    int t, use_f32;
    attn_options opts;
    double *q, *k, *v, *out, *work;
    float *qf, *kf, *vf, *outf, *workf;
} problem;

static int run(problem *p)
{
    if (p->use_f32)
        return attn_sdpa_f32(NULL, p->outf, p->qf, p->kf, p->vf, 1, p->t, p->t,
                             D, D, &p->opts, p->workf);
    return attn_sdpa(NULL, NULL, NULL, p->out, p->q, p->k, p->v, 1, p->t, p->t,
                     D, D, &p->opts, p->work);
}

static void print_samples(const char *name, const double *samples)
{
    printf("{\"case\":\"%s\",\"samples\":[", name);
    for (int s = 0; s < SAMPLES; s++)
        printf("%s%.9e", s ? "," : "", samples[s]);
    printf("]}\n");
}

static int bench_case_run(const bench_case *c, int use_f32)
{
    const size_t n = (size_t)c->t * D;
    problem p;
    memset(&p, 0, sizeof p);
    p.t = c->t;
    p.use_f32 = use_f32;
    attn_options_init(&p.opts);
    if (c->causal) p.opts.mask.kinds = ATTN_MASK_CAUSAL;
    unsigned long long state = 42;
    p.q = malloc(n * sizeof(double));
    p.k = malloc(n * sizeof(double));
    p.v = malloc(n * sizeof(double));
    p.out = malloc(n * sizeof(double));
    p.work = malloc(attn_sdpa_work_size(c->t) * sizeof(double));
    p.qf = malloc(n * sizeof(float));
    p.kf = malloc(n * sizeof(float));
    p.vf = malloc(n * sizeof(float));
    p.outf = malloc(n * sizeof(float));
    p.workf = malloc(attn_sdpa_f32_work_size(c->t, D, D) * sizeof(float));
    int status = ATTN_ERR_NOMEM;
    if (p.q && p.k && p.v && p.out && p.work && p.qf && p.kf && p.vf &&
        p.outf && p.workf) {
        fill_uniform(p.q, n, &state);
        fill_uniform(p.k, n, &state);
        fill_uniform(p.v, n, &state);
        for (size_t i = 0; i < n; i++) {
            p.qf[i] = (float)p.q[i];
            p.kf[i] = (float)p.k[i];
            p.vf[i] = (float)p.v[i];
        }
        double samples[SAMPLES];
        status = run(&p); /* warm up */
        for (int s = 0; s < SAMPLES && status == ATTN_OK; s++) {
            long calls = 0;
            const double start = now_seconds();
            double elapsed = 0.0;
            /* batches of doubling size: the clock is read rarely */
            for (long batch = 1; status == ATTN_OK && elapsed < SAMPLE_SECONDS;
                 batch *= 2) {
                for (long i = 0; i < batch && status == ATTN_OK; i++)
                    status = run(&p);
                calls += batch;
                elapsed = now_seconds() - start;
            }
            samples[s] = elapsed / (double)calls;
        }
        if (status == ATTN_OK) {
            char name[32];
            snprintf(name, sizeof name, "%s%d", c->causal ? "causal" : "T",
                     c->t);
            print_samples(name, samples);
        }
    }
    if (status != ATTN_OK)
        fprintf(stderr, "bench_sdpa: T = %d: %s\n", c->t,
                attn_status_text(status));
    free(p.q);
    free(p.k);
    free(p.v);
    free(p.out);
    free(p.work);
    free(p.qf);
    free(p.kf);
    free(p.vf);
    free(p.outf);
    free(p.workf);
    return status;
}

#ifdef HAVE_FMA_PEAK
/* flops per call: iterations × 10 chains × 8 lanes × 2. */
__attribute__((target("avx2,fma"))) static float fma_chains(long iterations)
{
    const __m256 b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
    __m256 a0 = _mm256_set1_ps(0.1f), a1 = _mm256_set1_ps(0.2f);
    __m256 a2 = _mm256_set1_ps(0.3f), a3 = _mm256_set1_ps(0.4f);
    __m256 a4 = _mm256_set1_ps(0.5f), a5 = _mm256_set1_ps(0.6f);
    __m256 a6 = _mm256_set1_ps(0.7f), a7 = _mm256_set1_ps(0.8f);
    __m256 a8 = _mm256_set1_ps(0.9f), a9 = _mm256_set1_ps(1.0f);
    for (long i = 0; i < iterations; i++) {
        a0 = _mm256_fmadd_ps(a0, b, c);
        a1 = _mm256_fmadd_ps(a1, b, c);
        a2 = _mm256_fmadd_ps(a2, b, c);
        a3 = _mm256_fmadd_ps(a3, b, c);
        a4 = _mm256_fmadd_ps(a4, b, c);
        a5 = _mm256_fmadd_ps(a5, b, c);
        a6 = _mm256_fmadd_ps(a6, b, c);
        a7 = _mm256_fmadd_ps(a7, b, c);
        a8 = _mm256_fmadd_ps(a8, b, c);
        a9 = _mm256_fmadd_ps(a9, b, c);
    }
    __m256 s = _mm256_add_ps(
        _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
        _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(a8, a9));
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    return lanes[0];
}

/* flops per call: iterations × 12 chains × 16 lanes × 2. */
__attribute__((target("avx512f"))) static float fma_chains512(long iterations)
{
    const __m512 b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(0.001f);
    __m512 a[12];
    for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps(0.1f * (float)(i + 1));
    for (long i = 0; i < iterations; i++) {
        a[0] = _mm512_fmadd_ps(a[0], b, c);
        a[1] = _mm512_fmadd_ps(a[1], b, c);
        a[2] = _mm512_fmadd_ps(a[2], b, c);
        a[3] = _mm512_fmadd_ps(a[3], b, c);
        a[4] = _mm512_fmadd_ps(a[4], b, c);
        a[5] = _mm512_fmadd_ps(a[5], b, c);
        a[6] = _mm512_fmadd_ps(a[6], b, c);
        a[7] = _mm512_fmadd_ps(a[7], b, c);
        a[8] = _mm512_fmadd_ps(a[8], b, c);
        a[9] = _mm512_fmadd_ps(a[9], b, c);
        a[10] = _mm512_fmadd_ps(a[10], b, c);
        a[11] = _mm512_fmadd_ps(a[11], b, c);
    }
    __m512 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm512_add_ps(s, a[i]);
    return _mm512_reduce_add_ps(s);
}

/* The widest FMA the CPU has (AVX-512F, else AVX2 + FMA), as seconds per
 * flop; the line names it. */
static int bench_peak(void)
{
    __builtin_cpu_init();
    const int wide = __builtin_cpu_supports("avx512f");
    if (!wide &&
        (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))) {
        fprintf(stderr, "bench_sdpa: no AVX2 + FMA, no native peak\n");
        return 0;
    }
    const long iterations = 20000000;
    const double flops = wide ? (double)iterations * 12 * 16 * 2
                              : (double)iterations * 10 * 8 * 2;
    double samples[SAMPLES];
    volatile float sink = 0.0f;
    sink += wide ? fma_chains512(iterations / 10) : fma_chains(iterations / 10);
    for (int s = 0; s < SAMPLES; s++) {
        const double start = now_seconds();
        sink += wide ? fma_chains512(iterations) : fma_chains(iterations);
        samples[s] = (now_seconds() - start) / flops; /* per flop */
    }
    printf("{\"peak_isa\":\"%s\"}\n", wide ? "avx512f" : "avx2-fma");
    (void)sink;
    print_samples("peak", samples);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "f64";
    if (strcmp(mode, "peak") == 0) {
#ifdef HAVE_FMA_PEAK
        return bench_peak();
#else
        return 0;
#endif
    }
    const int use_f32 = strcmp(mode, "f32") == 0;
    if (!use_f32 && strcmp(mode, "f64") != 0) {
        fprintf(stderr, "usage: bench_sdpa f64|f32|peak\n");
        return 2;
    }
    if (use_f32) printf("{\"kernel\":\"%s\"}\n", attn_f32_kernel_name());
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (bench_case_run(&cases[i], use_f32) != ATTN_OK) return 1;
    return 0;
}
