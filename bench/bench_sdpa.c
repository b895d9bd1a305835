/*
 * bench_sdpa: times attn_sdpa natively for T = 8, 64, 256, 1024 with d = 64
 * (n_q = n_k = T, d_k = d_v = d, batch 1, output only). Prints one line per
 * T, "T seconds_per_call", for bench/bench.mjs to put next to the WASM and
 * plain-JS figures. Each figure is the fastest of ROUNDS rounds, each a
 * mean over at least ROUND_SECONDS: the minimum filters out interference
 * from other processes on a shared machine.
 */
#define _POSIX_C_SOURCE 199309L

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attention.h"

#define D 64
#define ROUNDS 5
#define ROUND_SECONDS 0.06

static const int sizes[] = {8, 64, 256, 1024};

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Deterministic inputs in [-1, 1): the same generator as bench.mjs. */
static void fill_uniform(double *x, size_t n, unsigned long long *state)
{
    for (size_t i = 0; i < n; i++) {
        *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    }
}

typedef struct sdpa_case {
    int t;
    double *q;      /* [t, D] */
    double *k;      /* [t, D] */
    double *v;      /* [t, D] */
    double *output; /* [t, D] */
    double *work;   /* [attn_sdpa_work_size(t)] */
} sdpa_case;

static int run_case(const sdpa_case *c)
{
    return attn_sdpa(NULL, NULL, NULL, c->output, c->q, c->k, c->v,
                     1, c->t, c->t, D, D, NULL, c->work);
}

/* The fastest round's seconds per call; a round runs batches of doubling
 * size until ROUND_SECONDS have passed. */
static int time_case(const sdpa_case *c, double *seconds_per_call)
{
    int status = run_case(c); /* warm caches and page in the buffers */
    for (int round = 0; round < ROUNDS && status == ATTN_OK; round++) {
        double total = 0.0;
        long calls = 0;
        for (long batch = 1; status == ATTN_OK && total < ROUND_SECONDS;
             batch *= 2) {
            double start = now_seconds();
            for (long i = 0; i < batch && status == ATTN_OK; i++)
                status = run_case(c);
            total += now_seconds() - start;
            calls += batch;
        }
        double mean = total / (double)calls;
        if (round == 0 || mean < *seconds_per_call) *seconds_per_call = mean;
    }
    return status;
}

static int bench_size(int t, unsigned long long *state)
{
    size_t n = (size_t)t * D;
    sdpa_case c = {t, malloc(n * sizeof(double)), malloc(n * sizeof(double)),
                   malloc(n * sizeof(double)), malloc(n * sizeof(double)),
                   malloc(attn_sdpa_work_size(t) * sizeof(double))};
    int status = ATTN_ERR_NOMEM;
    if (c.q && c.k && c.v && c.output && c.work) {
        double seconds = 0.0;
        fill_uniform(c.q, n, state);
        fill_uniform(c.k, n, state);
        fill_uniform(c.v, n, state);
        status = time_case(&c, &seconds);
        if (status == ATTN_OK) printf("%d %.9e\n", t, seconds);
    }
    if (status != ATTN_OK) {
        fprintf(stderr, "bench_sdpa: T = %d: %s\n", t, attn_status_text(status));
    }
    free(c.q);
    free(c.k);
    free(c.v);
    free(c.output);
    free(c.work);
    return status;
}

int main(void)
{
    unsigned long long state = 42;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (bench_size(sizes[i], &state) != ATTN_OK) return 1;
    }
    return 0;
}
