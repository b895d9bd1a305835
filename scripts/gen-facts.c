/*
 * gen-facts.c: writes web/lib/facts.js, the facts the JS API shares with
 * the C library, from the library's own tables: the status codes and their
 * text, the problem kinds and their fields, the trainer's tasks and
 * settings, the limits, the scale and mask constants of attn_options, and
 * the wasm32 layouts attention.js reads and writes
 * (src/kernels/wasm_layout.h). A
 * tool, not part of the library: it prints; the library never does.
 *
 *   make facts            (build/gen-facts > web/lib/facts.js)
 *
 * tests/wasm/facts.test.mjs runs it and fails when the committed facts.js
 * differs from what it writes.
 */
#include "attention.h"
#include "kernels/wasm_layout.h"
#include "problem/problem.h"

#include <stdio.h>
#include <string.h>

typedef struct named {
    const char *name;
    int value;
} named;

/* clang-format would break this macro's brace initializer apart. */
/* clang-format off */
#define NAMED(constant) {#constant, constant}
/* clang-format on */

/* In the order of their numbers: main checks that none is missing. */
static const named statuses[] = {
    NAMED(ATTN_OK),
    NAMED(ATTN_ERR_NULL),
    NAMED(ATTN_ERR_SIZE),
    NAMED(ATTN_ERR_SIZE_OVERFLOW),
    NAMED(ATTN_ERR_HEADS),
    NAMED(ATTN_ERR_OPTION),
    NAMED(ATTN_ERR_RANGE),
    NAMED(ATTN_ERR_NOT_FINITE),
    NAMED(ATTN_ERR_OVERFLOW_VALUE),
    NAMED(ATTN_ERR_NOMEM),
    NAMED(ATTN_ERR_INPUT),
    NAMED(ATTN_ERR_STATE),
    NAMED(ATTN_ERR_TOO_LARGE),
    NAMED(ATTN_ERR_KV_HEADS),
    NAMED(ATTN_ERR_HEAD_DIM),
    NAMED(ATTN_ERR_POSITION),
    NAMED(ATTN_ERR_CACHE_FULL),
    NAMED(ATTN_ERR_TOKEN),
    NAMED(ATTN_ERR_FORMAT),
};

static const named scale_kinds[] = {
    NAMED(ATTN_SCALE_INV_SQRT_DK),
    NAMED(ATTN_SCALE_NONE),
    NAMED(ATTN_SCALE_FACTOR),
};

static const named formats[] = {
    NAMED(ATTN_FORMAT_JSON),     NAMED(ATTN_FORMAT_TEXT),
    NAMED(ATTN_FORMAT_MARKDOWN), NAMED(ATTN_FORMAT_LATEX),
    NAMED(ATTN_FORMAT_STEPS),    NAMED(ATTN_FORMAT_STEP_OUTLINE),
};

static const named mask_kinds[] = {
    NAMED(ATTN_MASK_CAUSAL),  NAMED(ATTN_MASK_KEY_PADDING),
    NAMED(ATTN_MASK_CUSTOM),  NAMED(ATTN_MASK_LOCAL),
    NAMED(ATTN_MASK_STRIDED),
};

/* The JS names of a field's accepted types (problem.h's ATTN__* bits). */
static const named field_types[] = {
    {"tensor", ATTN__TENSOR},   {"number", ATTN__NUMBER},
    {"boolean", ATTN__BOOL},    {"string", ATTN__STRING},
    {"strings", ATTN__STRINGS},
};

#define COUNT(array) (sizeof array / sizeof array[0])

/* A JS string literal; the tables hold printable ASCII. */
static void put_string(const char *text)
{
    putchar('\'');
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\'' || *c == '\\') putchar('\\');
        putchar(*c);
    }
    putchar('\'');
}

static void put_named(const char *doc, const char *name, const named *table,
                      size_t count)
{
    printf("\n/** %s */\nexport const %s = {\n", doc, name);
    for (size_t i = 0; i < count; i++)
        printf("  %s: %d,\n", table[i].name, table[i].value);
    printf("};\n");
}

/* A list of the names that names(0), names(1), ... give until NULL. */
static void put_names(const char *doc, const char *name,
                      const char *(*names)(int))
{
    printf("\n/** %s */\nexport const %s = [\n", doc, name);
    for (int i = 0; names(i) != NULL; i++) {
        printf("  ");
        put_string(names(i));
        printf(",\n");
    }
    printf("];\n");
}

