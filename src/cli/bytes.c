/* bytes.c: --max-bytes's value (bytes.h). */
#include "bytes.h"

#include <stdint.h>
#include <stdio.h>

int attn_cli_parse_bytes(const char *text, size_t *bytes, char *error,
                         size_t error_cap)
{
    size_t value = 0;
    const char *c = text;
    for (; *c >= '0' && *c <= '9'; c++) {
        const size_t digit = (size_t)(*c - '0');
        if (value > (SIZE_MAX - digit) / 10) break;
        value = value * 10 + digit;
    }
    if (c == text || *c != '\0' || value == 0) {
        snprintf(error, error_cap,
                 "--max-bytes: expected a whole number of bytes from 1 to "
                 "%zu, got \"%s\"",
                 (size_t)SIZE_MAX, text);
        return 2;
    }
    *bytes = value;
    return 0;
}
