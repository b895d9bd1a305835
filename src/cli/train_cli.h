/* train_cli.h: `attn train` (train.c), called by main in attn.c. */
#ifndef ATTN_TRAIN_CLI_H
#define ATTN_TRAIN_CLI_H

#include <stddef.h>

/* argv[0] is "train"; returns the exit status. */
int attn_cli_train(int argc, char **argv);

#endif
