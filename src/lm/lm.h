/* lm.h: what the files of src/lm/ share, the model object. */
#ifndef ATTN_LM_H
#define ATTN_LM_H

#include "attention.h"
#include "text/textbuf.h"

enum { ATTN__MODEL_ERROR_CAP = 400 };

struct attn_model {
    attn_allocator allocator;
    size_t max_bytes;           /* 0 never: the default stands for it */
    size_t held;                /* bytes held: this object and its weights */
    int loaded;                 /* 1 once a load succeeded */
    attn_decoder_config config; /* valid once loaded */
    attn_decoder_params params; /* pointing into block */
    void *block;                /* the layers' pointers, then the weights */
    char error[ATTN__MODEL_ERROR_CAP];
};

/* ---- model.c ---- */

/* Writes the message into model->error and returns status. */
int attn__model_error(attn_model *model, int status, const char *format, ...)
    ATTN__PRINTF_LIKE(3, 4);

/* A block of `bytes` that `also` more bytes held for the call's duration
 * do not take beyond the limit: NULL with the error set (ATTN_ERR_TOO_LARGE
 * naming `what`, or ATTN_ERR_NOMEM). */
void *attn__model_allocate(attn_model *model, int *status, size_t bytes,
                           size_t also, const char *what);
void attn__model_release(attn_model *model, void *block); /* NULL is fine */

/* The bytes the weights of a model of this config take as doubles, with
 * their layers' pointers; 0 when that does not fit in size_t. */
size_t attn__model_weight_bytes(const attn_decoder_config *config);
/* The bytes of the largest tensor read at once while loading. */
size_t attn__model_scratch_bytes(const attn_decoder_config *config);

/* ---- run.c ---- */

/* The tokens against the model, with a message: loaded, 1 to
 * max_position_embeddings of them (`more` to come after them), each an
 * id. */
int attn__model_check_tokens(attn_model *m, const int *tokens, int n, int more);

/* ATTN_ERR_STATE, with its message, once the model is loaded. */
int attn__model_check_unloaded(attn_model *model);

/* Loads from the files' bytes, config already parsed into *config; `also`
 * bytes (a file read whole) are held meanwhile. */
int attn__model_load_parsed(attn_model *model,
                            const attn_decoder_config *config,
                            const unsigned char *file, size_t size,
                            size_t also);

#endif /* ATTN_LM_H */
