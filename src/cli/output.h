/* output.h: where `attn` and `attn check` write their result (output.c):
 * standard output, or -o FILE written whole or not at all. */
#ifndef ATTN_CLI_OUTPUT_H
#define ATTN_CLI_OUTPUT_H

#include <stddef.h>

/* The result (length bytes, a final newline added if it lacks one) to
 * standard output when path is NULL or "-", else to the file path names.
 * 0, or an exit status with error saying why: 1 when the write failed part
 * way, 2 when path cannot be written at all. */
int attn_cli_write_output(const char *path, const char *output, size_t length,
                          char *error, size_t error_cap);

#endif
