/* json_tree.c: JSON text into a tree of attn__jnode, strictly, counted
 * before it is built (json_tree.h). */
#include "problem/json_tree.h"

#include "problem/problem.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    NEAR_BEFORE = 12, /* bytes quoted before a JSON error */
    NEAR_AFTER = 8,   /* and after it */
    /* What the limit counts per node and per block: an upper bound of a
     * node's size and a block's header in a general allocator. */
    NODE_BYTES = 64,
    HEADER_BYTES = 2 * sizeof(void *)
};

_Static_assert(sizeof(attn__jnode) <= NODE_BYTES, "NODE_BYTES bounds a node");

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int
fail(char *error, size_t error_cap, int status, const char *format, ...)
{
    if (error_cap > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(error, error_cap, format, args);
        va_end(args);
    }
    return status;
}

const char *attn__jnode_describe(const attn__jnode *node)
{
    if (node == NULL) return "nothing";
    switch (node->type) {
    case ATTN__J_NULL: return "null";
    case ATTN__J_FALSE:
    case ATTN__J_TRUE: return "a boolean";
    case ATTN__J_NUMBER: return "a number";
    case ATTN__J_STRING: return "a string";
    case ATTN__J_ARRAY: return "an array";
    default: return "an object";
    }
}

const attn__jnode *attn__jnode_member(const attn__jnode *object,
                                      const char *key)
{
    if (object == NULL || object->type != ATTN__J_OBJECT) return NULL;
    for (const attn__jnode *m = object->child; m != NULL; m = m->next)
        if (strcmp(m->key, key) == 0) return m;
    return NULL;
}

