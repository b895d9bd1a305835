/* format.c: attn_problem_format, the walkthrough layer's entry point: the
 * result of a run as JSON, or its walkthrough as text, Markdown, LaTeX or
 * steps (JSON). */
#include "attention.h"
#include "walkthrough/walkthrough.h"

int attn_problem_format(const attn_problem *problem, int format, char *buf,
                        size_t cap, size_t *length)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    attn__clear_error(problem);
    if (length == NULL || (buf == NULL && cap > 0))
        return attn__fail(problem, ATTN_ERR_NULL,
                          "attn_problem_format: length must not be NULL, nor "
                          "buf when cap is not 0");
    if (format < ATTN_FORMAT_JSON || format > ATTN_FORMAT_STEPS)
        return attn__fail(problem, ATTN_ERR_OPTION,
                          "format: unknown format %d (0 JSON, 1 text, "
                          "2 Markdown, 3 LaTeX, 4 steps)", format);
    if (!problem->has_run)
        return attn__fail(problem, ATTN_ERR_STATE,
                          "format: no results yet; attn_problem_run must "
                          "succeed first");
    attn__text text;
    attn__text_init(&text, buf, cap);
    int status = ATTN_OK;
    if (format == ATTN_FORMAT_JSON)
        attn__format_json(problem, &text);
    else
        status = attn__format_walkthrough(problem, format, &text);
    *length = text.length;
    return status;
}
