/*
 * fuzz_steps_json.c: libFuzzer target for the JSON a walkthrough is written
 * as, whatever its labels. The bytes choose a small scaledDotProduct
 * problem (n_q, n_k in 1..2, d_k = d_v = 2, small values), one format to
 * write it in (each input one format: a walkthrough takes milliseconds
 * under the sanitizers, so five per input made the target five times
 * slower without reaching more), whether to size the output first (the
 * two-call protocol, into a buffer of exactly that size) or to write it
 * into a large buffer at once, its token labels as arbitrary bytes (up to
 * 120) (tokens, or queryTokens and keyTokens) and sometimes a document
 * title from the same bytes; it runs the problem and formats it.
 *
 * Findings: a setter that accepts a label that is not valid UTF-8 or
 * refuses one that is (RFC 3629: no overlong forms, surrogates or code
 * points past U+10FFFF; this file decodes on its own, not with the
 * library's check); any format's output that is not valid UTF-8; the steps
 * JSON or the result JSON that cJSON does not parse as one JSON value
 * ending at the NUL; a label accepted, of up to 90 bytes (longer ones are
 * cut to fit a sentence), that does not come back verbatim
 * (but for U+0001 and U+0002, see found_in) inside some string of the
 * parsed steps; a title accepted that does not
 * come back as the steps' title.
 */
#include "attention.h"
#include "fuzz_reader.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Labels up to 120 bytes: longer than the walkthrough keeps whole in a
 * sentence (94 bytes: ATTN__LABEL_CAP less its marks and NUL), so a cut
 * inside a UTF-8 sequence would show; labels up to SHOWN_WHOLE must come
 * back. */
enum { MAX_TOKENS = 2, MAX_LABEL = 120, SHOWN_WHOLE = 90, D = 2 };

/* Valid UTF-8 by decoding each sequence and checking its code point. */
static int valid_utf8(const char *text, size_t length)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < length) {
        const unsigned lead = s[i];
        size_t extra;
        uint32_t point, least;
        if (lead < 0x80) {
            i++;
            continue;
        }
        if ((lead & 0xE0) == 0xC0) {
            extra = 1;
            point = lead & 0x1F;
            least = 0x80;
        } else if ((lead & 0xF0) == 0xE0) {
            extra = 2;
            point = lead & 0x0F;
            least = 0x800;
        } else if ((lead & 0xF8) == 0xF0) {
            extra = 3;
            point = lead & 0x07;
            least = 0x10000;
        } else
            return 0;
        if (length - i <= extra) return 0;
        for (size_t k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            point = point << 6 | (s[i + k] & 0x3F);
        }
        if (point < least || point > 0x10FFFF ||
            (point >= 0xD800 && point <= 0xDFFF))
            return 0;
        i += extra + 1;
    }
    return 1;
}

/* A label of up to MAX_LABEL arbitrary bytes (a NUL ends it early). */
static void take_label(reader *r, char label[MAX_LABEL + 1])
{
    const unsigned length = take_byte(r) % (MAX_LABEL + 1);
    for (unsigned i = 0; i < length; i++) label[i] = (char)take_byte(r);
    label[length] = '\0';
}

/* Does `label` occur inside some string of the parsed document? The
 * walkthrough marks labels in its sentences with U+0001 and U+0002, so a
 * label's own U+0001 and U+0002 come back as '?' (src/walkthrough/walker.c);
 * every other byte comes back as it was. */
static int found_in(const cJSON *item, const char *label)
{
    if (cJSON_IsString(item)) {
        char shown[MAX_LABEL + 1];
        size_t i = 0;
        for (; label[i] != '\0'; i++)
            shown[i] = label[i] == '\x01' || label[i] == '\x02' ? '?'
                                                                : label[i];
        shown[i] = '\0';
        return strstr(item->valuestring, shown) != NULL;
    }
    for (const cJSON *child = item->child; child != NULL; child = child->next)
        if (found_in(child, label)) return 1;
    return 0;
}

typedef struct labels {
    int count;
    char text[2 * MAX_TOKENS][MAX_LABEL + 1];
} labels;

/* Sets `field` to n labels from the input; records them when accepted. */
static void set_labels(reader *r, attn_problem *problem, const char *field,
                       int n, labels *accepted)
{
    char text[MAX_TOKENS][MAX_LABEL + 1];
    const char *values[MAX_TOKENS];
    int valid = 1;
    for (int i = 0; i < n; i++) {
        take_label(r, text[i]);
        values[i] = text[i];
        valid = valid && valid_utf8(text[i], strlen(text[i]));
    }
    const int status = attn_problem_set_strings(problem, field, n, values);
    check_status(status);
    check(status == (valid ? ATTN_OK : ATTN_ERR_INPUT));
    const char *error = attn_problem_error(problem);
    check(valid_utf8(error, strlen(error)));
    if (status == ATTN_OK)
        for (int i = 0; i < n; i++)
            memcpy(accepted->text[accepted->count++], text[i], MAX_LABEL + 1);
}

