/* The text buffer the walkthroughs and JSON are written into: appending
 * integers without printf gives what printf gives, truncating as it does. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "text/textbuf.h"

static void test_appended_integers_read_as_printf_writes_them(void **state)
{
    (void)state;
    static const int values[] = {0, 1, -1, 9, 10, -10, 99, 100, 12345,
                                 -67890, INT_MAX, INT_MIN, INT_MIN + 1};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char buf[32], expected[32];
        attn__text text;
        attn__text_init(&text, buf, sizeof buf);
        attn__text_puts(&text, "[");
        attn__text_int(&text, values[i]);
        attn__text_puts(&text, "]");
        const int length = snprintf(expected, sizeof expected, "[%d]", values[i]);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appended_integers_read_as_printf_writes_them),
        cmocka_unit_test(test_an_integer_past_the_end_is_cut_but_still_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
