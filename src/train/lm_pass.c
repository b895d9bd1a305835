/* lm_pass.c: a Llama decoder's forward pass over a batch of sequences,
 * keeping what its backward pass reads, and the backward pass, each piece
 * through its kernel (attention.h's Llama pieces and their gradients). */
#include "kernels/kernels.h"
#include "train/lm_train.h"

/* One layer's saved activations, each [rows, width]. */
typedef struct saved_layer {
    double *x, *a, *q, *k, *v, *att, *h, *b;
} saved_layer;

static size_t layer_doubles(const attn__lm_layout *layout, int rows)
{
    const attn_decoder_config *c = &layout->config;
    return (size_t)rows *
           (6 * (size_t)c->hidden_size + 2 * (size_t)attn__decoder_kv_width(c));
}

static saved_layer saved_at(const attn__lm_pass *pass,
                            const attn__lm_layout *layout, int l)
{
    const size_t rh = (size_t)pass->rows * (size_t)layout->config.hidden_size;
    const size_t rkv = (size_t)pass->rows *
                       (size_t)attn__decoder_kv_width(&layout->config);
    saved_layer s;
    s.x = pass->saved + (size_t)l * layer_doubles(layout, pass->rows);
    s.a = s.x + rh;
    s.q = s.a + rh;
    s.k = s.q + rh;
    s.v = s.k + rkv;
    s.att = s.v + rkv;
    s.h = s.att + rh;
    s.b = s.h + rh;
    return s;
}

/* The work array: the backward pass's gradients of the residual stream
 * and of a layer's pieces, the MLP's work and a row of attention. The
 * forward pass uses proj (as dx) and the same MLP and row space. */
typedef struct work_parts {
    double *dx, *dh, *db, *datt, *da, *dq, *dk, *dv;
    double *mlp; /* [4 · rows · intermediate] */
    double *row; /* [2 · T] */
} work_parts;

static size_t work_doubles(const attn__lm_layout *layout, int rows, int T)
{
    const attn_decoder_config *c = &layout->config;
    return (size_t)rows * (6 * (size_t)c->hidden_size +
                           2 * (size_t)attn__decoder_kv_width(c) +
                           4 * (size_t)c->intermediate_size) +
           2 * (size_t)T;
}

static work_parts work_at(const attn__lm_pass *pass,
                          const attn__lm_layout *layout)
{
    const size_t rh = (size_t)pass->rows * (size_t)layout->config.hidden_size;
    const size_t rkv = (size_t)pass->rows *
                       (size_t)attn__decoder_kv_width(&layout->config);
    work_parts w;
    w.dx = pass->work;
    w.dh = w.dx + rh;
    w.db = w.dh + rh;
    w.datt = w.db + rh;
    w.da = w.datt + rh;
    w.dq = w.da + rh;
    w.dk = w.dq + rh;
    w.dv = w.dk + rkv;
    w.mlp = w.dv + rkv;
    w.row = w.mlp +
            4 * (size_t)pass->rows * (size_t)layout->config.intermediate_size;
    return w;
}

size_t attn__lm_pass_doubles(const attn__lm_layout *layout, int batch, int T)
{
    const attn_decoder_config *c = &layout->config;
    size_t rows, per_row, total;
    /* Each buffer is rows times a width the layout already counted. */
    const size_t widths = (size_t)c->num_hidden_layers *
                              (6 * (size_t)c->hidden_size +
                               2 * (size_t)attn__decoder_kv_width(c)) +
                          8 * (size_t)c->hidden_size +
                          2 * (size_t)attn__decoder_kv_width(c) +
                          4 * (size_t)c->intermediate_size +
                          (size_t)c->vocab_size;
    if (attn__count3(&rows, batch, T, 1) != ATTN_OK ||
        attn__mul_size(&per_row, rows, widths) != ATTN_OK ||
        attn__add_size(&total, per_row, 2 * (size_t)T) != ATTN_OK)
        return 0;
    return total;
}

void attn__lm_pass_place(attn__lm_pass *pass, double *memory, int *positions,
                         const attn__lm_layout *layout, int batch, int T)
{
    const attn_decoder_config *c = &layout->config;
    pass->batch = batch;
    pass->T = T;
    pass->rows = batch * T;
    const size_t rh = (size_t)pass->rows * (size_t)c->hidden_size;
    pass->saved = memory;
    pass->last = pass->saved + (size_t)c->num_hidden_layers *
                                   layer_doubles(layout, pass->rows);
    pass->final = pass->last + rh;
    pass->logits = pass->final + rh;
    pass->work = pass->logits + (size_t)pass->rows * (size_t)c->vocab_size;
    pass->work_count = work_doubles(layout, pass->rows, T);
    pass->positions = positions;
    for (int p = 0; p < T; p++) positions[p] = p;
}

