/*
 * json.h: a bounded reader of one JSON document in a caller's bytes, for a
 * model's config.json and a safetensors header. Nothing is allocated and
 * nothing copied: values are read where they are, every index is checked
 * against the length, and nesting stops at ATTN__JSON_DEPTH. Strings are
 * compared by their raw bytes between the quotes (a key written with
 * escapes matches nothing).
 */
#ifndef ATTN_MODEL_JSON_H
#define ATTN_MODEL_JSON_H

#include <stddef.h>
#include <stdint.h>

enum { ATTN__JSON_DEPTH = 32 };

typedef struct attn__json {
    const char *s; /* [n] */
    size_t n;
} attn__json;

/* The first byte at or after `at` that is not JSON whitespace (n at the
 * end). */
size_t attn__json_space(const attn__json *j, size_t at);

/* *end = just past the value at `at` (whitespace first); 0 if it is not
 * one well-formed value. */
int attn__json_skip(const attn__json *j, size_t at, size_t *end);

/* 1 if the document is one well-formed object, whitespace around it. */
int attn__json_is_object(const attn__json *j);

/* The object's members one at a time: *cursor starts at the object's
 * index. Each call gives the next key's raw bytes [*key, *key_end) and
 * its value's index: 1, or 0 after the last; -1 if malformed. */
int attn__json_member(const attn__json *j, size_t *cursor, size_t *key,
                      size_t *key_end, size_t *value);

/* 1 if the key's raw bytes are the NUL-terminated name. */
int attn__json_key_is(const attn__json *j, size_t key, size_t key_end,
                      const char *name);

/* The value at `at`: a string's raw bytes [*start, *end); a whole number
 * of digits only, at most max; any number; true or false. 0 if it is not
 * one (or is larger than max). */
int attn__json_string(const attn__json *j, size_t at, size_t *start,
                      size_t *end);
int attn__json_uint(const attn__json *j, size_t at, uint64_t max,
                    uint64_t *value);
int attn__json_number(const attn__json *j, size_t at, double *value);
int attn__json_bool(const attn__json *j, size_t at, int *value);
/* 1 if the value at `at` is null. */
int attn__json_is_null(const attn__json *j, size_t at);

/* The elements of the array at `at` one at a time, as attn__json_member:
 * *cursor starts at the array's index; 1 with *value, 0 after the last,
 * -1 if malformed. */
int attn__json_element(const attn__json *j, size_t *cursor, size_t *value);

#endif /* ATTN_MODEL_JSON_H */
