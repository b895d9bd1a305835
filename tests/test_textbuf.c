/* The text buffer the walkthroughs and JSON are written into: appending
 * integers without printf gives what printf gives, truncating as it does;
 * a streamed text hands on the same bytes; numbers in their shortest form
 * read back as the same double and no shorter decimal does; and the UTF-8
 * check every string a problem takes goes through. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "text/textbuf.h"

static void test_appended_integers_read_as_printf_writes_them(void **state)
{
    (void)state;
    static const int values[] = {0,       1,       -1,         9,     10,
                                 -10,     99,      100,        12345, -67890,
                                 INT_MAX, INT_MIN, INT_MIN + 1};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char buf[32], expected[32];
        attn__text text;
        attn__text_init(&text, buf, sizeof buf);
        attn__text_puts(&text, "[");
        attn__text_int(&text, values[i]);
        attn__text_puts(&text, "]");
        const int length = snprintf(expected, sizeof expected, "[%d]",
                                    values[i]);
        assert_string_equal(buf, expected);
        assert_int_equal(text.length, (size_t)length);
    }
}

static void test_an_integer_past_the_end_is_cut_but_still_counted(void **state)
{
    (void)state;
    char buf[4];
    attn__text text;
    attn__text_init(&text, buf, sizeof buf);
    attn__text_int(&text, -123456);
    assert_string_equal(buf, "-12");
    assert_int_equal(text.length, 7);
}

/* Each text and the offset of the first byte that starts no valid
 * character (its length when all are valid), from RFC 3629's table of
 * well-formed sequences. */
static void
test_a_json_string_is_quoted_escaped_and_skips_the_given_bytes(void **state)
{
    (void)state;
    char buf[64];
    attn__text text;
    attn__text_init(&text, buf, sizeof buf);
    attn__text_json_string(&text,
                           "a\"b\\c\x01"
                           "d\n\xc3\xa9",
                           "\x01");
    assert_string_equal(buf, "\"a\\\"b\\\\cd\\u000a\xc3\xa9\"");
    attn__text_init(&text, buf, sizeof buf);
    attn__text_json_string(&text, "\x01", "");
    assert_string_equal(buf, "\"\\u0001\"");
}

static void test_utf8_check_finds_the_first_bad_sequence(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t bad;
    } cases[] = {
        {"", 0},
        {"cat", 3},
        {"caf\xc3\xa9", 5},                  /* é, U+00E9 */
        {"\xe2\x82\xac 5", 5},               /* €, U+20AC */
        {"\xf0\x9d\x84\x9e", 4},             /* 𝄞, U+1D11E */
        {"\xef\xbf\xbf\xf4\x8f\xbf\xbf", 7}, /* U+FFFF and U+10FFFF */
        {"\xed\x9f\xbf", 3},     /* U+D7FF, the last before the surrogates */
        {"\xff\xfe", 0},         /* bytes no character starts with */
        {"ab\x80", 2},           /* a continuation byte alone */
        {"\xc0\xaf", 0},         /* '/' overlong in 2 bytes */
        {"\xc1\xbf", 0},         /* U+007F overlong */
        {"\xe0\x80\xaf", 0},     /* '/' overlong in 3 bytes */
        {"\xf0\x8f\xbf\xbf", 0}, /* U+FFFF overlong in 4 bytes */
        {"x\xed\xa0\x80", 1},    /* U+D800, a surrogate */
        {"x\xed\xbf\xbf", 1},    /* U+DFFF */
        {"\xf4\x90\x80\x80", 0}, /* U+110000, past the last */
        {"\xf5\x80\x80\x80", 0},
        {"ok\xe2\x82", 2},   /* € cut short at the end */
        {"\xe2\x28\xa1", 0}, /* ( where a continuation goes */
        {"\xc3\xa9\xc3", 2}, /* é then a lead byte alone */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const size_t got = attn__utf8_check(cases[i].text,
                                            strlen(cases[i].text));
        if (got != cases[i].bad)
            fail_msg("case %zu: bad byte at %zu, expected %zu", i, got,
                     cases[i].bad);
    }
}

/* Every piece a streamed text hands on, joined. */
typedef struct joined {
    char text[512];
    size_t length;
    size_t pieces;
} joined;

