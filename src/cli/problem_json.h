/*
 * problem_json.h: JSON through cJSON for what the library does not read
 * from text itself: a check file's printed numbers and their decimals, and
 * a problem held as a cJSON tree (written back as text for
 * attn_problem_read_json, whose rules and messages every front end
 * shares). Shared by the CLI and the vector tests.
 */
#ifndef PROBLEM_JSON_H
#define PROBLEM_JSON_H

#include "attention.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/*
 * The problem root holds, read by attn_problem_read_json from the tree
 * written back as text (its limit named "--max-bytes"). allocator NULL =
 * malloc and free.
 */
int attn_problem_from_json(attn_problem **problem, const cJSON *root,
                           const attn_allocator *allocator, char *error,
                           size_t error_cap);

/* The same with the problem's byte limit (attn_problem_set_max_bytes)
 * set before any field: 0 = the default. */
int attn_problem_from_json_limited(attn_problem **problem, const cJSON *root,
                                   const attn_allocator *allocator,
                                   size_t max_bytes, char *error,
                                   size_t error_cap);

/* How deep arrays and objects may nest in a problem's JSON. */
#define ATTN_JSON_MAX_DEPTH 64

/*
 * Parses text[0..length) (no NUL needed after it) into *root, refusing what a
 * problem must not hold even where cJSON accepts it: a NUL byte, the escape
 * \u0000 in a string, nesting deeper than ATTN_JSON_MAX_DEPTH and a key
 * repeated in an object. Returns ATTN_OK, or ATTN_ERR_INPUT with one line in
 * error ("invalid JSON at line 2, column 5, near ...", "kind: the key appears
 * more than once in the problem"), ATTN_ERR_TOO_LARGE (below) or
 * ATTN_ERR_NOMEM. On failure *root is NULL.
 */
int attn_json_parse(cJSON **root, const char *text, size_t length, char *error,
                    size_t error_cap);

/*
 * The same, within a limit on what reading and parsing takes: the text, a
 * terminated copy of it and cJSON's tree: a node of sizeof(cJSON) bytes per
 * value with malloc's header (two pointers), and a block per string, its
 * bytes, a NUL and two such headers.
 * The tree is counted from the text before cJSON builds any of it, as
 * 2 (arrays and objects) + (commas) + 1 nodes, an upper bound on its
 * values: text that would take more than max_bytes is refused with
 * ATTN_ERR_TOO_LARGE ("the input's JSON (N bytes) would take about M
 * bytes to read and parse, more than the limit of L bytes; ..."). 0 = the
 * default, ATTN_PROBLEM_DEFAULT_MAX_BYTES, which attn_json_parse uses.
 */
int attn_json_parse_limited(cJSON **root, const char *text, size_t length,
                            size_t max_bytes, char *error, size_t error_cap);

/* A tensor read from nested JSON arrays. rank 0 is a single number. */
typedef struct attn_json_tensor {
    int rank;     /* 0..3 */
    int dims[3];  /* dims[d] for d < rank, the others 0 */
    size_t count; /* product of the dims (1 for rank 0) */
    double *data; /* [count], row-major; release with attn_json_tensor_free */
} attn_json_tensor;

/* How leaves other than numbers read. */
enum {
    ATTN_JSON_NULL_IS_MINUS_INF = 1u << 1, /* null = -INFINITY (results) */
    ATTN_JSON_ALLOW_SCALAR = 1u << 2 /* a bare number is a rank 0 tensor */
};

/*
 * Reads node (nested arrays of rank 1..3, or a number with
 * ATTN_JSON_ALLOW_SCALAR) into *tensor. path names node in messages
 * ("q", "heads.0.weights"). Returns ATTN_OK, ATTN_ERR_INPUT with a message
 * in error, or ATTN_ERR_NOMEM.
 */
int attn_json_read_tensor(attn_json_tensor *tensor, const cJSON *node,
                          const char *path, unsigned leaves,
                          const attn_allocator *allocator, char *error,
                          size_t error_cap);
void attn_json_tensor_free(attn_json_tensor *tensor,
                           const attn_allocator *allocator);

/* "a number", "a string", "null", "an array", "an object", "a boolean",
 * "nothing" (node NULL): what a message says it got. */
const char *attn_json_describe(const cJSON *node);

/*
 * Sets the printed numbers of a check from JSON as tests/vectors holds
 * them: printed {key: number or nested arrays (null = −∞), "heads": [{key:
 * ...}] for a multi-head problem's heads, strings (notes) skipped};
 * decimals (NULL for none) a number for every key, or {key: a number or
 * nested arrays shaped like the printed numbers}, a head's table under
 * "heads.0.weights" or its plain name. Where decimals gives none, text
 * [length] (the JSON that was parsed; NULL for none) says how each number
 * of its "printed" object was written: 0.380 has 3. Returns ATTN_OK, or
 * the status with one line in error naming the key.
 */
int attn_check_printed_from_json(attn_check *check, const cJSON *printed,
                                 const cJSON *decimals, const char *text,
                                 size_t length, const attn_allocator *allocator,
                                 char *error, size_t error_cap);

#endif /* PROBLEM_JSON_H */
