/*
 * json_tree.h: JSON text into a tree, strictly and within a limit, for
 * read_json.c (attn_problem_read_json). The rules every front end shares
 * are here: a NUL byte or the escape \u0000 in the text, nesting deeper
 * than ATTN__JTREE_DEPTH, a key repeated in an object and text whose tree
 * would take more than the limit are refused, each with one line naming
 * where.
 */
#ifndef ATTN_PROBLEM_JSON_TREE_H
#define ATTN_PROBLEM_JSON_TREE_H

#include "attention.h"

#include <stddef.h>

enum { ATTN__JTREE_DEPTH = 64 };

typedef enum attn__jtype {
    ATTN__J_NULL,
    ATTN__J_FALSE,
    ATTN__J_TRUE,
    ATTN__J_NUMBER,
    ATTN__J_STRING,
    ATTN__J_ARRAY,
    ATTN__J_OBJECT
} attn__jtype;

typedef struct attn__jnode {
    struct attn__jnode *next;  /* the next entry of its array or object */
    struct attn__jnode *child; /* an array's or object's first entry */
    const char *key;           /* an object's member: its name */
    const char *string;        /* ATTN__J_STRING: the text, decoded; a
                                  number float64 rounds: its digits */
    double number;             /* ATTN__J_NUMBER */
    int type;                  /* an attn__jtype */
    int count; /* an array's or object's entries; a number's digits when
                  they are a whole number float64 would round (2**53 + 1),
                  0 for every other number */
} attn__jnode;

typedef struct attn__jtree {
    attn__jnode *root;
    attn__jnode *nodes; /* every node, one block */
    char *strings;      /* every key and string, one block */
    char *text;         /* the text, terminated: rounded numbers' digits */
    const attn_allocator *allocator;
} attn__jtree;

/*
 * Parses text[0..length) into *tree (free it with attn__jtree_free, also
 * after a failure). max_bytes 0 = ATTN_PROBLEM_DEFAULT_MAX_BYTES;
 * limit_option names the caller's option for it in the message ("--max-bytes",
 * "maxBytes", "max_bytes"). Returns ATTN_OK, or ATTN_ERR_INPUT,
 * ATTN_ERR_TOO_LARGE or ATTN_ERR_NOMEM with one line in error.
 */
int attn__jtree_parse(attn__jtree *tree, char *error, const char *text,
                      const attn_allocator *allocator, const char *limit_option,
                      size_t length, size_t max_bytes, size_t error_cap);
void attn__jtree_free(attn__jtree *tree);

/* "a number", "a string", "null", "an array", "an object", "a boolean",
 * "nothing" (node NULL): what a message says it got. */
const char *attn__jnode_describe(const attn__jnode *node);

/* The member of an object named `key`, or NULL. */
const attn__jnode *attn__jnode_member(const attn__jnode *object,
                                      const char *key);

#endif /* ATTN_PROBLEM_JSON_TREE_H */