/* Line and column (from 1, in bytes) of position `at` in text. */
static void line_and_column(const char *text, const char *at, int *line,
                            int *column)
{
    *line = 1;
    *column = 1;
    for (const char *c = text; c < at; c++) {
        if (*c == '\n') {
            (*line)++;
            *column = 1;
        } else {
            (*column)++;
        }
    }
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* ---- Counting and refusing before the tree is built ---- */

/* What the text holds: enough to bound the tree before it is built. */
typedef struct json_counts {
    size_t containers;   /* arrays and objects */
    size_t commas;       /* outside strings */
    size_t strings;      /* keys and values */
    size_t string_bytes; /* their text between the quotes */
} json_counts;

/* What a JSON reader might accept but a problem must not hold, found in
 * one pass over the text: a NUL byte, nesting deeper than
 * ATTN__JTREE_DEPTH and the escape \u0000 in a string (C's strings would
 * end there, so that "softmax\u0000junk" read as "softmax"). The same pass
 * counts what the tree will hold (*counts). */
static int scan(json_counts *counts, const char *text, size_t length,
                char *error, size_t error_cap)
{
    memset(counts, 0, sizeof *counts);
    int depth = 0, in_string = 0, line, column;
    size_t string_start = 0;
    for (size_t i = 0; i < length; i++) {
        const char c = text[i];
        if (c == '\0') {
            line_and_column(text, text + i, &line, &column);
            return fail(error, error_cap, ATTN_ERR_INPUT,
                        "invalid JSON at line %d, column %d: a NUL byte", line,
                        column);
        }
        if (in_string) {
            if (c == '"') {
                in_string = 0;
                counts->string_bytes += i - string_start;
            } else if (c == '\\' && i + 1 < length) {
                if (text[i + 1] == 'u' && i + 5 < length &&
                    strncmp(text + i + 2, "0000", 4) == 0) {
                    line_and_column(text, text + i, &line, &column);
                    return fail(error, error_cap, ATTN_ERR_INPUT,
                                "invalid input at line %d, column %d: "
                                "\\u0000 (a NUL character) in a string; "
                                "names and values must not contain one",
                                line, column);
                }
                if (text[i + 1] == '\0') continue; /* reported above */
                i++;                               /* the escaped character */
            }
        } else if (c == '"') {
            in_string = 1;
            string_start = i + 1;
            counts->strings++;
        } else if (c == ',') {
            counts->commas++;
        } else if (c == '[' || c == '{') {
            counts->containers++;
            if (++depth > ATTN__JTREE_DEPTH) {
                line_and_column(text, text + i, &line, &column);
                return fail(error, error_cap, ATTN_ERR_INPUT,
                            "invalid input at line %d, column %d: nested "
                            "deeper than %d levels (a problem needs at most "
                            "%d)",
                            line, column, ATTN__JTREE_DEPTH,
                            ATTN__MAX_RANK + 1);
            }
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    /* A string left open still gets its bytes (and its NUL) counted. */
    if (in_string) counts->string_bytes += length - string_start;
    return ATTN_OK;
}

static size_t add_bytes(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t times_bytes(size_t count, size_t each)
{
    return count > SIZE_MAX / each ? SIZE_MAX : count * each;
}

/* A node per value, at most: each array or object, each of its members
 * (one more than its commas, at most) and the root. */
static size_t node_count(const json_counts *counts)
{
    return add_bytes(
        add_bytes(times_bytes(counts->containers, 2), counts->commas), 1);
}

/* About how many bytes reading and parsing `length` bytes of JSON that
 * holds `counts` takes, at most (SIZE_MAX past it): the text as the caller
 * holds it, the terminated copy parsing reads, a node per value with a
 * block's header, and each string's bytes with a NUL and two headers (what
 * a reader allocating a block per string would take; this one takes less). */
static size_t parse_bytes(const json_counts *counts, size_t length)
{
    size_t bytes = times_bytes(length, 2);
    bytes = add_bytes(
        bytes, times_bytes(node_count(counts), NODE_BYTES + HEADER_BYTES));
    bytes = add_bytes(bytes, counts->string_bytes);
    return add_bytes(bytes, times_bytes(counts->strings, 1 + 2 * HEADER_BYTES));
}

/* ---- The parser ---- */

typedef struct parser {
    const char *text; /* [length + 1], NUL-terminated */
    size_t length;
    size_t at;
    attn__jnode *nodes;
    size_t used, capacity;
    char *pool; /* strings, one after another */
    size_t pool_used;
} parser;

static void skip_space(parser *p)
{
    while (p->at < p->length && is_space(p->text[p->at])) p->at++;
}

static unsigned hex4(const char *s, int *ok)
{
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        const char c = s[i];
        value <<= 4;
        if (c >= '0' && c <= '9')
            value |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            value |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            value |= (unsigned)(c - 'A' + 10);
        else
            *ok = 0;
    }
    return value;
}

static size_t put_utf8(char *out, unsigned code)
{
    if (code < 0x80) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

/* The string at p->at (its opening quote) into the pool; 0 on a mistake,
 * p->at then where it is. */
static const char *parse_string(parser *p)
{
    char *out = p->pool + p->pool_used;
    size_t n = 0;
    p->at++;
    while (p->at < p->length && p->text[p->at] != '"') {
        const char c = p->text[p->at];
        if (c != '\\') {
            out[n++] = c;
            p->at++;
            continue;
        }
        const char e = p->text[p->at + 1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e != '\0' && simple != NULL) {
            out[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            p->at += 2;
            continue;
        }
        int ok = e == 'u' && p->at + 6 <= p->length;
        unsigned code = ok ? hex4(p->text + p->at + 2, &ok) : 0;
        size_t escape = 6;
        if (ok && code >= 0xD800 && code <= 0xDBFF) {
            const char *low = p->text + p->at + 6;
            ok = p->at + 12 <= p->length && low[0] == '\\' && low[1] == 'u';
            const unsigned second = ok ? hex4(low + 2, &ok) : 0;
            ok = ok && second >= 0xDC00 && second <= 0xDFFF;
            code = 0x10000 + ((code - 0xD800) << 10) + (second - 0xDC00);
            escape = 12;
        } else if (code >= 0xDC00 && code <= 0xDFFF) {
            ok = 0;
        }
        if (!ok) return NULL;
        n += put_utf8(out + n, code);
        p->at += escape;
    }
    if (p->at >= p->length) return NULL;
    p->at++; /* the closing quote */
    out[n] = '\0';
    p->pool_used += n + 1;
    return out;
}

static int parse_number(parser *p, attn__jnode *node)
{
    const char *s = p->text + p->at;
    size_t i = 0;
    if (s[i] == '-') i++;
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (s[i] >= '0' && s[i] <= '9') i++;
    } else {
        return 0;
    }
    if (s[i] == '.') {
        if (!(s[++i] >= '0' && s[i] <= '9')) return 0;
        while (s[i] >= '0' && s[i] <= '9') i++;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-') i++;
        if (!(s[i] >= '0' && s[i] <= '9')) return 0;
        while (s[i] >= '0' && s[i] <= '9') i++;
    }
    node->type = ATTN__J_NUMBER;
    node->number = strtod(s, NULL);
    /* A whole number float64 rounds (more than 15 digits, unlike what
     * "%.0f" writes of the double it became) keeps its digits, for the
     * message that refuses it. */
    const size_t digits = i - (s[0] == '-');
    if (digits > 15 && digits < 400 && strcspn(s, ".eE") >= i) {
        char exact[400];
        snprintf(exact, sizeof exact, "%.0f", node->number);
        if (strlen(exact) != i || strncmp(exact, s, i) != 0) {
            node->string = s;
            node->count = (int)i;
        }
    }
    p->at += i;
    return 1;
}

static attn__jnode *new_node(parser *p)
{
    /* The scan's count bounds the nodes; a miscount fails, not overflows. */
    if (p->used == p->capacity) return NULL;
    attn__jnode *node = &p->nodes[p->used++];
    memset(node, 0, sizeof *node);
    return node;
}

static int parse_value(parser *p, attn__jnode *node);

/* The entries of the array or object at p->at, linked under node. */
static int parse_entries(parser *p, attn__jnode *node, int object)
{
    const char close = object ? '}' : ']';
    node->type = object ? ATTN__J_OBJECT : ATTN__J_ARRAY;
    p->at++;
    skip_space(p);
    if (p->text[p->at] == close) {
        p->at++;
        return 1;
    }
    attn__jnode **link = &node->child;
    for (;;) {
        attn__jnode *entry = new_node(p);
        if (entry == NULL) return 0;
        skip_space(p);
        if (object) {
            if (p->text[p->at] != '"') return 0;
            entry->key = parse_string(p);
            if (entry->key == NULL) return 0;
            skip_space(p);
            if (p->text[p->at] != ':') return 0;
            p->at++;
        }
        if (!parse_value(p, entry)) return 0;
        *link = entry;
        link = &entry->next;
        node->count++;
        skip_space(p);
        if (p->text[p->at] == ',') {
            p->at++;
            continue;
        }
        if (p->text[p->at] != close) return 0;
        p->at++;
        return 1;
    }
}

static int parse_value(parser *p, attn__jnode *node)
{
    skip_space(p);
    const char *s = p->text + p->at;
    switch (*s) {
    case '{': return parse_entries(p, node, 1);
    case '[': return parse_entries(p, node, 0);
    case '"':
        node->type = ATTN__J_STRING;
        node->string = parse_string(p);
        return node->string != NULL;
    case 't':
    case 'f':
    case 'n': {
        static const char *const words[] = {"null", "false", "true"};
        for (int w = 0; w < 3; w++) {
            const size_t n = strlen(words[w]);
            if (strncmp(s, words[w], n) == 0) {
                node->type = w; /* ATTN__J_NULL, _FALSE, _TRUE */
                p->at += n;
                return 1;
            }
        }
        return 0;
    }
    default: return parse_number(p, node);
    }
}

/* The first comma outside strings after a value that only white space
 * separates from a closing "}" or "]" (JSON allows none there); NULL if
 * none. */
static const char *trailing_comma(const char *text, size_t length)
{
    int in_string = 0;
    for (size_t i = 0; i < length; i++) {
        if (in_string) {
            if (text[i] == '\\')
                i++;
            else if (text[i] == '"')
                in_string = 0;
            continue;
        }
        if (text[i] == '"') in_string = 1;
        if (text[i] != ',') continue;
        size_t before = i;
        while (before > 0 && is_space(text[before - 1])) before--;
        if (before == 0 || strchr(",[{:", text[before - 1]) != NULL)
            continue; /* not after a value: some other mistake */
        size_t next = i + 1;
        while (next < length && is_space(text[next])) next++;
        if (next < length && (text[next] == '}' || text[next] == ']'))
            return text + i;
    }
    return NULL;
}

/* The message for text that is not JSON, the parser having stopped at
 * `end`. */
static int syntax_error(const char *text, size_t length, const char *end,
                        char *error, size_t error_cap)
{
    int line, column;
    const char *comma = trailing_comma(text, length);
    if (comma != NULL && comma < end) {
        line_and_column(text, comma, &line, &column);
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "invalid JSON at line %d, column %d: a comma after the "
                    "last entry, which JSON does not allow",
                    line, column);
    }
    const char *content_end = text + length; /* after the last non-space */
    while (content_end > text && is_space(content_end[-1])) content_end--;
    const int at_end = end >= content_end;
    if (at_end) end = content_end;
    line_and_column(text, end, &line, &column);
    const char *from = end -
                       (column - 1 < NEAR_BEFORE ? column - 1 : NEAR_BEFORE);
    while (from < end && ((unsigned char)*from & 0xC0) == 0x80) from++;
    if (at_end)
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "invalid JSON at the end of the input (line %d, column "
                    "%d), after \"%.*s\"",
                    line, column, (int)(end - from), from);
    size_t after = strcspn(end, "\r\n");
    if (after > NEAR_AFTER) after = NEAR_AFTER;
    while (after > 0 && ((unsigned char)end[after] & 0xC0) == 0x80) after--;
    return fail(error, error_cap, ATTN_ERR_INPUT,
                "invalid JSON at line %d, column %d, near \"%.*s\"", line,
                column, (int)(end + after - from), from);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ATTN_ERR_INPUT naming the first key some object of the tree repeats
 * (a lookup would see only one of them). where: the path to node, "" or
 * "x." for the members of x. */
static int check_duplicate_keys(const attn__jnode *node, const char *where,
                                const attn_allocator *allocator, char *error,
                                size_t error_cap)
{
    if (node->type == ATTN__J_OBJECT && node->count > 1) {
        const char **names = allocator->allocate(
            allocator->context, (size_t)node->count * sizeof *names);
        if (names == NULL)
            return fail(error, error_cap, ATTN_ERR_NOMEM, "out of memory");
        int n = 0;
        for (const attn__jnode *m = node->child; m != NULL; m = m->next)
            names[n++] = m->key;
        qsort(names, (size_t)n, sizeof *names, compare_names);
        int status = ATTN_OK;
        for (int i = 1; i < n && status == ATTN_OK; i++)
            if (strcmp(names[i - 1], names[i]) == 0)
                status = fail(error, error_cap, ATTN_ERR_INPUT,
                              "%s%s: the key appears more than once in %s",
                              where, names[i],
                              where[0] != '\0' ? "that object" : "the problem");
        allocator->release(allocator->context, names);
        if (status != ATTN_OK) return status;
    }
    for (const attn__jnode *child = node->child; child != NULL;
         child = child->next) {
        char path[160];
        if (node->type == ATTN__J_OBJECT)
            snprintf(path, sizeof path, "%s%s.", where, child->key);
        else
            snprintf(path, sizeof path, "%s", where);
        const int status = check_duplicate_keys(child, path, allocator, error,
                                                error_cap);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

void attn__jtree_free(attn__jtree *tree)
{
    if (tree->allocator != NULL) {
        if (tree->text != NULL)
            tree->allocator->release(tree->allocator->context, tree->text);
        if (tree->nodes != NULL)
            tree->allocator->release(tree->allocator->context, tree->nodes);
        if (tree->strings != NULL)
            tree->allocator->release(tree->allocator->context, tree->strings);
    }
    memset(tree, 0, sizeof *tree);
}

/* Parses the terminated copy `copy` into the tree's blocks. */
static int build(attn__jtree *tree, const char *copy, size_t length,
                 const json_counts *counts, char *error, size_t error_cap)
{
    const attn_allocator *allocator = tree->allocator;
    parser p = {copy, length, 0, NULL, 0, node_count(counts), NULL, 0};
    tree->nodes = allocator->allocate(allocator->context,
                                      times_bytes(p.capacity, sizeof *p.nodes));
    tree->strings = allocator->allocate(
        allocator->context,
        add_bytes(counts->string_bytes, counts->strings) + 1);
    if (tree->nodes == NULL || tree->strings == NULL)
        return fail(error, error_cap, ATTN_ERR_NOMEM, "out of memory");
    p.nodes = tree->nodes;
    p.pool = tree->strings;
    attn__jnode *root = new_node(&p);
    int ok = parse_value(&p, root);
    if (ok) {
        skip_space(&p);
        ok = p.at == length;
    }
    if (!ok) return syntax_error(copy, length, copy + p.at, error, error_cap);
    tree->root = root;
    return check_duplicate_keys(root, "", allocator, error, error_cap);
}

int attn__jtree_parse(attn__jtree *tree, char *error, const char *text,
                      const attn_allocator *allocator, const char *limit_option,
                      size_t length, size_t max_bytes, size_t error_cap)
{
    memset(tree, 0, sizeof *tree);
    tree->allocator = attn__allocator_or_default(allocator);
    if (tree->allocator == NULL || text == NULL ||
        (error == NULL && error_cap > 0))
        return ATTN_ERR_NULL;
    if (error_cap > 0) error[0] = '\0';
    size_t blank = 0;
    while (blank < length && is_space(text[blank])) blank++;
    if (blank == length)
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "empty input; expected a JSON problem object such as "
                    "{\"kind\": \"softmax\", \"x\": [1, 2, 3]}");
    json_counts counts;
    int status = scan(&counts, text, length, error, error_cap);
    if (status != ATTN_OK) return status;
    const size_t limit = max_bytes != 0 ? max_bytes
                                        : ATTN_PROBLEM_DEFAULT_MAX_BYTES;
    const size_t bytes = parse_bytes(&counts, length);
    if (bytes > limit)
        return fail(error, error_cap, ATTN_ERR_TOO_LARGE,
                    "the input's JSON (%zu bytes) would take about %zu bytes "
                    "to read and parse, more than the limit of %zu bytes; "
                    "use a smaller input or raise the limit (%s)",
                    length, bytes, limit,
                    limit_option != NULL ? limit_option : "--max-bytes");
    /* Numbers are read with strtod, which wants a NUL after them; the tree
     * keeps the copy for the digits of numbers float64 would round. */
    char *copy = length < SIZE_MAX ? tree->allocator->allocate(
                                         tree->allocator->context, length + 1)
                                   : NULL;
    if (copy == NULL)
        return fail(error, error_cap, ATTN_ERR_NOMEM, "out of memory");
    memcpy(copy, text, length);
    copy[length] = '\0';
    tree->text = copy;
    return build(tree, copy, length, &counts, error, error_cap);
}
