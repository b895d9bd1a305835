/* A model's files read from bytes: config.json with LlamaConfig's names,
 * and safetensors headers and data (F32, F16, BF16), including hostile
 * files: truncated at every byte, sizes that disagree, nesting too deep. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "attention.h"

/* ---- config.json ---- */

static const char llama_config[] =
    "{\n"
    "  \"architectures\": [\"LlamaForCausalLM\"],\n"
    "  \"bos_token_id\": 1,\n"
    "  \"hidden_act\": \"silu\",\n"
    "  \"hidden_size\": 64,\n"
    "  \"intermediate_size\": 172,\n"
    "  \"max_position_embeddings\": 256,\n"
    "  \"model_type\": \"llama\",\n"
    "  \"num_attention_heads\": 8,\n"
    "  \"num_hidden_layers\": 3,\n"
    "  \"num_key_value_heads\": 2,\n"
    "  \"rms_norm_eps\": 1e-05,\n"
    "  \"rope_scaling\": null,\n"
    "  \"rope_theta\": 500.0,\n"
    "  \"tie_word_embeddings\": true,\n"
    "  \"torch_dtype\": \"bfloat16\",\n"
    "  \"vocab_size\": 259\n"
    "}\n";

static int parse(attn_decoder_config *c, char *message, const char *json)
{
    return attn_decoder_config_parse(c, message, 200, json, strlen(json));
}

static void test_a_llama_config_reads_every_name(void **state)
{
    (void)state;
    attn_decoder_config c;
    char message[200] = "";
    assert_int_equal(parse(&c, message, llama_config), ATTN_OK);
    assert_int_equal(c.vocab_size, 259);
    assert_int_equal(c.hidden_size, 64);
    assert_int_equal(c.intermediate_size, 172);
    assert_int_equal(c.num_hidden_layers, 3);
    assert_int_equal(c.num_attention_heads, 8);
    assert_int_equal(c.num_key_value_heads, 2);
    assert_int_equal(c.max_position_embeddings, 256);
    assert_true(c.rope_theta == 500.0);
    assert_true(c.rms_norm_eps == 1e-5);
    assert_int_equal(c.tie_word_embeddings, 1);
    assert_string_equal(message, "");
}

static void
test_a_config_without_the_optional_names_takes_llamas_defaults(void **state)
{
    (void)state;
    attn_decoder_config c;
    char message[200];
    assert_int_equal(parse(&c, message,
                           "{\"vocab_size\": 10, \"hidden_size\": 8, "
                           "\"intermediate_size\": 16, \"num_hidden_layers\": "
                           "1, \"num_attention_heads\": 2}"),
                     ATTN_OK);
    assert_int_equal(c.num_key_value_heads, 2);
    assert_int_equal(c.max_position_embeddings, 2048);
    assert_true(c.rope_theta == 10000.0);
    assert_true(c.rms_norm_eps == 1e-6);
    assert_int_equal(c.tie_word_embeddings, 0);
}

/* llama_config with one "name": value replaced (or "" to remove it). */
static void edited(char *out, const char *name, const char *replacement)
{
    const char *at = strstr(llama_config, name);
    assert_non_null(at);
    const char *end = strchr(at, '\n');
    const size_t head = (size_t)(at - llama_config);
    memcpy(out, llama_config, head);
    out[head] = '\0';
    strcat(out, replacement);
    strcat(out, end);
}

static void expect_refused(const char *name, const char *replacement,
                           int status, const char *says)
{
    char json[1024], message[200] = "";
    attn_decoder_config c;
    edited(json, name, replacement);
    assert_int_equal(parse(&c, message, json), status);
    if (strstr(message, says) == NULL)
        fail_msg("message \"%s\" does not say \"%s\"", message, says);
}

