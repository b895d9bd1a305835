/*
 * fuzz_reader.h: what every libFuzzer target (fuzz/fuzz_*.c) shares: the
 * input read as a stream of bytes (0 once it runs out, so every input is a
 * complete program), and the checks that report a finding by abort(), the
 * way libFuzzer expects one.
 */
#ifndef FUZZ_READER_H
#define FUZZ_READER_H

#include "attention.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    const uint8_t *data;
    size_t size, at;
} reader;

static inline unsigned take_byte(reader *r)
{
    return r->at < r->size ? r->data[r->at++] : 0;
}

/* check(condition): a finding, with the check that failed on stderr. */
static inline void check_failed(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    abort();
}
#define check(condition) \
    ((condition) ? (void)0 : check_failed(__FILE__, __LINE__, #condition))

/* A status is one of attention.h's codes, with its own text. */
static inline void check_status(int status)
{
    check(status >= ATTN_OK && status <= ATTN_ERR_FORMAT); /* the last */
    check(strcmp(attn_status_text(status), "unknown status") != 0);
}

#endif /* FUZZ_READER_H */
