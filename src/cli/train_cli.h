/* train_cli.h: `attn train` (train.c), called by main in attn.c, and the
 * option reading the two commands share (attn.c). */
#ifndef ATTN_TRAIN_CLI_H
#define ATTN_TRAIN_CLI_H

#include <stddef.h>

/* argv[0] is "train"; returns the exit status. */
int attn_cli_train(int argc, char **argv);

/* --max-bytes's value: decimal digits only, from 1 to SIZE_MAX. 0, or the
 * exit status 2 with error saying why. */
int attn_cli_parse_bytes(const char *text, size_t *bytes, char *error,
                         size_t error_cap);

#endif
