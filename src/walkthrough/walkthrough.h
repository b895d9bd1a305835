/*
 * walkthrough.h: the walkthrough layer's private view, shared by its
 * formatters: a run's results as JSON (result_json.c) and its
 * walkthrough as steps (steps_*.c, through walker.c) rendered as text,
 * Markdown, LaTeX or JSON (render_doc.c, render_json.c), both
 * reached through attn_problem_format (format.c). It reads problems
 * through the problem layer; nothing below includes it.
 */
#ifndef ATTN_WALKTHROUGH_H
#define ATTN_WALKTHROUGH_H

#include "problem/problem.h"
#include "text/textbuf.h"

void attn__format_json(const attn_problem *problem, attn__text *text);
/* format: ATTN_FORMAT_TEXT, _MARKDOWN, _LATEX, _STEPS or _STEP_OUTLINE,
 * or ATTN__FORMAT_EQUATIONS: the equations of step `step` (from 1;
 * ATTN_ERR_RANGE past the last), which the other formats ignore
 * (walkthrough.c) */
enum { ATTN__FORMAT_EQUATIONS = -1 };
int attn__format_walkthrough(const attn_problem *problem, int format, int step,
                             attn__text *text);

#endif /* ATTN_WALKTHROUGH_H */
