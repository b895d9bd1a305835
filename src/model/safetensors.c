/* safetensors.c: a safetensors file's header checked against the file,
 * one tensor found by name, and its values read as doubles. */
#include "model/json.h"
#include "model/model.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* Names in messages are cut to this many bytes. */
enum { NAME_SHOWN = 80 };

static size_t dtype_size(int dtype)
{
    return dtype == ATTN_DTYPE_F32 ? 4 : 2;
}

/* The header: its JSON and where the data after it begin. */
typedef struct header {
    attn__json json;
    size_t data, data_size; /* the data's offset in the file and length */
} header;

static int read_header(header *h, attn__text *text, const unsigned char *file,
                       size_t size)
{
    if (size < 8)
        return attn__model_fail(text,
                                "safetensors: the file has %zu bytes, fewer "
                                "than the 8 of its header's length",
                                size);
    uint64_t length = 0;
    for (int i = 7; i >= 0; i--) length = length << 8 | file[i];
    if (length > (uint64_t)(size - 8))
        return attn__model_fail(text,
                                "safetensors: the header says it has %llu "
                                "bytes, but only %zu follow its length",
                                (unsigned long long)length, size - 8);
    h->json.s = (const char *)file + 8;
    h->json.n = (size_t)length;
    h->data = 8 + (size_t)length;
    h->data_size = size - h->data;
    if (!attn__json_is_object(&h->json))
        return attn__model_fail(text, "safetensors: the header is not one "
                                      "well-formed JSON object");
    return ATTN_OK;
}

static int read_dtype(int *dtype, const attn__json *j, size_t value)
{
    size_t start, end;
    if (!attn__json_string(j, value, &start, &end)) return 0;
    const char *names[] = {"F32", "F16", "BF16"};
    for (int d = 0; d < 3; d++)
        if (attn__json_key_is(j, start, end, names[d])) {
            *dtype = d;
            return 1;
        }
    return 0;
}

static int read_shape(attn_tensor_info *info, const attn__json *j, size_t value)
{
    size_t cursor = value, item;
    int found;
    info->rank = 0;
    info->count = 1;
    if (j->s[value] != '[') return 0;
    while ((found = attn__json_element(j, &cursor, &item)) == 1) {
        uint64_t dim;
        if (info->rank == ATTN_TENSOR_MAX_RANK ||
            !attn__json_uint(j, item, INT_MAX, &dim))
            return 0;
        info->shape[info->rank++] = (int)dim;
        if (dim != 0 && info->count > SIZE_MAX / dim) return 0;
        info->count *= (size_t)dim;
    }
    return found == 0;
}

static int read_offsets(uint64_t offsets[2], const attn__json *j, size_t value)
{
    size_t cursor = value, item;
    int n = 0, found;
    if (j->s[value] != '[') return 0;
    while ((found = attn__json_element(j, &cursor, &item)) == 1)
        if (n == 2 || !attn__json_uint(j, item, UINT64_MAX, &offsets[n++]))
            return 0;
    return found == 0 && n == 2;
}

/* One tensor's entry, checked against the data. */
static int read_entry(attn_tensor_info *info, attn__text *text, const header *h,
                      size_t key, size_t key_end, size_t value)
{
    const attn__json *j = &h->json;
    const int shown = (int)(key_end - key < NAME_SHOWN ? key_end - key
                                                       : NAME_SHOWN);
    const char *name = j->s + key;
    size_t cursor = value, k, k_end, v;
    int found, has = 0;
    uint64_t offsets[2] = {0, 0};
    if (j->s[value] != '{')
        return attn__model_fail(text,
                                "safetensors: tensor \"%.*s\" is not "
                                "described by an object",
                                shown, name);
    while ((found = attn__json_member(j, &cursor, &k, &k_end, &v)) == 1) {
        if (attn__json_key_is(j, k, k_end, "dtype")) {
            if (!read_dtype(&info->dtype, j, v))
                return attn__model_fail(text,
                                        "safetensors: tensor \"%.*s\": dtype "
                                        "must be \"F32\", \"F16\" or \"BF16\"",
                                        shown, name);
            has |= 1;
        } else if (attn__json_key_is(j, k, k_end, "shape")) {
            if (!read_shape(info, j, v))
                return attn__model_fail(
                    text,
                    "safetensors: tensor \"%.*s\": shape must be at most %d "
                    "whole numbers up to %d whose product fits in memory",
                    shown, name, ATTN_TENSOR_MAX_RANK, INT_MAX);
            has |= 2;
        } else if (attn__json_key_is(j, k, k_end, "data_offsets")) {
            if (!read_offsets(offsets, j, v))
                return attn__model_fail(text,
                                        "safetensors: tensor \"%.*s\": "
                                        "data_offsets must be two whole "
                                        "numbers [begin, end]",
                                        shown, name);
            has |= 4;
        }
    }
    if (found < 0 || has != 7)
        return attn__model_fail(text,
                                "safetensors: tensor \"%.*s\" needs dtype, "
                                "shape and data_offsets",
                                shown, name);
    if (offsets[0] > offsets[1] || offsets[1] > h->data_size)
        return attn__model_fail(
            text,
            "safetensors: tensor \"%.*s\": data_offsets [%llu, %llu] are not "
            "within the %zu bytes of data",
            shown, name, (unsigned long long)offsets[0],
            (unsigned long long)offsets[1], h->data_size);
    const size_t element = dtype_size(info->dtype);
    if (info->count > SIZE_MAX / element ||
        offsets[1] - offsets[0] != info->count * element)
        return attn__model_fail(
            text,
            "safetensors: tensor \"%.*s\": its shape needs %zu values of %zu "
            "bytes, but data_offsets hold %llu bytes",
            shown, name, info->count, element,
            (unsigned long long)(offsets[1] - offsets[0]));
    info->offset = h->data + (size_t)offsets[0];
    info->bytes = info->count * element;
    return ATTN_OK;
}

