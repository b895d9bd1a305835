/* format.c: attn_problem_format, the walkthrough layer's entry point: the
 * result of a run as JSON, or its walkthrough as text, Markdown or LaTeX. */
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
    if (format != ATTN_FORMAT_JSON && format != ATTN_FORMAT_TEXT &&
        format != ATTN_FORMAT_MARKDOWN && format != ATTN_FORMAT_LATEX)
        return attn__fail(problem, ATTN_ERR_OPTION,
                          "format: unknown format %d (0 JSON, 1 text, "
                          "2 Markdown, 3 LaTeX)", format);
    if (!problem->has_run)
        return attn__fail(problem, ATTN_ERR_STATE,
                          "format: no results yet; attn_problem_run must "
                          "succeed first");
    attn__text text;
    attn__text_init(&text, buf, cap);
    if (format == ATTN_FORMAT_JSON)
        attn__format_json(problem, &text);
    else
        attn__format_walkthrough(problem, format, &text);
    *length = text.length;
    return ATTN_OK;
}
