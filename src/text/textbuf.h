/*
 * textbuf.h: appending to a caller's fixed buffer the way snprintf
 * does: the text is truncated to the capacity (always NUL-terminated when
 * the capacity is not 0) while `length` keeps counting the full length, so
 * one pass with capacity 0 tells the caller how much to allocate.
 */
#ifndef ATTN_TEXTBUF_H
#define ATTN_TEXTBUF_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define ATTN__PRINTF_LIKE(format_index, first_arg) \
    __attribute__((format(printf, format_index, first_arg)))
#else
#define ATTN__PRINTF_LIKE(format_index, first_arg)
#endif

/* Where a streamed text's full buffer goes (attn_write in attention.h). */
typedef void (*attn__text_sink)(void *context, const char *bytes, size_t count);

typedef struct attn__text {
    char *buf; /* [cap] or NULL when cap is 0 */
    size_t cap;
    size_t length; /* full length written so far, without the NUL */
    /* Streamed (attn__text_init_stream): buf holds what the sink has not
     * had yet, from offset `sent` of the text; sink is NULL otherwise. */
    attn__text_sink sink;
    void *sink_context;
    size_t sent;
} attn__text;

/* Longest text attn__format_shortest or attn__format_rounded writes. */
enum { ATTN__NUMBER_CAP = 32 };

void attn__text_init(attn__text *text, char *buf, size_t cap);
/* A text that hands its bytes to sink, in order, whenever buf[cap] (cap >
 * 0) fills, and the rest at attn__text_flush: its length is unbounded. */
void attn__text_init_stream(attn__text *text, char *buf, size_t cap,
                            attn__text_sink sink, void *context);
void attn__text_flush(attn__text *text);
void attn__text_append(attn__text *text, const char *bytes, size_t count);
void attn__text_puts(attn__text *text, const char *string);
void attn__text_printf(attn__text *text, const char *format, ...)
    ATTN__PRINTF_LIKE(2, 3);
void attn__text_repeat(attn__text *text, const char *string, int times);
/* Appends string as a JSON string, quoted and escaped, leaving out the
 * bytes in skip (the walkthrough's label markers; "" for none). */
void attn__text_json_string(attn__text *text, const char *string,
                            const char *skip);
/* Appends n in decimal: what "%d" prints, without printf's cost, which
 * shows when a walkthrough writes hundreds of thousands of indices. */
void attn__text_int(attn__text *text, int n);

/* The shortest decimal that reads back as exactly x (x finite), so JSON
 * readers recover the same double, in %g's layout at precision 15, or 16
 * or 17 when it needs them ("0.1", "1e-05", "0.30000000000000004"); "-0"
 * for -0 (shortest.c). */
void attn__format_shortest(char out[ATTN__NUMBER_CAP], double x);

/* Numbers attn__format_shortest wrote, by their bits, in a table indexed by
 * a hash (a newer number takes an older one's slot): a walkthrough writes
 * each input many times over. All zero bytes is an empty cache. */
enum {
    ATTN__NUMBER_CACHE_BITS = 10,
    ATTN__NUMBER_CACHE_SLOTS = 1 << ATTN__NUMBER_CACHE_BITS
};
typedef struct attn__number_cache {
    uint64_t bits[ATTN__NUMBER_CACHE_SLOTS];
    char text[ATTN__NUMBER_CACHE_SLOTS][ATTN__NUMBER_CAP]; /* "" = empty */
} attn__number_cache;

/* attn__format_shortest(x), from the cache when it is there. */
const char *attn__cached_shortest(attn__number_cache *cache, double x);

/* x rounded to 4 decimals without trailing zeros ("0.7071", "1.09", "3");
 * "%.4g" for magnitudes below 5e-5 or from 1e9, where 4 decimals would
 * hide or bloat the value; "−∞" and "∞" for infinities. */
void attn__format_rounded(char out[ATTN__NUMBER_CAP], double x);

/* Display width of UTF-8 text: its code points, one column each, but for
 * control characters (the walkthrough's label marks), which take none. */
size_t attn__text_width(const char *string);

enum { ATTN__ESCAPED_CAP = 8 }; /* "\\u009b" and its NUL */

/* A control character at c (C0, DEL, or C1, which is C2 80..9F in UTF-8)
 * written visibly into escaped, as \x1b or \u009b: raw, a label's ESC
 * sequence would reach the reader's terminal (set its title, clear the
 * screen). Its length in bytes, or 0 when c is not one. */
size_t attn__control_at(const char *c, char escaped[ATTN__ESCAPED_CAP]);

/* The offset of the first byte of string[0..length) that starts no valid
 * UTF-8 character (a byte no character starts with, a continuation byte
 * alone, an overlong form, a surrogate, a code point past U+10FFFF, or a
 * character cut short); length when the whole text is valid. */
size_t attn__utf8_check(const char *string, size_t length);

#endif /* ATTN_TEXTBUF_H */
