/* textbuf.c: snprintf-style appending and number formatting for output. */
#include "text/textbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void attn__text_init(attn__text *text, char *buf, size_t cap)
{
    text->buf = cap > 0 ? buf : NULL;
    text->cap = text->buf != NULL ? cap : 0;
    text->length = 0;
    text->sink = NULL;
    text->sink_context = NULL;
    text->sent = 0;
    if (text->cap > 0) text->buf[0] = '\0';
}

void attn__text_init_stream(attn__text *text, char *buf, size_t cap,
                            attn__text_sink sink, void *context)
{
    attn__text_init(text, buf, cap);
    text->sink = sink;
    text->sink_context = context;
}

void attn__text_flush(attn__text *text)
{
    if (text->sink == NULL || text->length == text->sent) return;
    text->sink(text->sink_context, text->buf, text->length - text->sent);
    text->sent = text->length;
}

/* A streamed text's append: what fits after the bytes held, else those
 * bytes flushed first, and bytes as long as the buffer straight through. */
static void stream_append(attn__text *text, const char *bytes, size_t count)
{
    if (text->length - text->sent + count > text->cap) attn__text_flush(text);
    if (count >= text->cap) {
        text->sink(text->sink_context, bytes, count);
        text->length += count;
        text->sent = text->length;
        return;
    }
    memcpy(text->buf + (text->length - text->sent), bytes, count);
    text->length += count;
}

void attn__text_append(attn__text *text, const char *bytes, size_t count)
{
    if (text->sink != NULL) {
        stream_append(text, bytes, count);
        return;
    }
    if (text->cap > 0 && text->length < text->cap - 1) {
        const size_t room = text->cap - 1 - text->length;
        const size_t copied = count < room ? count : room;
        memcpy(text->buf + text->length, bytes, copied);
        text->buf[text->length + copied] = '\0';
    }
    text->length += count;
}

void attn__text_puts(attn__text *text, const char *string)
{
    attn__text_append(text, string, strlen(string));
}

void attn__text_printf(attn__text *text, const char *format, ...)
{
    if (text->sink != NULL) { /* into the buffer's room, flushed first
                                 when it has too little */
        for (int attempt = 0; attempt < 2; attempt++) {
            const size_t held = text->length - text->sent;
            va_list args;
            va_start(args, format);
            const int needed = vsnprintf(text->buf + held, text->cap - held,
                                         format, args);
            va_end(args);
            if (needed < 0) return;
            /* Past a whole empty buffer a piece is cut to it: the pieces
             * are short (a name, a formula), the buffer 64 KiB. */
            if ((size_t)needed < text->cap - held || held == 0) {
                const size_t kept = (size_t)needed < text->cap - held
                                        ? (size_t)needed
                                        : text->cap - 1;
                text->length += kept;
                return;
            }
            attn__text_flush(text);
        }
        return;
    }
    const int writable = text->cap > 0 && text->length < text->cap - 1;
    va_list args;
    va_start(args, format);
    const int needed = vsnprintf(writable ? text->buf + text->length : NULL,
                                 writable ? text->cap - text->length : 0,
                                 format, args);
    va_end(args);
    if (needed > 0) text->length += (size_t)needed;
}

void attn__text_int(attn__text *text, int n)
{
    char digits[12]; /* "-2147483648" and its terminator */
    char *end = digits + sizeof digits, *start = end;
    /* In unsigned arithmetic -INT_MIN does not overflow. */
    unsigned magnitude = n < 0 ? 0u - (unsigned)n : (unsigned)n;
    do {
        *--start = (char)('0' + magnitude % 10u);
        magnitude /= 10u;
    } while (magnitude > 0u);
    if (n < 0) *--start = '-';
    attn__text_append(text, start, (size_t)(end - start));
}

void attn__text_repeat(attn__text *text, const char *string, int times)
{
    for (int i = 0; i < times; i++) attn__text_puts(text, string);
}

const char *attn__cached_shortest(attn__number_cache *cache, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    /* Fibonacci hashing: the top bits of bits × 2^64/φ. */
    const size_t slot = (size_t)((bits * UINT64_C(0x9E3779B97F4A7C15)) >>
                                 (64 - ATTN__NUMBER_CACHE_BITS));
    char *text = cache->text[slot];
    if (text[0] == '\0' || cache->bits[slot] != bits) {
        attn__format_shortest(text, x);
        cache->bits[slot] = bits;
    }
    return text;
}