/* Checks every entry; *info = the one named `name` (NULL: none wanted),
 * *named = how many have that name, *tensors = how many there are. */
static int walk(attn_tensor_info *info, int *named, size_t *tensors,
                attn__text *text, const unsigned char *file, size_t size,
                const char *name)
{
    header h;
    int status = read_header(&h, text, file, size);
    if (status != ATTN_OK) return status;
    size_t cursor = attn__json_space(&h.json, 0), key, key_end, value;
    int found;
    *named = 0;
    *tensors = 0;
    while ((found = attn__json_member(&h.json, &cursor, &key, &key_end,
                                      &value)) == 1) {
        if (attn__json_key_is(&h.json, key, key_end, "__metadata__")) continue;
        attn_tensor_info entry;
        status = read_entry(&entry, text, &h, key, key_end, value);
        if (status != ATTN_OK) return status;
        ++*tensors;
        if (name != NULL && attn__json_key_is(&h.json, key, key_end, name)) {
            *info = entry;
            ++*named;
        }
    }
    return found == 0 ? ATTN_OK
                      : attn__model_fail(text, "safetensors: the header is "
                                               "not well-formed");
}

int attn_safetensors_check(size_t *tensors, char *message, size_t cap,
                           const unsigned char *file, size_t size)
{
    attn__text text;
    attn__text_init(&text, message, cap);
    if (file == NULL) return ATTN_ERR_NULL;
    int named;
    size_t count;
    const int status = walk(NULL, &named, &count, &text, file, size, NULL);
    if (status == ATTN_OK && tensors != NULL) *tensors = count;
    return status;
}

int attn_safetensors_find(attn_tensor_info *info, char *message, size_t cap,
                          const unsigned char *file, size_t size,
                          const char *name)
{
    attn__text text;
    attn__text_init(&text, message, cap);
    if (info == NULL || file == NULL || name == NULL) return ATTN_ERR_NULL;
    int named;
    size_t count;
    const int status = walk(info, &named, &count, &text, file, size, name);
    if (status != ATTN_OK || named == 1) return status;
    return attn__model_fail(&text,
                            named == 0 ? "safetensors: no tensor is named "
                                         "\"%.*s\""
                                       : "safetensors: two tensors are named "
                                         "\"%.*s\"",
                            NAME_SHOWN, name);
}

/* binary16 to double, exactly: subnormals, infinities and NaN too. */
static double from_f16(unsigned bits)
{
    const int exponent = (int)(bits >> 10 & 0x1f);
    const double sign = bits & 0x8000 ? -1.0 : 1.0;
    const double mantissa = (double)(bits & 0x3ff);
    if (exponent == 0) return sign * ldexp(mantissa, -24);
    if (exponent == 31) return mantissa != 0.0 ? NAN : sign * INFINITY;
    return sign * ldexp(1024.0 + mantissa, exponent - 25);
}

static double from_f32_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return (double)f;
}

int attn_safetensors_read(double *out, const unsigned char *file, size_t size,
                          const attn_tensor_info *info)
{
    if (out == NULL || file == NULL || info == NULL) return ATTN_ERR_NULL;
    if (info->dtype < ATTN_DTYPE_F32 || info->dtype > ATTN_DTYPE_BF16 ||
        info->count > SIZE_MAX / dtype_size(info->dtype) ||
        info->bytes != info->count * dtype_size(info->dtype) ||
        info->offset > size || info->bytes > size - info->offset)
        return ATTN_ERR_FORMAT;
    const unsigned char *p = file + info->offset;
    for (size_t i = 0; i < info->count; i++) {
        if (info->dtype == ATTN_DTYPE_F32) {
            const unsigned char *b = p + 4 * i;
            out[i] = from_f32_bits((uint32_t)b[0] | (uint32_t)b[1] << 8 |
                                   (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
        } else {
            const unsigned bits = (unsigned)p[2 * i] | (unsigned)p[2 * i + 1]
                                                           << 8;
            out[i] = info->dtype == ATTN_DTYPE_F16
                         ? from_f16(bits)
                         : from_f32_bits((uint32_t)bits << 16);
        }
        if (!isfinite(out[i])) return ATTN_ERR_NOT_FINITE;
    }
    return ATTN_OK;
}
