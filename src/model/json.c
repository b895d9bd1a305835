/* json.c: the bounded JSON reader of json.h. */
#include "model/json.h"

#include <stdlib.h>
#include <string.h>

size_t attn__json_space(const attn__json *j, size_t at)
{
    while (at < j->n && (j->s[at] == ' ' || j->s[at] == '\t' ||
                         j->s[at] == '\n' || j->s[at] == '\r'))
        at++;
    return at;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string from its opening quote: *end just past the closing one. */
static int skip_string(const attn__json *j, size_t at, size_t *end)
{
    if (at >= j->n || j->s[at] != '"') return 0;
    for (size_t i = at + 1; i < j->n; i++) {
        const unsigned char c = (unsigned char)j->s[i];
        if (c == '"') {
            *end = i + 1;
            return 1;
        }
        if (c < 0x20) return 0;
        if (c != '\\') continue;
        if (++i >= j->n) return 0;
        if (j->s[i] == 'u') {
            if (j->n - i < 5) return 0;
            for (size_t h = 1; h <= 4; h++)
                if (!is_hex(j->s[i + h])) return 0;
            i += 4;
        } else if (strchr("\"\\/bfnrt", j->s[i]) == NULL || j->s[i] == 0) {
            return 0;
        }
    }
    return 0;
}

/* A number as JSON's grammar has it: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
static int skip_number(const attn__json *j, size_t at, size_t *end)
{
    size_t i = at;
    if (i < j->n && j->s[i] == '-') i++;
    if (i >= j->n || !is_digit(j->s[i])) return 0;
    if (j->s[i] == '0')
        i++;
    else
        while (i < j->n && is_digit(j->s[i])) i++;
    if (i < j->n && j->s[i] == '.') {
        if (++i >= j->n || !is_digit(j->s[i])) return 0;
        while (i < j->n && is_digit(j->s[i])) i++;
    }
    if (i < j->n && (j->s[i] == 'e' || j->s[i] == 'E')) {
        if (++i < j->n && (j->s[i] == '+' || j->s[i] == '-')) i++;
        if (i >= j->n || !is_digit(j->s[i])) return 0;
        while (i < j->n && is_digit(j->s[i])) i++;
    }
    *end = i;
    return 1;
}

static int skip_literal(const attn__json *j, size_t at, const char *word,
                        size_t *end)
{
    const size_t length = strlen(word);
    if (j->n - at < length || memcmp(j->s + at, word, length) != 0) return 0;
    *end = at + length;
    return 1;
}

static int skip_value(const attn__json *j, size_t at, size_t *end, int depth);

/* An object or array from its opening bracket. */
static int skip_container(const attn__json *j, size_t at, size_t *end,
                          int depth)
{
    if (depth >= ATTN__JSON_DEPTH) return 0;
    const int object = j->s[at] == '{';
    const char close = object ? '}' : ']';
    size_t i = attn__json_space(j, at + 1);
    if (i < j->n && j->s[i] == close) {
        *end = i + 1;
        return 1;
    }
    for (;;) {
        if (object) {
            if (!skip_string(j, i, &i)) return 0;
            i = attn__json_space(j, i);
            if (i >= j->n || j->s[i] != ':') return 0;
            i++;
        }
        if (!skip_value(j, i, &i, depth + 1)) return 0;
        i = attn__json_space(j, i);
        if (i >= j->n) return 0;
        if (j->s[i] == close) {
            *end = i + 1;
            return 1;
        }
        if (j->s[i] != ',') return 0;
        i = attn__json_space(j, i + 1);
    }
}

static int skip_value(const attn__json *j, size_t at, size_t *end, int depth)
{
    at = attn__json_space(j, at);
    if (at >= j->n) return 0;
    switch (j->s[at]) {
    case '{':
    case '[': return skip_container(j, at, end, depth);
    case '"': return skip_string(j, at, end);
    case 't': return skip_literal(j, at, "true", end);
    case 'f': return skip_literal(j, at, "false", end);
    case 'n': return skip_literal(j, at, "null", end);
    default: return skip_number(j, at, end);
    }
}

int attn__json_skip(const attn__json *j, size_t at, size_t *end)
{
    return skip_value(j, at, end, 0);
}

int attn__json_is_object(const attn__json *j)
{
    const size_t at = attn__json_space(j, 0);
    size_t end;
    return at < j->n && j->s[at] == '{' && attn__json_skip(j, at, &end) &&
           attn__json_space(j, end) == j->n;
}

/* The next item of a container whose items have been checked by
 * attn__json_skip: *cursor is at its opening bracket or at the comma or
 * closing bracket after the last item read. */
static int next_item(const attn__json *j, size_t *cursor, char open,
                     size_t *item)
{
    size_t i = attn__json_space(j, *cursor);
    if (i >= j->n) return -1;
    const char close = open == '{' ? '}' : ']';
    if (j->s[i] == close) return 0;
    if (j->s[i] != open && j->s[i] != ',') return -1;
    i = attn__json_space(j, i + 1);
    if (i < j->n && j->s[i] == close) return 0;
    *item = i;
    return 1;
}

int attn__json_member(const attn__json *j, size_t *cursor, size_t *key,
                      size_t *key_end, size_t *value)
{
    size_t at, end;
    const int found = next_item(j, cursor, '{', &at);
    if (found != 1) return found;
    if (!skip_string(j, at, &end)) return -1;
    *key = at + 1;
    *key_end = end - 1;
    at = attn__json_space(j, end);
    if (at >= j->n || j->s[at] != ':') return -1;
    *value = attn__json_space(j, at + 1);
    if (!attn__json_skip(j, *value, &end)) return -1;
    *cursor = end;
    return 1;
}

int attn__json_element(const attn__json *j, size_t *cursor, size_t *value)
{
    size_t end;
    const int found = next_item(j, cursor, '[', value);
    if (found != 1) return found;
    if (!attn__json_skip(j, *value, &end)) return -1;
    *cursor = end;
    return 1;
}

int attn__json_key_is(const attn__json *j, size_t key, size_t key_end,
                      const char *name)
{
    const size_t length = strlen(name);
    return key_end - key == length && memcmp(j->s + key, name, length) == 0;
}

int attn__json_string(const attn__json *j, size_t at, size_t *start,
                      size_t *end)
{
    size_t past;
    if (!skip_string(j, at, &past)) return 0;
    *start = at + 1;
    *end = past - 1;
    return 1;
}

int attn__json_uint(const attn__json *j, size_t at, uint64_t max,
                    uint64_t *value)
{
    size_t end;
    if (at >= j->n || !is_digit(j->s[at]) || !skip_number(j, at, &end))
        return 0;
    uint64_t v = 0;
    for (size_t i = at; i < end; i++) {
        if (!is_digit(j->s[i])) return 0; /* a fraction or an exponent */
        const uint64_t digit = (uint64_t)(j->s[i] - '0');
        if (v > (max - digit) / 10) return 0;
        v = v * 10 + digit;
    }
    *value = v;
    return 1;
}

int attn__json_number(const attn__json *j, size_t at, double *value)
{
    size_t end;
    char copy[64];
    if (at >= j->n || !skip_number(j, at, &end) || end - at >= sizeof copy)
        return 0;
    memcpy(copy, j->s + at, end - at);
    copy[end - at] = '\0';
    *value = strtod(copy, NULL);
    return 1;
}

int attn__json_bool(const attn__json *j, size_t at, int *value)
{
    size_t end;
    if (at < j->n && skip_literal(j, at, "true", &end)) {
        *value = 1;
        return 1;
    }
    if (at < j->n && skip_literal(j, at, "false", &end)) {
        *value = 0;
        return 1;
    }
    return 0;
}

int attn__json_is_null(const attn__json *j, size_t at)
{
    size_t end;
    return at < j->n && skip_literal(j, at, "null", &end);
}
