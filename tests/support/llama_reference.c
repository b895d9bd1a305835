#include "llama_reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void reference_rope_head(double *out, const double *x, int position, int d,
                         double theta)
{
    double emb[64], rotated[64];
    for (int i = 0; i < d / 2; i++) {
        const double inv_freq = 1.0 / pow(theta, (2.0 * i) / d);
        emb[i] = emb[i + d / 2] = position * inv_freq;
    }
    for (int i = 0; i < d; i++)
        rotated[i] = i < d / 2 ? -x[i + d / 2] : x[i - d / 2];
    for (int i = 0; i < d; i++)
        out[i] = x[i] * cos(emb[i]) + rotated[i] * sin(emb[i]);
}

void reference_gqa(double *weights, double *output, const double *q,
                   const double *k, const double *v, int n_q, int n_k,
                   int heads, int kv_heads, int d)
{
    const int offset = n_k - n_q;
    for (int h = 0; h < heads; h++) {
        const int g = h * kv_heads / heads; /* repeat_kv's copy */
        for (int i = 0; i < n_q; i++) {
            double scores[64], total = 0.0, largest = -INFINITY;
            for (int j = 0; j < n_k; j++) {
                double dot = 0.0;
                for (int c = 0; c < d; c++)
                    dot += q[(i * heads + h) * d + c] *
                           k[(j * kv_heads + g) * d + c];
                const double mask = j <= offset + i ? 0.0 : -INFINITY;
                scores[j] = dot / sqrt((double)d) + mask;
                if (scores[j] > largest) largest = scores[j];
            }
            for (int j = 0; j < n_k; j++)
                total += scores[j] = exp(scores[j] - largest);
            for (int c = 0; c < d; c++) output[(i * heads + h) * d + c] = 0.0;
            for (int j = 0; j < n_k; j++) {
                const double w = scores[j] / total;
                weights[(h * n_q + i) * n_k + j] = w;
                for (int c = 0; c < d; c++)
                    output[(i * heads + h) * d + c] +=
                        w * v[(j * kv_heads + g) * d + c];
            }
        }
    }
}

/* out[t] = w ∘ x[t] / sqrt(mean(x[t]²) + eps), as LlamaRMSNorm. */
static void rms_norm(double *out, const double *x, const double *w, int n,
                     int width, double eps)
{
    for (int t = 0; t < n; t++) {
        double mean = 0.0;
        for (int i = 0; i < width; i++)
            mean += x[t * width + i] * x[t * width + i] / width;
        for (int i = 0; i < width; i++)
            out[t * width + i] = w[i] * (x[t * width + i] / sqrt(mean + eps));
    }
}

/* y[t] = W x[t], W [out, in] as nn.Linear. */
static void linear(double *y, const double *x, const double *w, int n, int in,
                   int out)
{
    for (int t = 0; t < n; t++)
        for (int o = 0; o < out; o++) {
            double sum = 0.0;
            for (int i = 0; i < in; i++) sum += w[o * in + i] * x[t * in + i];
            y[t * out + o] = sum;
        }
}

void reference_decoder(double *logits, double *weights,
                       const reference_model *m, const int *tokens, int n)
{
    const attn_decoder_config *c = &m->config;
    const int hidden = c->hidden_size, heads = c->num_attention_heads;
    const int kv_heads = c->num_key_value_heads, d = hidden / heads;
    const int ff = c->intermediate_size, kv = kv_heads * d;
    double *x = calloc((size_t)(n * hidden), sizeof *x);
    double *a = calloc((size_t)(n * hidden), sizeof *a);
    double *q = calloc((size_t)(n * hidden), sizeof *q);
    double *k = calloc((size_t)(n * kv), sizeof *k);
    double *v = calloc((size_t)(n * kv), sizeof *v);
    double *att = calloc((size_t)(n * hidden), sizeof *att);
    double *proj = calloc((size_t)(n * hidden), sizeof *proj);
    double *gate = calloc((size_t)(n * ff), sizeof *gate);
    double *up = calloc((size_t)(n * ff), sizeof *up);
    double head[64];
    for (int t = 0; t < n; t++)
        memcpy(x + t * hidden, m->embed_tokens + tokens[t] * hidden,
               (size_t)hidden * sizeof *x);
    for (int l = 0; l < c->num_hidden_layers; l++) {
        const reference_layer *L = &m->layers[l];
        rms_norm(a, x, L->input_layernorm, n, hidden, c->rms_norm_eps);
        linear(q, a, L->q_proj, n, hidden, hidden);
        linear(k, a, L->k_proj, n, hidden, kv);
        linear(v, a, L->v_proj, n, hidden, kv);
        for (int t = 0; t < n; t++) {
            for (int h = 0; h < heads; h++) {
                reference_rope_head(head, q + (t * heads + h) * d, t, d,
                                    c->rope_theta);
                memcpy(q + (t * heads + h) * d, head, (size_t)d * sizeof *q);
            }
            for (int h = 0; h < kv_heads; h++) {
                reference_rope_head(head, k + (t * kv_heads + h) * d, t, d,
                                    c->rope_theta);
                memcpy(k + (t * kv_heads + h) * d, head, (size_t)d * sizeof *k);
            }
        }
        reference_gqa(weights + l * heads * n * n, att, q, k, v, n, n, heads,
                      kv_heads, d);
        linear(proj, att, L->o_proj, n, hidden, hidden);
        for (int i = 0; i < n * hidden; i++) x[i] += proj[i];
        rms_norm(a, x, L->post_attention_layernorm, n, hidden, c->rms_norm_eps);
        linear(gate, a, L->gate_proj, n, hidden, ff);
        linear(up, a, L->up_proj, n, hidden, ff);
        for (int i = 0; i < n * ff; i++)
            gate[i] = gate[i] / (1.0 + exp(-gate[i])) * up[i];
        linear(proj, gate, L->down_proj, n, ff, hidden);
        for (int i = 0; i < n * hidden; i++) x[i] += proj[i];
    }
    rms_norm(a, x, m->norm, n, hidden, c->rms_norm_eps);
    linear(logits, a, c->tie_word_embeddings ? m->embed_tokens : m->lm_head, n,
           hidden, c->vocab_size);
    free(x);
    free(a);
    free(q);
    free(k);
    free(v);
    free(att);
    free(proj);
    free(gate);
    free(up);
}
