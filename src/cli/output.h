/* output.h: where `attn` and `attn check` write their result (output.c):
 * standard output, or -o FILE written whole or not at all. */
#ifndef ATTN_CLI_OUTPUT_H
#define ATTN_CLI_OUTPUT_H

#include <stddef.h>

/* An output being written: opened, written in pieces, then finished. */
typedef struct attn_cli_output {
    const char *path; /* as the user typed it; NULL for standard output */
    int fd;
    int owned;       /* fd is closed by finish */
    char *file;      /* a replaced or new file: its name ... */
    char *partial;   /* ... and the temporary file renamed over it */
    int write_errno; /* the first write's failure, 0 for none */
    char last;       /* the last byte written */
} attn_cli_output;

/* Opens standard output when path is NULL or "-", else the file path names
 * (a regular file through a temporary one beside it). 0, or an exit status
 * with error saying why: 2 when path cannot be written at all. */
int attn_cli_output_open(attn_cli_output *out, const char *path, char *error,
                         size_t error_cap);

/* Appends count bytes; a failure is kept for finish to report. */
void attn_cli_output_write(attn_cli_output *out, const char *bytes,
                           size_t count);

/* keep: a final newline if the text lacks one, then the file renamed into
 * place; else a temporary file removed (FILE stays as it was). 0, or 1
 * when a write failed part way, 2 when the file could not be put in
 * place. */
int attn_cli_output_finish(attn_cli_output *out, int keep, char *error,
                           size_t error_cap);

/* The whole result (length bytes) opened, written and finished. */
int attn_cli_write_output(const char *path, const char *output, size_t length,
                          char *error, size_t error_cap);

#endif
