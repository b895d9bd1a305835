/* bytes.h: --max-bytes's value, read the same way by `attn` (attn.c) and
 * `attn train` (train.c). */
#ifndef ATTN_CLI_BYTES_H
#define ATTN_CLI_BYTES_H

#include <stddef.h>

/* Decimal digits only, from 1 to SIZE_MAX. 0, or the exit status 2 (bad
 * input) with error saying why. */
int attn_cli_parse_bytes(const char *text, size_t *bytes, char *error,
                         size_t error_cap);

#endif
