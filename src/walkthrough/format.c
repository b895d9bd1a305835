/* format.c: attn_problem_format, the walkthrough layer's entry point: the
 * result of a run as JSON, or its walkthrough as text, Markdown, LaTeX or
 * steps (JSON, whole or as an outline and one step's equations). */
#include "attention.h"
#include "walkthrough/walkthrough.h"

/* Somewhere to write the length, and the text unless cap is 0. */
static int check_output(const attn_problem *problem, const char *caller,
                        const char *buf, size_t cap, const size_t *length)
{
    if (length == NULL || (buf == NULL && cap > 0))
        return attn__fail(problem, ATTN_ERR_NULL,
                          "%s: length must not be NULL, nor buf when cap is "
                          "not 0",
                          caller);
    return ATTN_OK;
}

static int check_run(const attn_problem *problem)
{
    if (!problem->has_run)
        return attn__fail(problem, ATTN_ERR_STATE,
                          "format: no results yet; attn_problem_run must "
                          "succeed first");
    return ATTN_OK;
}

const char *attn_format_name(int format)
{
    static const char *const names[] = {"json", "text", "markdown", "latex",
                                        "steps"};
    return format >= 0 && format < (int)(sizeof names / sizeof names[0])
               ? names[format]
               : NULL;
}

static int check_format(const attn_problem *problem, int format)
{
    if (format < ATTN_FORMAT_JSON || format > ATTN_FORMAT_STEP_OUTLINE)
        return attn__fail(problem, ATTN_ERR_OPTION,
                          "format: unknown format %d (0 JSON, 1 text, "
                          "2 Markdown, 3 LaTeX, 4 steps, 5 step outline)",
                          format);
    return check_run(problem);
}

static int write_format(const attn_problem *problem, int format,
                        attn__text *text)
{
    if (format == ATTN_FORMAT_JSON) {
        attn__format_json(problem, text);
        return ATTN_OK;
    }
    return attn__format_walkthrough(problem, format, 0, text);
}

int attn_problem_format(const attn_problem *problem, int format, char *buf,
                        size_t cap, size_t *length)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    attn__clear_error(problem);
    int status = check_output(problem, "attn_problem_format", buf, cap, length);
    if (status == ATTN_OK) status = check_format(problem, format);
    if (status != ATTN_OK) return status;
    attn__text text;
    attn__text_init(&text, buf, cap);
    status = write_format(problem, format, &text);
    *length = text.length;
    return status;
}

enum { STREAM_CHUNK = 64 * 1024 };

int attn_problem_format_to(const attn_problem *problem, int format,
                           attn_write write, void *context)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    attn__clear_error(problem);
    if (write == NULL)
        return attn__fail(problem, ATTN_ERR_NULL,
                          "attn_problem_format_to: write must not be NULL");
    int status = check_format(problem, format);
    if (status != ATTN_OK) return status;
    const attn_allocator *allocator = &problem->allocator;
    char *chunk = allocator->allocate(allocator->context, STREAM_CHUNK);
    if (chunk == NULL)
        return attn__fail(problem, ATTN_ERR_NOMEM,
                          "format: out of memory for a %d-byte buffer",
                          STREAM_CHUNK);
    attn__text text;
    attn__text_init_stream(&text, chunk, STREAM_CHUNK, write, context);
    status = write_format(problem, format, &text);
    if (status == ATTN_OK) attn__text_flush(&text);
    allocator->release(allocator->context, chunk);
    return status;
}

int attn_problem_format_equations(const attn_problem *problem, int step,
                                  char *buf, size_t cap, size_t *length)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    attn__clear_error(problem);
    int status = check_output(problem, "attn_problem_format_equations", buf,
                              cap, length);
    if (status == ATTN_OK) status = check_run(problem);
    if (status != ATTN_OK) return status;
    attn__text text;
    attn__text_init(&text, buf, cap);
    status = attn__format_walkthrough(problem, ATTN__FORMAT_EQUATIONS, step,
                                      &text);
    *length = text.length;
    return status;
}
