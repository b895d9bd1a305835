/* Status codes: stable numbers and an English text for each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "attention.h"

/* The numbers are part of the contract (the CLI and the JS API use them). */
static void test_status_codes_keep_their_numbers(void **state)
{
    (void)state;
    assert_int_equal(ATTN_OK, 0);
    assert_int_equal(ATTN_ERR_NULL, 1);
    assert_int_equal(ATTN_ERR_SIZE, 2);
    assert_int_equal(ATTN_ERR_SIZE_OVERFLOW, 3);
    assert_int_equal(ATTN_ERR_HEADS, 4);
    assert_int_equal(ATTN_ERR_OPTION, 5);
    assert_int_equal(ATTN_ERR_RANGE, 6);
    assert_int_equal(ATTN_ERR_NOT_FINITE, 7);
    assert_int_equal(ATTN_ERR_OVERFLOW_VALUE, 8);
    assert_int_equal(ATTN_ERR_NOMEM, 9);
    assert_int_equal(ATTN_ERR_INPUT, 10);
    assert_int_equal(ATTN_ERR_STATE, 11);
    assert_int_equal(ATTN_ERR_TOO_LARGE, 12);
    assert_int_equal(ATTN_ERR_KV_HEADS, 13);
    assert_int_equal(ATTN_ERR_HEAD_DIM, 14);
    assert_int_equal(ATTN_ERR_POSITION, 15);
    assert_int_equal(ATTN_ERR_CACHE_FULL, 16);
    assert_int_equal(ATTN_ERR_TOKEN, 17);
    assert_int_equal(ATTN_ERR_FORMAT, 18);
}

static void test_status_text_names_every_code(void **state)
{
    (void)state;
    const struct {
        int code;
        const char *text;
    } expected[] = {
        {ATTN_OK, "ok"},
        {ATTN_ERR_NULL, "a required pointer is NULL"},
        {ATTN_ERR_SIZE, "a size is zero or negative"},
        {ATTN_ERR_SIZE_OVERFLOW, "a product of sizes does not fit in size_t"},
        {ATTN_ERR_HEADS, "num_heads does not divide d_model"},
        {ATTN_ERR_OPTION, "an option has an unknown value"},
        {ATTN_ERR_RANGE, "a parameter is outside its range"},
        {ATTN_ERR_NOT_FINITE, "an input holds NaN or an infinity"},
        {ATTN_ERR_OVERFLOW_VALUE, "a computed value overflowed"},
        {ATTN_ERR_NOMEM, "an allocation failed"},
        {ATTN_ERR_INPUT, "a problem field is missing, unknown or misshapen"},
        {ATTN_ERR_STATE, "call out of order"},
        {ATTN_ERR_TOO_LARGE, "the call would need more bytes than its limit"},
        {ATTN_ERR_KV_HEADS,
         "num_key_value_heads does not divide num_attention_heads"},
        {ATTN_ERR_HEAD_DIM, "rotary position embeddings need an even head_dim"},
        {ATTN_ERR_POSITION,
         "a position is negative or not below max_position_embeddings"},
        {ATTN_ERR_CACHE_FULL,
         "the key/value cache has no room for the new tokens"},
        {ATTN_ERR_TOKEN, "a token id is negative or not below vocab_size"},
        {ATTN_ERR_FORMAT,
         "a model file is malformed or disagrees with its sizes"},
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        assert_string_equal(attn_status_text(expected[i].code),
                            expected[i].text);
}

static void test_status_texts_are_distinct(void **state)
{
    (void)state;
    for (int a = ATTN_OK; a <= ATTN_ERR_FORMAT; a++)
        for (int b = a + 1; b <= ATTN_ERR_FORMAT; b++)
            assert_string_not_equal(attn_status_text(a), attn_status_text(b));
}

static void test_status_text_of_an_unknown_code_says_unknown(void **state)
{
    (void)state;
    assert_string_equal(attn_status_text(-1), "unknown status");
    assert_string_equal(attn_status_text(ATTN_ERR_FORMAT + 1),
                        "unknown status");
    assert_string_equal(attn_status_text(1000000), "unknown status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_codes_keep_their_numbers),
        cmocka_unit_test(test_status_text_names_every_code),
        cmocka_unit_test(test_status_texts_are_distinct),
        cmocka_unit_test(test_status_text_of_an_unknown_code_says_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