/* Rotates q [rows, heads, d] and k [rows, kv_heads, d], sequence by
 * sequence, by their positions; backward: by their negatives. */
static int rotate(double *q, double *k, const attn__lm_pass *pass,
                  const attn_decoder_config *c, int backward)
{
    const int heads = c->num_attention_heads, kv = c->num_key_value_heads;
    const int d = c->hidden_size / heads;
    int status = ATTN_OK;
    for (int s = 0; s < pass->batch && status == ATTN_OK; s++) {
        double *qs = q + (size_t)s * (size_t)pass->T * (size_t)(heads * d);
        double *ks = k + (size_t)s * (size_t)pass->T * (size_t)(kv * d);
        int (*turn)(double *, const double *, const int *, int, int, int,
                    double) = backward ? attn_rope_backward : attn_rope;
        status = turn(qs, qs, pass->positions, pass->T, heads, d,
                      c->rope_theta);
        if (status == ATTN_OK)
            status = turn(ks, ks, pass->positions, pass->T, kv, d,
                          c->rope_theta);
    }
    return status;
}

static int add(double *out, const double *a, const double *b, size_t count)
{
    for (size_t i = 0; i < count; i++) out[i] = a[i] + b[i];
    return attn__all_finite(out, count) ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}

static int layer_forward(const saved_layer *s, double *next, double *proj,
                         const work_parts *w, const attn_decoder_layer *l,
                         const attn__lm_pass *pass,
                         const attn_decoder_config *c)
{
    const int h = c->hidden_size, kv = attn__decoder_kv_width(c);
    const int heads = c->num_attention_heads, d = h / heads, R = pass->rows;
    const size_t cells = (size_t)R * (size_t)h;
    int status = attn_rms_norm(s->a, NULL, s->x, l->input_layernorm, R, h,
                               c->rms_norm_eps);
    if (status == ATTN_OK)
        status = attn__affine(s->q, s->a, l->q_proj, NULL, R, h, h);
    if (status == ATTN_OK)
        status = attn__affine(s->k, s->a, l->k_proj, NULL, R, h, kv);
    if (status == ATTN_OK)
        status = attn__affine(s->v, s->a, l->v_proj, NULL, R, h, kv);
    if (status == ATTN_OK) status = rotate(s->q, s->k, pass, c, 0);
    for (int q = 0; q < pass->batch && status == ATTN_OK; q++) {
        const size_t at = (size_t)q * (size_t)pass->T;
        status = attn_gqa(NULL, s->att + at * (size_t)h, s->q + at * (size_t)h,
                          s->k + at * (size_t)kv, s->v + at * (size_t)kv,
                          pass->T, pass->T, heads, c->num_key_value_heads, d,
                          w->row);
    }
    if (status == ATTN_OK)
        status = attn__affine(proj, s->att, l->o_proj, NULL, R, h, h);
    if (status == ATTN_OK) status = add(s->h, s->x, proj, cells);
    if (status == ATTN_OK)
        status = attn_rms_norm(s->b, NULL, s->h, l->post_attention_layernorm, R,
                               h, c->rms_norm_eps);
    if (status == ATTN_OK)
        status = attn_gated_mlp(NULL, proj, s->b, l->gate_proj, l->up_proj,
                                l->down_proj, R, h, c->intermediate_size, h,
                                w->mlp);
    if (status == ATTN_OK) status = add(next, s->h, proj, cells);
    return status;
}

int attn__lm_forward(attn__lm_pass *pass, const double *params,
                     const attn__lm_layout *layout, const int *tokens)
{
    const attn_decoder_config *c = &layout->config;
    const int h = c->hidden_size, L = c->num_hidden_layers;
    const work_parts w = work_at(pass, layout);
    int status = attn_embedding(saved_at(pass, layout, 0).x,
                                params + layout->embed, tokens, pass->rows,
                                c->vocab_size, h);
    for (int l = 0; l < L && status == ATTN_OK; l++) {
        const saved_layer s = saved_at(pass, layout, l);
        const attn_decoder_layer weights = attn__lm_layer_at(layout, params, l);
        double *next = l + 1 < L ? saved_at(pass, layout, l + 1).x : pass->last;
        status = layer_forward(&s, next, w.dx, &w, &weights, pass, c);
    }
    if (status == ATTN_OK)
        status = attn_rms_norm(pass->final, NULL, pass->last,
                               params + layout->norm, pass->rows, h,
                               c->rms_norm_eps);
    if (status == ATTN_OK)
        status = attn_unembedding(pass->logits, pass->final,
                                  params + layout->lm_head, pass->rows,
                                  c->vocab_size, h);
    return status;
}

/* For y = x @ W (W [in, out]): grad_w = xᵀ dy; grad_x = dy Wᵀ, added to
 * grad_x when accumulate is 1. */