static void test_a_config_names_what_is_wrong(void **state)
{
    (void)state;
    expect_refused("\"hidden_size\"", "\"bos\": 2,", ATTN_ERR_FORMAT,
                   "hidden_size is missing");
    expect_refused("\"hidden_act\"", "\"hidden_act\": \"gelu\",",
                   ATTN_ERR_FORMAT, "hidden_act must be \"silu\"");
    expect_refused("\"rope_scaling\"",
                   "\"rope_scaling\": {\"type\": \"linear\"},", ATTN_ERR_FORMAT,
                   "rope_scaling must be null");
    expect_refused("\"num_key_value_heads\"", "\"num_key_value_heads\": 3,",
                   ATTN_ERR_KV_HEADS,
                   "num_key_value_heads 3 does not divide num_attention_heads "
                   "8");
    expect_refused("\"num_attention_heads\"", "\"num_attention_heads\": 6,",
                   ATTN_ERR_HEADS, "6 does not divide hidden_size 64");
    expect_refused("\"hidden_size\"", "\"hidden_size\": 40,", ATTN_ERR_HEAD_DIM,
                   "head_dim (hidden_size / "
                   "num_attention_heads) is 5");
    expect_refused("\"hidden_size\"", "\"hidden_size\": 64.5,", ATTN_ERR_FORMAT,
                   "hidden_size must be a whole number");
    expect_refused("\"hidden_size\"", "\"hidden_size\": -64,", ATTN_ERR_FORMAT,
                   "hidden_size must be a whole number");
    expect_refused("\"vocab_size\"", "\"vocab_size\": 99999999999999999999",
                   ATTN_ERR_FORMAT, "vocab_size must be a whole number");
    expect_refused("\"rope_theta\"", "\"rope_theta\": 0,", ATTN_ERR_FORMAT,
                   "rope_theta must be a number above 0");
    expect_refused("\"tie_word_embeddings\"", "\"tie_word_embeddings\": 1,",
                   ATTN_ERR_FORMAT,
                   "tie_word_embeddings must be true or false");
    expect_refused("\"model_type\"", "\"head_dim\": 0,", ATTN_ERR_FORMAT,
                   "head_dim must be a whole number from 1");
    expect_refused("\"model_type\"", "\"head_dim\": 16,", ATTN_ERR_FORMAT,
                   "head_dim 16 is not hidden_size / num_attention_heads = 8");
    expect_refused("\"vocab_size\"", "\"vocab_size\": 259,", ATTN_ERR_FORMAT,
                   "not one well-formed JSON object");
}

static void
test_a_config_that_is_not_json_is_refused_at_every_length(void **state)
{
    (void)state;
    attn_decoder_config c;
    char message[200];
    const size_t full = strlen(llama_config);
    /* Every prefix up to the closing brace is cut off. */
    const size_t closing = (size_t)(strrchr(llama_config, '}') - llama_config);
    for (size_t length = 0; length <= closing; length++)
        assert_int_equal(attn_decoder_config_parse(&c, message, sizeof message,
                                                   llama_config, length),
                         ATTN_ERR_FORMAT);
    assert_int_equal(attn_decoder_config_parse(&c, NULL, 0, llama_config, full),
                     ATTN_OK);
    /* Nesting deeper than the reader goes is refused, not recursed into. */
    char deep[4096] = "{\"x\": ";
    for (int i = 0; i < 1000; i++) strcat(deep, "[");
    assert_int_equal(parse(&c, message, deep), ATTN_ERR_FORMAT);
    assert_int_equal(parse(&c, message, "[1, 2]"), ATTN_ERR_FORMAT);
    assert_int_equal(parse(&c, message, "{} {}"), ATTN_ERR_FORMAT);
    assert_int_equal(parse(&c, message, "{\"a\": \"\x01\"}"), ATTN_ERR_FORMAT);
    assert_int_equal(parse(&c, message, "{\"a\": 01}"), ATTN_ERR_FORMAT);
    assert_int_equal(parse(&c, message, "{\"a\": \"\\q\"}"), ATTN_ERR_FORMAT);
}

/* ---- safetensors ---- */

/* A file: 8-byte length, header, data; its length. */
static size_t make_file(unsigned char *file, const char *header,
                        const unsigned char *data, size_t data_size)
{
    const size_t n = strlen(header);
    for (int i = 0; i < 8; i++)
        file[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(file + 8, header, n);
    memcpy(file + 8 + n, data, data_size);
    return 8 + n + data_size;
}

static void put_f32(unsigned char *at, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 4; i++) at[i] = (unsigned char)(bits >> (8 * i));
}

static void put_u16(unsigned char *at, unsigned bits)
{
    at[0] = (unsigned char)(bits & 0xff);
    at[1] = (unsigned char)(bits >> 8);
}

/* F32 [2, 3] at 0..24, F16 [4] at 24..32, BF16 [2, 2] at 32..40. */
static const char good_header[] =
    "{\"__metadata__\": {\"format\": \"pt\"}, "
    "\"model.norm.weight\": {\"dtype\": \"F32\", \"shape\": [2, 3], "
    "\"data_offsets\": [0, 24]}, "
    "\"half\": {\"dtype\": \"F16\", \"shape\": [4], \"data_offsets\": [24, "
    "32]}, "
    "\"brain\": {\"dtype\": \"BF16\", \"shape\": [2, 2], \"data_offsets\": "
    "[32, 40]}}        ";

