/* model.h: what the files of src/model/ share. */
#ifndef ATTN_MODEL_H
#define ATTN_MODEL_H

#include "attention.h"
#include "text/textbuf.h"

/* Writes the message into text and returns ATTN_ERR_FORMAT. */
int attn__model_fail(attn__text *text, const char *format, ...)
    ATTN__PRINTF_LIKE(2, 3);

#endif /* ATTN_MODEL_H */
