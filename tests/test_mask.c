/* Mask kinds, entry by entry, their combination, and mask_check errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "attention.h"

/* Compares every entry of batch item b with a pattern written as rows of
 * '1' (may attend) and '0' (masked), one string per query. */
static void assert_pattern(const attn_mask *mask, int b, int n_q, int n_k,
                           const char *const *rows)
{
    for (int i = 0; i < n_q; i++) {
        assert_int_equal((int)strlen(rows[i]), n_k);
        for (int j = 0; j < n_k; j++) {
            const int expected = rows[i][j] == '1';
            if (attn_mask_allows(mask, n_k, b, i, j) != expected)
                fail_msg("b=%d i=%d j=%d: expected %d", b, i, j, expected);
        }
    }
}

static attn_mask mask_of(unsigned kinds)
{
    attn_mask mask = {kinds, NULL, NULL, 0, 1};
    return mask;
}

static void test_mask_none_allows_everything(void **state)
{
    (void)state;
    const attn_mask mask = mask_of(0);
    const char *const rows[] = {"111", "111"};
    assert_int_equal(attn_mask_check(&mask, 1, 2, 3), ATTN_OK);
    assert_pattern(&mask, 0, 2, 3, rows);
}

static void test_mask_causal_allows_keys_up_to_the_query(void **state)
{
    (void)state;
    const attn_mask mask = mask_of(ATTN_MASK_CAUSAL);
    const char *const rows[] = {"1000", "1100", "1110", "1111"};
    assert_int_equal(attn_mask_check(&mask, 1, 4, 4), ATTN_OK);
    assert_pattern(&mask, 0, 4, 4, rows);
}

static void test_mask_key_padding_depends_on_the_batch_item(void **state)
{
    (void)state;
    const int key_length[3] = {2, 0, 4};
    attn_mask mask = mask_of(ATTN_MASK_KEY_PADDING);
    mask.key_length = key_length;
    const char *const item0[] = {"1100", "1100"};
    const char *const item1[] = {"0000", "0000"};
    const char *const item2[] = {"1111", "1111"};
    assert_int_equal(attn_mask_check(&mask, 3, 2, 4), ATTN_OK);
    assert_pattern(&mask, 0, 2, 4, item0);
    assert_pattern(&mask, 1, 2, 4, item1);
    assert_pattern(&mask, 2, 2, 4, item2);
}

static void test_mask_custom_follows_the_allowed_matrix(void **state)
{
    (void)state;
    const unsigned char allowed[2 * 3] = {1, 0, 1, 0, 7, 0};
    attn_mask mask = mask_of(ATTN_MASK_CUSTOM);
    mask.allowed = allowed;
    const char *const rows[] = {"101", "010"};
    assert_int_equal(attn_mask_check(&mask, 2, 2, 3), ATTN_OK);
    assert_pattern(&mask, 0, 2, 3, rows);
    assert_pattern(&mask, 1, 2, 3, rows);
}

static void test_mask_local_window_1_is_a_band(void **state)
{
    (void)state;
    attn_mask mask = mask_of(ATTN_MASK_LOCAL);
    mask.window = 1;
    const char *const rows[] = {"11000", "11100", "01110", "00111", "00011"};
    assert_int_equal(attn_mask_check(&mask, 1, 5, 5), ATTN_OK);
    assert_pattern(&mask, 0, 5, 5, rows);
}

static void test_mask_local_window_0_is_the_diagonal(void **state)
{
    (void)state;
    attn_mask mask = mask_of(ATTN_MASK_LOCAL);
    mask.window = 0;
    const char *const rows[] = {"100", "010", "001"};
    assert_int_equal(attn_mask_check(&mask, 1, 3, 3), ATTN_OK);
    assert_pattern(&mask, 0, 3, 3, rows);
}

/* Sparse Transformer strided pattern with stride 3: the last 3 positions
 * (i - j < 3) plus every third earlier one ((i - j) % 3 == 0). */
static void test_mask_strided_3_keeps_recent_and_every_third_key(void **state)
{
    (void)state;
    attn_mask mask = mask_of(ATTN_MASK_STRIDED);
    mask.stride = 3;
    const char *const rows[] = {"1000000", "1100000", "1110000", "1111000",
                                "0111100", "0011110", "1001111"};
    assert_int_equal(attn_mask_check(&mask, 1, 7, 7), ATTN_OK);
    assert_pattern(&mask, 0, 7, 7, rows);
}

static void test_mask_strided_1_equals_causal(void **state)
{
    (void)state;
    attn_mask mask = mask_of(ATTN_MASK_STRIDED);
    mask.stride = 1;
    const char *const rows[] = {"1000", "1100", "1110", "1111"};
    assert_pattern(&mask, 0, 4, 4, rows);
}