static size_t good_file(unsigned char *file, unsigned char *data)
{
    const float f32[6] = {1.0f, -2.5f, 0.1f, 3e38f, -1e-45f, 0.0f};
    for (int i = 0; i < 6; i++) put_f32(data + 4 * i, f32[i]);
    /* 1.5, the smallest subnormal 2^-24, 65504 (the largest), -0.5 */
    const unsigned f16[4] = {0x3e00, 0x0001, 0x7bff, 0xb800};
    for (int i = 0; i < 4; i++) put_u16(data + 24 + 2 * i, f16[i]);
    /* 1.0, -2.5, 3.140625, 2^-126 */
    const unsigned bf16[4] = {0x3f80, 0xc020, 0x4049, 0x0080};
    for (int i = 0; i < 4; i++) put_u16(data + 32 + 2 * i, bf16[i]);
    return make_file(file, good_header, data, 40);
}

static void test_safetensors_reads_f32_f16_and_bf16_exactly(void **state)
{
    (void)state;
    unsigned char file[1024], data[40];
    const size_t size = good_file(file, data);
    size_t tensors = 0;
    char message[200] = "";
    assert_int_equal(attn_safetensors_check(&tensors, message, 200, file, size),
                     ATTN_OK);
    assert_int_equal(tensors, 3);
    attn_tensor_info info;
    double values[6];
    assert_int_equal(attn_safetensors_find(&info, message, 200, file, size,
                                           "model.norm.weight"),
                     ATTN_OK);
    assert_int_equal(info.dtype, ATTN_DTYPE_F32);
    assert_int_equal(info.rank, 2);
    assert_int_equal(info.shape[0], 2);
    assert_int_equal(info.shape[1], 3);
    assert_int_equal(info.count, 6);
    assert_int_equal(info.bytes, 24);
    assert_int_equal(info.offset, 8 + strlen(good_header));
    assert_int_equal(attn_safetensors_read(values, file, size, &info), ATTN_OK);
    const double f32[6] = {
        1.0, -2.5, (double)0.1f, (double)3e38f, (double)-1e-45f, 0.0};
    assert_memory_equal(values, f32, sizeof f32);
    assert_int_equal(
        attn_safetensors_find(&info, message, 200, file, size, "half"),
        ATTN_OK);
    assert_int_equal(attn_safetensors_read(values, file, size, &info), ATTN_OK);
    const double f16[4] = {1.5, ldexp(1.0, -24), 65504.0, -0.5};
    assert_memory_equal(values, f16, sizeof f16);
    assert_int_equal(
        attn_safetensors_find(&info, message, 200, file, size, "brain"),
        ATTN_OK);
    assert_int_equal(info.dtype, ATTN_DTYPE_BF16);
    assert_int_equal(attn_safetensors_read(values, file, size, &info), ATTN_OK);
    const double bf16[4] = {1.0, -2.5, 3.140625, ldexp(1.0, -126)};
    assert_memory_equal(values, bf16, sizeof bf16);
}

static void expect_header_refused(const char *header, size_t data_size,
                                  const char *says)
{
    unsigned char file[4096], data[64] = {0};
    char message[200] = "";
    const size_t size = make_file(file, header, data, data_size);
    assert_int_equal(attn_safetensors_check(NULL, message, 200, file, size),
                     ATTN_ERR_FORMAT);
    if (strstr(message, says) == NULL)
        fail_msg("message \"%s\" does not say \"%s\"", message, says);
}

static void
test_a_safetensors_header_that_disagrees_with_its_data_is_refused(void **state)
{
    (void)state;
    expect_header_refused(
        "{\"w\": {\"dtype\": \"I64\", \"shape\": [1], \"data_offsets\": [0, "
        "8]}}",
        8, "tensor \"w\": dtype must be \"F32\", \"F16\" or \"BF16\"");
    expect_header_refused(
        "{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, "
        "12]}}",
        12, "its shape needs 2 values of 4 bytes, but data_offsets hold 12");
    expect_header_refused(
        "{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, "
        "16]}}",
        8, "data_offsets [0, 16] are not within the 8 bytes of data");
    expect_header_refused("{\"w\": {\"dtype\": \"F16\", \"shape\": [], "
                          "\"data_offsets\": [4, 2]}}",
                          8, "are not within");
    expect_header_refused("{\"w\": {\"dtype\": \"F16\", \"shape\": [1], "
                          "\"data_offsets\": [-2, 0]}}",
                          8, "data_offsets must be two whole numbers");
    expect_header_refused(
        "{\"w\": {\"dtype\": \"F16\", \"shape\": [2147483647, 2147483647, "
        "2147483647], \"data_offsets\": [0, 2]}}",
        8, "whose product fits");
    expect_header_refused("{\"w\": {\"dtype\": \"F16\", \"shape\": [1, 1, 1, "
                          "1, 1, 1, 1, 1, 1], \"data_offsets\": [0, 2]}}",
                          8, "shape must be at most 8");
    expect_header_refused("{\"w\": {\"dtype\": \"F16\", \"shape\": [1]}}", 8,
                          "needs dtype, shape and data_offsets");
    expect_header_refused("{\"w\": [1, 2]}", 8,
                          "is not described by an object");
    expect_header_refused("{\"w\": ", 8, "not one well-formed JSON object");
}