/* Drops trailing zeros of a fixed-point number, and the point if bare. */
static void trim_fraction(char *number)
{
    char *point = strchr(number, '.');
    if (point == NULL) return;
    char *end = number + strlen(number);
    while (end > point + 1 && end[-1] == '0') end--;
    if (end == point + 1) end = point;
    *end = '\0';
}

void attn__format_rounded(char out[ATTN__NUMBER_CAP], double x)
{
    if (isinf(x)) {
        snprintf(out, ATTN__NUMBER_CAP, "%s", x < 0 ? "−∞" : "∞");
    } else if (x == 0.0) {
        snprintf(out, ATTN__NUMBER_CAP, "0"); /* also for -0 */
    } else if (fabs(x) < 5e-5 || fabs(x) >= 1e9 || isnan(x)) {
        snprintf(out, ATTN__NUMBER_CAP, "%.4g", x);
    } else {
        snprintf(out, ATTN__NUMBER_CAP, "%.4f", x);
        trim_fraction(out);
        if (strcmp(out, "-0") == 0) snprintf(out, ATTN__NUMBER_CAP, "0");
    }
}

size_t attn__text_width(const char *string)
{
    size_t width = 0;
    for (const unsigned char *c = (const unsigned char *)string; *c; c++)
        if ((*c & 0xC0) != 0x80 && *c >= 0x20) width++;
    return width;
}

size_t attn__utf8_check(const char *string, size_t length)
{
    const unsigned char *s = (const unsigned char *)string;
    size_t i = 0;
    while (i < length) {
        const unsigned lead = s[i];
        /* The sequence's length, and the range of its second byte that
         * rules out overlong forms, surrogates and code points past
         * U+10FFFF (RFC 3629, section 4). */
        size_t size;
        unsigned low = 0x80, high = 0xBF;
        if (lead < 0x80) {
            i++;
            continue;
        } else if (lead >= 0xC2 && lead <= 0xDF) {
            size = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            size = 3;
            if (lead == 0xE0) low = 0xA0;
            if (lead == 0xED) high = 0x9F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            size = 4;
            if (lead == 0xF0) low = 0x90;
            if (lead == 0xF4) high = 0x8F;
        } else {
            return i;
        }
        if (length - i < size || s[i + 1] < low || s[i + 1] > high) return i;
        for (size_t k = 2; k < size; k++)
            if ((s[i + k] & 0xC0) != 0x80) return i;
        i += size;
    }
    return length;
}

void attn__text_json_string(attn__text *text, const char *string,
                            const char *skip)
{
    attn__text_puts(text, "\"");
    const unsigned char *c = (const unsigned char *)string;
    while (*c) {
        /* The bytes up to the next one to escape or leave out, at once. */
        size_t run = 0;
        while (c[run] >= 0x20 && c[run] != '"' && c[run] != '\\' &&
               (skip[0] == '\0' || strchr(skip, c[run]) == NULL))
            run++;
        attn__text_append(text, (const char *)c, run);
        c += run;
        if (*c == '\0') break;
        const int left_out = strchr(skip, *c) != NULL;
        if (!left_out && (*c == '"' || *c == '\\'))
            attn__text_printf(text, "\\%c", *c);
        else if (!left_out)
            attn__text_printf(text, "\\u%04x", *c);
        c++;
    }
    attn__text_puts(text, "\"");
}

size_t attn__control_at(const char *c, char escaped[ATTN__ESCAPED_CAP])
{
    const unsigned char lead = (unsigned char)c[0];
    if (lead < 0x20 || lead == 0x7F) {
        snprintf(escaped, ATTN__ESCAPED_CAP, "\\x%02x", lead);
        return 1;
    }
    const unsigned char next = (unsigned char)c[1];
    if (lead == 0xC2 && next >= 0x80 && next <= 0x9F) {
        snprintf(escaped, ATTN__ESCAPED_CAP, "\\u%04x", next);
        return 2;
    }
    return 0;
}
