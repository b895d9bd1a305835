/* head_problem.c: one head's walkthrough on a text: its queries, keys and
 * values (head.c) as a scaled dot-product problem with a causal mask, its
 * tokens labelled, run and ready to format. The CLI, the JS API and
 * Python all take a head's walkthrough from here. */
#include "kernels/kernels.h"
#include "lm/lm.h"
#include "problem/problem.h"

#include <stdio.h>

/* The problem's q, k, v [3, n, d], mask, tokens and title set; its
 * status. labels: [n] labels' room, pointers: [n]. */
static int set_fields(attn_problem *problem, const double *qkv, int n, int d,
                      const int *tokens, char (*labels)[ATTN_TOKEN_LABEL_CAP],
                      const char **pointers, int layer, int head)
{
    const int dims[2] = {n, d};
    const char *names[3] = {"q", "k", "v"};
    int status = ATTN_OK;
    for (int f = 0; f < 3 && status == ATTN_OK; f++)
        status = attn_problem_set_tensor(problem, names[f], 2, dims,
                                         qkv +
                                             (size_t)f * (size_t)n * (size_t)d);
    if (status == ATTN_OK)
        status = attn_problem_set_string(problem, "mask", "causal");
    for (int i = 0; i < n; i++) {
        attn_token_label(labels[i], tokens[i], 0);
        pointers[i] = labels[i];
    }
    if (status == ATTN_OK)
        status = attn_problem_set_strings(problem, "tokens", n, pointers);
    char title[80];
    snprintf(title, sizeof title, "Layer %d, head %d of the model", layer,
             head);
    if (status == ATTN_OK)
        status = attn_problem_set_document(problem, title, 0);
    return status;
}

/* The problem made from the head's q, k and v in block; its status, with
 * the problem's message in the model's error. */
static int make_problem(attn_model *model, attn_problem **problem,
                        double *block, const int *tokens, int n, int d,
                        int layer, int head)
{
    const size_t cells = (size_t)n * (size_t)d;
    char(*labels)[ATTN_TOKEN_LABEL_CAP] = (void *)(block + 3 * cells);
    const char **pointers = (const char **)(labels + n);
    int status = attn_problem_create(problem, "scaledDotProduct",
                                     &model->allocator);
    if (status != ATTN_OK)
        return attn__model_error(model, status, "the head's walkthrough: %s",
                                 attn_status_text(status));
    attn_problem_set_max_bytes(*problem, model->max_bytes);
    attn__problem_set_inputs_origin(
        *problem,
        "Here they are this head's on the text, computed by the model: "
        "each query and key as the layer projected it, then turned by the "
        "rotary embedding through angles its position sets; each value as "
        "the layer projected it (its key/value head may serve several query "
        "heads).");
    status = set_fields(*problem, block, n, d, tokens, labels, pointers, layer,
                        head);
    if (status == ATTN_OK) status = attn_problem_run(*problem);
    if (status != ATTN_OK) {
        attn__model_error(model, status, "%s", attn_problem_error(*problem));
        attn_problem_destroy(*problem);
        *problem = NULL;
    }
    return status;
}

int attn_model_head_problem(attn_model *model, attn_problem **problem,
                            const int *tokens, int n, int layer, int head)
{
    if (problem != NULL) *problem = NULL;
    if (model == NULL) return ATTN_ERR_NULL;
    if (problem == NULL)
        return attn__model_error(model, ATTN_ERR_NULL, "no problem pointer");
    int status = attn__model_check_tokens(model, tokens, n, 0);
    if (status != ATTN_OK) return status;
    const attn_decoder_config *c = &model->config;
    const int d = c->hidden_size / c->num_attention_heads;
    /* q, k and v [3, n, d], then the labels and their pointers. */
    size_t cells, bytes = SIZE_MAX, labels;
    if (attn__count3(&cells, 3, n, d) == ATTN_OK &&
        attn__count3(&labels, n,
                     (int)(ATTN_TOKEN_LABEL_CAP + sizeof(const char *)),
                     1) == ATTN_OK &&
        attn__mul_size(&bytes, cells, sizeof(double)) == ATTN_OK &&
        attn__add_size(&bytes, bytes, labels) != ATTN_OK)
        bytes = SIZE_MAX;
    double *block = attn__model_allocate(model, &status, bytes, 0,
                                         "the head's walkthrough");
    if (block == NULL) return status;
    const size_t per = (size_t)n * (size_t)d;
    /* The head's own memory is counted with this block held. */
    model->held += bytes;
    status = attn_model_head(model, block, block + per, block + 2 * per, tokens,
                             n, layer, head);
    model->held -= bytes;
    if (status == ATTN_OK)
        status = make_problem(model, problem, block, tokens, n, d, layer, head);
    attn__model_release(model, block);
    if (status == ATTN_OK) model->error[0] = '\0';
    return status;
}