static void test_mask_kinds_combine_by_and(void **state)
{
    (void)state;
    const int key_length[1] = {4};
    attn_mask mask = mask_of(ATTN_MASK_CAUSAL | ATTN_MASK_LOCAL |
                             ATTN_MASK_KEY_PADDING);
    mask.window = 1;
    mask.key_length = key_length;
    const char *const rows[] = {"10000", "11000", "01100", "00110", "00010"};
    assert_int_equal(attn_mask_check(&mask, 1, 5, 5), ATTN_OK);
    assert_pattern(&mask, 0, 5, 5, rows);
}

/* Cross-attention: 2 queries over 4 keys; causal still means j <= i. */
static void test_mask_causal_with_more_keys_than_queries(void **state)
{
    (void)state;
    const attn_mask mask = mask_of(ATTN_MASK_CAUSAL);
    const char *const rows[] = {"1000", "1100"};
    assert_int_equal(attn_mask_check(&mask, 1, 2, 4), ATTN_OK);
    assert_pattern(&mask, 0, 2, 4, rows);
}

static void test_mask_check_rejects_unknown_kinds(void **state)
{
    (void)state;
    const attn_mask mask = mask_of(ATTN_MASK_CAUSAL | (1u << 5));
    assert_int_equal(attn_mask_check(&mask, 1, 2, 2), ATTN_ERR_OPTION);
}

static void test_mask_check_rejects_missing_arrays(void **state)
{
    (void)state;
    const attn_mask padding = mask_of(ATTN_MASK_KEY_PADDING);
    const attn_mask custom = mask_of(ATTN_MASK_CUSTOM);
    assert_int_equal(attn_mask_check(NULL, 1, 2, 2), ATTN_ERR_NULL);
    assert_int_equal(attn_mask_check(&padding, 1, 2, 2), ATTN_ERR_NULL);
    assert_int_equal(attn_mask_check(&custom, 1, 2, 2), ATTN_ERR_NULL);
}

static void test_mask_check_rejects_parameters_out_of_range(void **state)
{
    (void)state;
    const int too_long[2] = {1, 4};
    const int negative[2] = {-1, 2};
    const int in_range[2] = {0, 3};
    attn_mask padding = mask_of(ATTN_MASK_KEY_PADDING);
    padding.key_length = too_long;
    assert_int_equal(attn_mask_check(&padding, 2, 2, 3), ATTN_ERR_RANGE);
    padding.key_length = negative;
    assert_int_equal(attn_mask_check(&padding, 2, 2, 3), ATTN_ERR_RANGE);
    padding.key_length = in_range;
    assert_int_equal(attn_mask_check(&padding, 2, 2, 3), ATTN_OK);

    attn_mask local = mask_of(ATTN_MASK_LOCAL);
    local.window = -1;
    assert_int_equal(attn_mask_check(&local, 1, 2, 2), ATTN_ERR_RANGE);

    attn_mask strided = mask_of(ATTN_MASK_STRIDED);
    strided.stride = 0;
    assert_int_equal(attn_mask_check(&strided, 1, 2, 2), ATTN_ERR_RANGE);
}

static void test_mask_check_rejects_empty_sizes(void **state)
{
    (void)state;
    const attn_mask mask = mask_of(ATTN_MASK_CAUSAL);
    assert_int_equal(attn_mask_check(&mask, 0, 2, 2), ATTN_ERR_SIZE);
    assert_int_equal(attn_mask_check(&mask, 1, -1, 2), ATTN_ERR_SIZE);
    assert_int_equal(attn_mask_check(&mask, 1, 2, 0), ATTN_ERR_SIZE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_none_allows_everything),
        cmocka_unit_test(test_mask_causal_allows_keys_up_to_the_query),
        cmocka_unit_test(test_mask_key_padding_depends_on_the_batch_item),
        cmocka_unit_test(test_mask_custom_follows_the_allowed_matrix),
        cmocka_unit_test(test_mask_local_window_1_is_a_band),
        cmocka_unit_test(test_mask_local_window_0_is_the_diagonal),
        cmocka_unit_test(test_mask_strided_3_keeps_recent_and_every_third_key),
        cmocka_unit_test(test_mask_strided_1_equals_causal),
        cmocka_unit_test(test_mask_kinds_combine_by_and),
        cmocka_unit_test(test_mask_causal_with_more_keys_than_queries),
        cmocka_unit_test(test_mask_check_rejects_unknown_kinds),
        cmocka_unit_test(test_mask_check_rejects_missing_arrays),
        cmocka_unit_test(test_mask_check_rejects_parameters_out_of_range),
        cmocka_unit_test(test_mask_check_rejects_empty_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