static void test_a_safetensors_file_cut_at_any_byte_is_refused(void **state)
{
    (void)state;
    unsigned char file[1024], data[40];
    const size_t size = good_file(file, data);
    char message[200];
    for (size_t cut = 0; cut < size; cut++)
        assert_int_equal(attn_safetensors_check(NULL, message, 200, file, cut),
                         ATTN_ERR_FORMAT);
    assert_int_equal(attn_safetensors_check(NULL, message, 200, file, 7),
                     ATTN_ERR_FORMAT);
    assert_non_null(strstr(message, "fewer than the 8 of its header's length"));
    /* A header length of 2^63: refused before anything is read past it. */
    memset(file, 0, 8);
    file[7] = 0x80;
    assert_int_equal(attn_safetensors_check(NULL, message, 200, file, size),
                     ATTN_ERR_FORMAT);
    assert_non_null(strstr(message,
                           "the header says it has 9223372036854775808 "
                           "bytes"));
}

static void
test_every_byte_of_a_header_changed_gives_an_answer_never_a_crash(void **state)
{
    (void)state;
    unsigned char file[1024], data[40];
    const size_t size = good_file(file, data);
    const unsigned char changes[] = {0,   '"', '{', '[', ']',
                                     '}', ',', '9', '\\'};
    size_t accepted = 0;
    for (size_t at = 8; at < 8 + strlen(good_header); at++)
        for (size_t c = 0; c < sizeof changes; c++) {
            const unsigned char saved = file[at];
            file[at] = changes[c];
            attn_tensor_info info;
            double values[6];
            const int status = attn_safetensors_find(&info, NULL, 0, file, size,
                                                     "half");
            if (status == ATTN_OK) {
                accepted++;
                assert_true(info.offset + info.bytes <= size);
                assert_true(info.count <= 6);
                const int read = attn_safetensors_read(values, file, size,
                                                       &info);
                assert_true(read == ATTN_OK || read == ATTN_ERR_NOT_FINITE);
            } else {
                assert_int_equal(status, ATTN_ERR_FORMAT);
            }
            file[at] = saved;
        }
    /* Some changes keep the file valid (a digit in a name, a padding byte). */
    assert_true(accepted > 0);
}

static void
test_a_missing_or_doubled_name_and_non_finite_data_are_refused(void **state)
{
    (void)state;
    unsigned char file[1024], data[40];
    size_t size = good_file(file, data);
    char message[200];
    attn_tensor_info info;
    double values[6];
    assert_int_equal(attn_safetensors_find(&info, message, 200, file, size,
                                           "lm_head.weight"),
                     ATTN_ERR_FORMAT);
    assert_string_equal(message, "safetensors: no tensor is named "
                                 "\"lm_head.weight\"");
    const unsigned char two[] = {0, 0x3c, 0, 0x3c};
    size = make_file(file,
                     "{\"w\": {\"dtype\": \"F16\", \"shape\": [1], "
                     "\"data_offsets\": [0, 2]}, \"w\": {\"dtype\": \"F16\", "
                     "\"shape\": [1], \"data_offsets\": [2, 4]}}",
                     two, 4);
    assert_int_equal(
        attn_safetensors_find(&info, message, 200, file, size, "w"),
        ATTN_ERR_FORMAT);
    assert_string_equal(message, "safetensors: two tensors are named \"w\"");
    size = good_file(file, data);
    put_u16(file + size - 8 - 8, 0x7e00); /* a NaN among the F16 values */
    assert_int_equal(
        attn_safetensors_find(&info, message, 200, file, size, "half"),
        ATTN_OK);
    assert_int_equal(attn_safetensors_read(values, file, size, &info),
                     ATTN_ERR_NOT_FINITE);
    info.offset = size - 2; /* an info that does not lie within the file */
    assert_int_equal(attn_safetensors_read(values, file, size, &info),
                     ATTN_ERR_FORMAT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_llama_config_reads_every_name),
        cmocka_unit_test(
            test_a_config_without_the_optional_names_takes_llamas_defaults),
        cmocka_unit_test(test_a_config_names_what_is_wrong),
        cmocka_unit_test(
            test_a_config_that_is_not_json_is_refused_at_every_length),
        cmocka_unit_test(test_safetensors_reads_f32_f16_and_bf16_exactly),
        cmocka_unit_test(
            test_a_safetensors_header_that_disagrees_with_its_data_is_refused),
        cmocka_unit_test(test_a_safetensors_file_cut_at_any_byte_is_refused),
        cmocka_unit_test(
            test_every_byte_of_a_header_changed_gives_an_answer_never_a_crash),
        cmocka_unit_test(
            test_a_missing_or_doubled_name_and_non_finite_data_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