static void linear_backward(double *grad_x, double *grad_w, const double *dy,
                            const double *x, const double *w, int rows, int in,
                            int out, int accumulate)
{
    attn__zero(grad_w, (size_t)in * (size_t)out);
    attn__matmul_tn_add(grad_w, x, dy, rows, in, out);
    attn__matmul_nt(grad_x, (size_t)in, dy, (size_t)out, w, (size_t)out, rows,
                    in, out, accumulate);
}

/* w->dx holds d loss / d (the layer's output); leaves d loss / d (its
 * input) there, and the layer's weights' gradients in g, laid out as o. */
static int layer_backward(const work_parts *w, double *g,
                          const attn__lm_layer_layout *o, const saved_layer *s,
                          const attn_decoder_layer *l,
                          const attn__lm_pass *pass,
                          const attn_decoder_config *c)
{
    const int h = c->hidden_size, kv = attn__decoder_kv_width(c);
    const int heads = c->num_attention_heads, d = h / heads, R = pass->rows;
    const size_t cells = (size_t)R * (size_t)h;
    /* x_next = h + mlp(b), b = norm(h). */
    int status = attn_gated_mlp_backward(
        w->db, g + o->gate, g + o->up, g + o->down, w->dx, s->b, l->gate_proj,
        l->up_proj, l->down_proj, R, h, c->intermediate_size, h, w->mlp);
    if (status == ATTN_OK)
        status = attn_rms_norm_backward(w->dh, g + o->post_norm, w->db, s->h,
                                        l->post_attention_layernorm, R, h,
                                        c->rms_norm_eps);
    if (status == ATTN_OK) status = add(w->dh, w->dh, w->dx, cells);
    if (status != ATTN_OK) return status;
    /* h = x + o_proj(att). */
    linear_backward(w->datt, g + o->o, w->dh, s->att, l->o_proj, R, h, h, 0);
    for (int q = 0; q < pass->batch && status == ATTN_OK; q++) {
        const size_t at = (size_t)q * (size_t)pass->T;
        status = attn_gqa_backward(
            w->dq + at * (size_t)h, w->dk + at * (size_t)kv,
            w->dv + at * (size_t)kv, w->datt + at * (size_t)h,
            s->q + at * (size_t)h, s->k + at * (size_t)kv,
            s->v + at * (size_t)kv, pass->T, pass->T, heads,
            c->num_key_value_heads, d, w->row);
    }
    if (status == ATTN_OK) status = rotate(w->dq, w->dk, pass, c, 1);
    if (status != ATTN_OK) return status;
    linear_backward(w->da, g + o->q, w->dq, s->a, l->q_proj, R, h, h, 0);
    linear_backward(w->da, g + o->k, w->dk, s->a, l->k_proj, R, h, kv, 1);
    linear_backward(w->da, g + o->v, w->dv, s->a, l->v_proj, R, h, kv, 1);
    /* a = norm(x): dx = d norm + the residual's dh. */
    status = attn_rms_norm_backward(w->dx, g + o->input_norm, w->da, s->x,
                                    l->input_layernorm, R, h, c->rms_norm_eps);
    if (status == ATTN_OK) status = add(w->dx, w->dx, w->dh, cells);
    return status;
}

int attn__lm_backward(double *grads, attn__lm_pass *pass, const double *params,
                      const attn__lm_layout *layout, const int *tokens)
{
    const attn_decoder_config *c = &layout->config;
    const int h = c->hidden_size, R = pass->rows, vocab = c->vocab_size;
    const work_parts w = work_at(pass, layout);
    /* The embedding and the unembedding add to their tables (one table
     * when tied); every other gradient is written whole. */
    attn__zero(grads + layout->embed, (size_t)vocab * (size_t)h);
    attn__zero(grads + layout->lm_head, (size_t)vocab * (size_t)h);
    int status = attn_unembedding_backward(
        w.dh, grads + layout->lm_head, pass->logits, pass->final,
        params + layout->lm_head, R, vocab, h);
    if (status == ATTN_OK)
        status = attn_rms_norm_backward(w.dx, grads + layout->norm, w.dh,
                                        pass->last, params + layout->norm, R, h,
                                        c->rms_norm_eps);
    for (int l = c->num_hidden_layers - 1; l >= 0 && status == ATTN_OK; l--) {
        const saved_layer s = saved_at(pass, layout, l);
        const attn_decoder_layer weights = attn__lm_layer_at(layout, params, l);
        double *g = grads + layout->first_layer + (size_t)l * layout->per_layer;
        status = layer_backward(&w, g, &layout->layer, &s, &weights, pass, c);
    }
    if (status == ATTN_OK)
        status = attn_embedding_backward(grads + layout->embed, w.dx, tokens, R,
                                         vocab, h);
    return status;
}