static int put_statuses(void)
{
    for (size_t i = 0; i < COUNT(statuses); i++)
        if (statuses[i].value != (int)i) {
            fprintf(stderr, "gen-facts: %s is %d, listed as number %zu\n",
                    statuses[i].name, statuses[i].value, i);
            return 1;
        }
    const char *unknown = attn_status_text(-1);
    if (strcmp(attn_status_text((int)COUNT(statuses)), unknown) != 0) {
        fprintf(stderr,
                "gen-facts: status %zu (\"%s\") has no name here: "
                "add it to statuses[]\n",
                COUNT(statuses), attn_status_text((int)COUNT(statuses)));
        return 1;
    }
    put_named("attn_status codes by name (src/attention.h); their numbers "
              "never change.",
              "STATUS", statuses, COUNT(statuses));
    printf("\n/** attn_status_text of each code, by number. */\n"
           "export const STATUS_TEXT = [\n");
    for (size_t i = 0; i < COUNT(statuses); i++) {
        printf("  ");
        put_string(attn_status_text((int)i));
        printf(",\n");
    }
    printf("];\n");
    return 0;
}

static int put_field(const attn__kind *kind, const attn__field *field)
{
    printf("    %s: [", field->name);
    unsigned left = field->types;
    for (size_t t = 0; t < COUNT(field_types); t++)
        if (field->types & (unsigned)field_types[t].value) {
            if (left != field->types) fputs(", ", stdout);
            put_string(field_types[t].name);
            left &= ~(unsigned)field_types[t].value;
        }
    printf("],\n");
    if (left == 0) return 0;
    fprintf(stderr,
            "gen-facts: %s.%s takes a type with no JS name: add it "
            "to field_types[]\n",
            kind->name, field->name);
    return 1;
}

static int put_kinds(void)
{
    put_names("The problem kinds (attn_problem_kind), in the library's order.",
              "KINDS", attn_problem_kind);
    printf("\n/** Each kind's fields (src/problem/problem.c) and the types a "
           "field takes. */\nexport const KIND_FIELDS = {\n");
    for (int i = 0; attn__kind_at(i) != NULL; i++) {
        const attn__kind *kind = attn__kind_at(i);
        printf("  %s: {\n", kind->name);
        for (int f = 0; f < kind->field_count; f++)
            if (put_field(kind, &kind->fields[f]) != 0) return 1;
        printf("  },\n");
    }
    printf("};\n");
    return 0;
}

#define PUT_OFFSET(js, member, offset, size) printf("  " #js ": %d,\n", offset);

static void put_layouts(void)
{
    printf("\n/** Byte sizes and field offsets in wasm32 memory "
           "(src/kernels/wasm_layout.h,\n * checked by the compiler in "
           "every WebAssembly build). */\n");
    printf("export const OPTIONS_LAYOUT = {\n  bytes: %d,\n",
           ATTN__WASM_OPTIONS_BYTES);
    ATTN__WASM_OPTIONS_FIELDS(PUT_OFFSET)
    printf("};\nexport const MALLINFO_LAYOUT = {\n  bytes: %d,\n",
           ATTN__WASM_MALLINFO_BYTES);
    ATTN__WASM_MALLINFO_FIELDS(PUT_OFFSET)
    printf("};\nexport const DECODER_CONFIG_LAYOUT = {\n  bytes: %d,\n",
           ATTN__WASM_DECODER_CONFIG_BYTES);
    ATTN__WASM_DECODER_CONFIG_FIELDS(PUT_OFFSET)
    printf("};\n");
}

int main(void)
{
    printf("// facts.js: what the JS API shares with the C library, written "
           "from the\n// library's own tables by scripts/gen-facts.c (`make "
           "facts`); do not edit.\n// tests/wasm/facts.test.mjs fails when "
           "it differs from what that writes.\n");
    if (put_statuses() != 0 || put_kinds() != 0) return 1;
    put_names("The formats a user names (attn_format_name), each at its "
              "number.",
              "FORMAT_NAMES", attn_format_name);
    put_names("The trainer's tasks (attn_trainer_task).", "TASKS",
              attn_trainer_task);
    put_names("The trainer's settings (attn_trainer_setting).",
              "TRAINER_SETTINGS", attn_trainer_setting);
    printf("\n/** Limits (attention.h). */\nexport const LIMITS = {\n"
           "  ATTN_PROBLEM_DEFAULT_MAX_BYTES: %zu,\n"
           "  ATTN_TRAINER_HELD_OUT: %d,\n};\n",
           ATTN_PROBLEM_DEFAULT_MAX_BYTES, ATTN_TRAINER_HELD_OUT);
    put_named("attn_scale_kind.", "SCALE", scale_kinds, COUNT(scale_kinds));
    put_named("attn_format.", "FORMAT", formats, COUNT(formats));
    put_named("The ATTN_MASK_* bits of attn_mask.kinds.", "MASK", mask_kinds,
              COUNT(mask_kinds));
    put_layouts();
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