static void set_matrix(reader *r, attn_problem *problem, const char *field,
                       int rows)
{
    double values[MAX_TOKENS * D];
    for (int i = 0; i < rows * D; i++)
        values[i] = ((double)take_byte(r) - 128.0) / 32.0;
    const int dims[2] = {rows, D};
    check(attn_problem_set_tensor(problem, field, 2, dims, values) == ATTN_OK);
}

/* Room for any output of this target's problems (2 × 2, labels of up to
 * 120 bytes: tens of KB); an output that does not fit is a finding. */
static char room[1 << 18];

/* The output of one format, NUL-terminated: sized first into a block of
 * exactly that size (so AddressSanitizer sees a write past it), which the
 * caller frees; or written into `room` at once (NULL to free). */
static char *format(const attn_problem *problem, int which, int sized,
                    char **text, size_t *length)
{
    size_t again = 0;
    char *block = NULL;
    if (sized) {
        check(attn_problem_format(problem, which, NULL, 0, length) == ATTN_OK);
        block = malloc(*length + 1);
        check(block != NULL);
        check(attn_problem_format(problem, which, block, *length + 1, &again) ==
              ATTN_OK);
        check(again == *length);
        *text = block;
    } else {
        check(attn_problem_format(problem, which, room, sizeof room, length) ==
              ATTN_OK);
        check(*length < sizeof room);
        *text = room;
    }
    check(strlen(*text) == *length);
    check(valid_utf8(*text, *length));
    return block;
}

static cJSON *parse(const char *text, size_t length)
{
    const char *end = NULL;
    cJSON *json = cJSON_ParseWithLengthOpts(text, length + 1, &end, 1);
    check(json != NULL);
    return json;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    const unsigned shape = take_byte(&r);
    const unsigned sizes = shape & 0x0F;
    const int n_q = 1 + (int)(sizes % MAX_TOKENS);
    /* "tokens" labels queries and keys alike, so n_k = n_q then */
    const int shared = (shape & 0x10) != 0;
    const int n_k = shared ? n_q : 1 + (int)(sizes / MAX_TOKENS % MAX_TOKENS);
    const unsigned how = take_byte(&r);
    const int which = (int)((how & 0x7F) % (ATTN_FORMAT_STEPS + 1));
    const int sized = (how & 0x80) != 0;
    attn_problem *problem = NULL;
    check(attn_problem_create(&problem, "scaledDotProduct", NULL) == ATTN_OK);
    set_matrix(&r, problem, "q", n_q);
    set_matrix(&r, problem, "k", n_k);
    set_matrix(&r, problem, "v", n_k);
    labels accepted = {0};
    if (shared) {
        set_labels(&r, problem, "tokens", n_q, &accepted);
    } else {
        set_labels(&r, problem, "queryTokens", n_q, &accepted);
        set_labels(&r, problem, "keyTokens", n_k, &accepted);
    }
    char title[MAX_LABEL + 1] = "";
    if (shape & 0x20) {
        take_label(&r, title);
        const int status = attn_problem_set_document(problem, title, 0);
        check_status(status);
        if (!valid_utf8(title, strlen(title))) check(status == ATTN_ERR_INPUT);
        if (status != ATTN_OK) title[0] = '\0';
    }
    check(attn_problem_run(problem) == ATTN_OK);

    char *text = NULL;
    size_t length = 0;
    char *block = format(problem, which, sized, &text, &length);
    if (which == ATTN_FORMAT_JSON) cJSON_Delete(parse(text, length));
    if (which == ATTN_FORMAT_STEPS) {
        cJSON *steps = parse(text, length);
        for (int i = 0; i < accepted.count; i++)
            if (strlen(accepted.text[i]) <= SHOWN_WHOLE)
                check(found_in(steps, accepted.text[i]));
        if (title[0] != '\0') {
            const cJSON *got = cJSON_GetObjectItemCaseSensitive(steps, "title");
            check(cJSON_IsString(got) && strcmp(got->valuestring, title) == 0);
        }
        cJSON_Delete(steps);
    }
    free(block);
    attn_problem_destroy(problem);
    return 0;
}