static void join(void *context, const char *bytes, size_t count)
{
    joined *all = context;
    assert_true(all->length + count < sizeof all->text);
    memcpy(all->text + all->length, bytes, count);
    all->length += count;
    all->text[all->length] = '\0';
    all->pieces++;
}

/* Appends, printf and integers through a buffer of 16 bytes: an appended
 * piece longer than the buffer goes straight through (a printf piece is
 * at most the buffer). */
static void write_sample(attn__text *text)
{
    attn__text_puts(text, "[");
    for (int i = 0; i < 12; i++) {
        attn__text_int(text, i * 1001);
        attn__text_printf(text, "%s", i < 11 ? "," : "]");
    }
    attn__text_puts(text, "a piece longer than the buffer");
    attn__text_printf(text, "<%s>", "a printf");
}

static void
test_a_streamed_text_hands_on_the_bytes_of_the_whole_text(void **state)
{
    (void)state;
    char whole[512], chunk[16];
    attn__text text;
    attn__text_init(&text, whole, sizeof whole);
    write_sample(&text);
    joined all = {.length = 0};
    attn__text streamed;
    attn__text_init_stream(&streamed, chunk, sizeof chunk, join, &all);
    write_sample(&streamed);
    attn__text_flush(&streamed);
    assert_string_equal(all.text, whole);
    assert_int_equal(streamed.length, text.length);
    assert_true(all.pieces > 1);
}

/* The significant digits of a shortest form: its digits but for leading
 * zeros and the zeros a fixed-point form pads with ("519629630821520"). */
static int significant_digits(const char *number)
{
    int count = 0, leading = 1, zeros = 0;
    for (const char *c = number; *c != '\0' && *c != 'e'; c++) {
        if (*c < '0' || *c > '9' || (*c == '0' && leading)) continue;
        leading = 0;
        count++;
        zeros = *c == '0' ? zeros + 1 : 0;
    }
    return count - zeros;
}

static void
test_the_shortest_form_reads_back_and_no_shorter_one_does(void **state)
{
    (void)state;
    static const struct {
        double x;
        const char *text;
    } known[] = {{0.1, "0.1"},
                 {0.1 + 0.2, "0.30000000000000004"},
                 {1e-5, "1e-05"},
                 {1e15, "1e+15"},
                 {123456789012345678.0, "1.2345678901234568e+17"},
                 {5e-324, "5e-324"}, /* %.17g: 4.9406564584124654e-324 */
                 {1.7976931348623157e308, "1.7976931348623157e+308"},
                 {-0.0, "-0"},
                 {0.0, "0"},
                 {100.0, "100"},
                 {0.00012345, "0.00012345"},
                 {-2.5e-7, "-2.5e-07"}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char out[ATTN__NUMBER_CAP];
        attn__format_shortest(out, known[i].x);
        assert_string_equal(out, known[i].text);
    }
    /* Random bit patterns (xorshift64): each reads back, and the nearest
     * decimal with one digit fewer does not. */
    uint64_t bits = 88172645463325252u;
    for (int i = 0; i < 200000; i++) {
        bits ^= bits << 13;
        bits ^= bits >> 7;
        bits ^= bits << 17;
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x)) continue;
        char out[ATTN__NUMBER_CAP], shorter[40];
        attn__format_shortest(out, x);
        if (strtod(out, NULL) != x) fail_msg("%s is not %a", out, x);
        const int digits = significant_digits(out);
        if (digits < 2) continue;
        snprintf(shorter, sizeof shorter, "%.*e", digits - 2, x);
        if (strtod(shorter, NULL) == x)
            fail_msg("%s reads back too, shorter than %s", shorter, out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appended_integers_read_as_printf_writes_them),
        cmocka_unit_test(test_an_integer_past_the_end_is_cut_but_still_counted),
        cmocka_unit_test(
            test_a_json_string_is_quoted_escaped_and_skips_the_given_bytes),
        cmocka_unit_test(test_utf8_check_finds_the_first_bad_sequence),
        cmocka_unit_test(
            test_a_streamed_text_hands_on_the_bytes_of_the_whole_text),
        cmocka_unit_test(
            test_the_shortest_form_reads_back_and_no_shorter_one_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
