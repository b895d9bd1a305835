/* answer_cli.h: `attn answer` (answer.c): one learner's value for one cell,
 * graded by the engine's check; attn.c reads the problem and writes out. */
#ifndef ATTN_ANSWER_CLI_H
#define ATTN_ANSWER_CLI_H

#include "attention.h"

#include <stddef.h>

/* The verdict on `typed` for `cell` ("weights:0:1": a result, its row and
 * its column, from 0) of problem, which it runs and destroys: attn_check_
 * answer's JSON when json, else its verdict and, when it has one, its hint,
 * a line each; *output (to free) holds *length bytes. Returns 0 when the
 * answer is right, 1 when it is not, else the exit status 2 (bad input) or
 * 1 (out of memory) with error saying why and *output NULL; *right says
 * which of 0 and 1 it is. */
int attn_cli_answer(attn_problem *problem, const char *cell, const char *typed,
                    int json, char **output, size_t *length, int *right,
                    char *error, size_t error_cap);

#endif
