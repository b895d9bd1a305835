/* fail.c: the message of a model file's error. */
#include "model/model.h"

#include <stdarg.h>
#include <stdio.h>

int attn__model_fail(attn__text *text, const char *format, ...)
{
    char line[400];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    attn__text_puts(text, line);
    return ATTN_ERR_FORMAT;
}
