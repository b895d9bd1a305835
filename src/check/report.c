/* report.c: a check's report as JSON (the JS API's object) or as text,
 * Markdown or LaTeX for a person: the groups in order, each with its
 * sentence and its errata. Indices count from 0 in JSON and from 1 in
 * every text a person reads. */
#include "attention.h"
#include "check/check.h"
#include "walkthrough/latex.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* JSON has no infinity: a masked −∞ is null, as in results. */
static void json_number(attn__text *out, double x)
{
    char text[ATTN__NUMBER_CAP];
    if (!isfinite(x)) {
        attn__text_puts(out, "null");
        return;
    }
    attn__format_shortest(text, x);
    attn__text_puts(out, text);
}

static int cell_index(const attn__printed *table, size_t cell, int index[4])
{
    size_t rest = cell;
    for (int d = table->rank - 1; d >= 0; d--) {
        index[d] = (int)(rest % (size_t)table->dims[d]);
        rest /= (size_t)table->dims[d];
    }
    return table->rank;
}

/* {"field": ..., "index": [...] left open, for the caller's members. */
static void json_cell(attn__text *out, const attn_check *check,
                      const attn__erratum *e)
{
    const attn__printed *table = &check->tables[e->table];
    int index[4];
    const int rank = cell_index(table, e->cell, index);
    attn__text_puts(out, "{\"field\":");
    attn__text_json_string(out, table->key, "");
    attn__text_puts(out, ",\"index\":[");
    for (int d = 0; d < rank; d++)
        attn__text_printf(out, "%s%d", d ? "," : "", index[d]);
    attn__text_puts(out, "]");
}

static void report_json(const attn_check *check, attn__text *out)
{
    attn__text_printf(out, "{\"checked\":%zu,\"errata\":[", check->checked);
    for (int e = 0; e < check->errata_count; e++) {
        const attn__erratum *item = &check->errata[e];
        const attn__printed *table = &check->tables[item->table];
        if (e > 0) attn__text_puts(out, ",");
        json_cell(out, check, item);
        attn__text_puts(out, ",\"printed\":");
        json_number(out, table->values[item->cell]);
        attn__text_puts(out, ",\"exact\":");
        json_number(out, table->exact[item->cell]);
        attn__text_printf(
            out, ",\"decimals\":%d,\"step\":", table->decimals[item->cell]);
        const int step = table->step[item->cell];
        if (step == INT_MAX)
            attn__text_puts(out, "null");
        else
            attn__text_int(out, step / ATTN__REPEAT_SPAN - 1);
        attn__text_printf(out, ",\"group\":%d}", item->group);
    }
    attn__text_puts(out, "],\"groups\":[");
    for (int g = 0; g < check->group_count; g++) {
        const attn__group *group = &check->groups[g];
        if (g > 0) attn__text_puts(out, ",");
        attn__text_puts(out, "{\"cause\":");
        attn__text_json_string(out, attn__cause_name(group->cause), "");
        attn__text_puts(out, ",\"root\":");
        if (group->root >= 0) {
            json_cell(out, check, &check->errata[group->root]);
            attn__text_puts(out, "}");
        } else {
            attn__text_puts(out, "null");
        }
        if (group->cause == ATTN__MISPRINT) {
            /* The misprints themselves, then what follows from them. */
            for (int carried = 0; carried < 2; carried++) {
                attn__text_puts(out,
                                carried ? ",\"carried\":[" : ",\"roots\":[");
                int first = 1;
                for (int e = 0; e < check->errata_count; e++) {
                    const attn__erratum *item = &check->errata[e];
                    if (item->group != g || item->is_root == carried) continue;
                    if (!first) attn__text_puts(out, ",");
                    first = 0;
                    json_cell(out, check, item);
                    attn__text_puts(out, "}");
                }
                attn__text_puts(out, "]");
            }
        }
        if (group->cause == ATTN__ROUNDING) {
            attn__text_puts(out, ",\"intermediates\":[");
            int first = 1;
            for (int t = 0; t < check->table_count; t++) {
                if (!(group->intermediates >> t & 1)) continue;
                if (!first) attn__text_puts(out, ",");
                first = 0;
                attn__text_json_string(out, check->tables[t].key, "");
            }
            attn__text_puts(out, "]");
        }
        attn__text_puts(out, ",\"explanation\":");
        attn__text_json_string(out, group->explanation, "");
        attn__text_puts(out, "}");
    }
    attn__text_puts(out, "],\"unchecked\":[");
    for (int u = 0; u < check->unchecked_count; u++) {
        if (u > 0) attn__text_puts(out, ",");
        attn__text_json_string(out, check->unchecked[u], "");
    }
    attn__text_puts(out, "],\"decimalsInferred\":{");
    int listed = 0;
    for (int t = 0; t < check->table_count; t++) {
        const attn__printed *table = &check->tables[t];
        if (table->inferred < 0) continue;
        if (listed++ > 0) attn__text_puts(out, ",");
        attn__text_json_string(out, table->key, "");
        attn__text_printf(out, ":%d", table->inferred);
    }
    attn__text_puts(out, "}}");
}

/* ---- For a person ---- */

typedef struct style {
    void (*prose)(attn__text *out, const char *text);
    const char *heading_open, *heading_close; /* the report's title */
    const char *group_open, *group_close;     /* "1. Misprint" */
    const char *list_open, *item_open, *item_close, *list_close;
} style;

static void plain(attn__text *out, const char *text)
{
    attn__text_puts(out, text);
}

static void markdown(attn__text *out, const char *text)
{
    for (const char *c = text; *c; c++) {
        if (strchr("\\`*_[]<>#|", *c) != NULL) attn__text_puts(out, "\\");
        attn__text_append(out, c, 1);
    }
}

static const style styles[] = {
    [ATTN_FORMAT_TEXT] = {plain, "", "\n\n", "", "\n", "", "  - ", "\n", "\n"},
    [ATTN_FORMAT_MARKDOWN] = {markdown, "## ", "\n\n", "### ", "\n\n", "", "- ",
                              "\n", "\n"},
    [ATTN_FORMAT_LATEX] = {attn__latex_prose, "\\subsection*{", "}\n\n",
                           "\\subsubsection*{", "}\n\n", "\\begin{itemize}\n",
                           "  \\item ", "\n", "\\end{itemize}\n\n"},
};

static void line(attn__text *out, const style *s, const char *format, ...)
    ATTN__PRINTF_LIKE(3, 4);

static void line(attn__text *out, const style *s, const char *format, ...)
{
    char text[2 * ATTN__SENTENCE_CAP];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    s->prose(out, text);
}

static const char *const titles[ATTN__CAUSES] = {"Misprint",
                                                 "Rounding",
                                                 "No scaling by √d_k",
                                                 "Scaled by d_k",
                                                 "Softmax over columns",
                                                 "Q·K without the transpose",
                                                 "Mask after the softmax",
                                                 "Weights times Vᵀ"};

static void erratum_line(attn__text *out, const style *s,
                         const attn_check *check, int e)
{
    const attn__erratum *item = &check->errata[e];
    const attn__printed *table = &check->tables[item->table];
    char name_buf[256], exact[ATTN__NUMBER_CAP], printed[ATTN__PRINTED_CAP];
    attn__text name;
    attn__text_init(&name, name_buf, sizeof name_buf);
    attn__cell_name(&name, check, table, item->cell);
    attn__format_rounded(exact, table->exact[item->cell]);
    attn__printed_text(printed, table->values[item->cell],
                       table->decimals[item->cell]);
    const int step = table->step[item->cell];
    attn__text_puts(out, s->item_open);
    if (step == INT_MAX)
        line(out, s, "%s: printed %s, exact %s", name_buf, printed, exact);
    else
        line(out, s, "%s: printed %s, exact %s (step %d)", name_buf, printed,
             exact, step / ATTN__REPEAT_SPAN);
    attn__text_puts(out, s->item_close);
}

/* Which tables' decimals were inferred, since none were given: the check
 * never guesses silently. */
static void inferred_line(attn__text *out, const style *s,
                          const attn_check *check)
{
    char list[ATTN__CHECK_TABLES * (ATTN__KEY_CAP + 8)];
    size_t used = 0;
    for (int t = 0; t < check->table_count && used < sizeof list; t++) {
        const attn__printed *table = &check->tables[t];
        if (table->inferred < 0) continue;
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s %d",
                                 used > 0 ? ", " : "", table->key,
                                 table->inferred);
    }
    if (used == 0) return;
    line(out, s,
         "Decimals inferred (none were given; each table's numbers are read "
         "to the most decimals any of them shows): %s.",
         list);
    attn__text_puts(out, "\n\n");
}

static void report_doc(const attn_check *check, int format, attn__text *out)
{
    const style *s = &styles[format];
    attn__text_puts(out, s->heading_open);
    line(out, s, "Check of the printed numbers");
    attn__text_puts(out, s->heading_close);
    if (check->checked == 0) /* "all 0 hold" would read as a pass */
        line(out, s,
             "Nothing was checked: no printed number is of a result of "
             "this problem.");
    else if (check->errata_count == 0)
        line(out, s,
             "All %zu printed numbers hold: each is its exact value "
             "rounded to the decimals it was written with.",
             check->checked);
    else
        line(out, s,
             "%d of the %zu printed numbers %s the exact values by "
             "more than their decimals allow.",
             check->errata_count, check->checked,
             check->errata_count == 1 ? "differs from" : "differ from");
    attn__text_puts(out, "\n\n");
    inferred_line(out, s, check);
    for (int g = 0; g < check->group_count; g++) {
        const attn__group *group = &check->groups[g];
        attn__text_puts(out, s->group_open);
        line(out, s, "%d. %s", g + 1, titles[group->cause]);
        attn__text_puts(out, s->group_close);
        line(out, s, "%s", group->explanation);
        attn__text_puts(out, "\n\n");
        attn__text_puts(out, s->list_open);
        for (int e = 0; e < check->errata_count; e++)
            if (check->errata[e].group == g) erratum_line(out, s, check, e);
        attn__text_puts(out, s->list_close);
    }
    if (check->unchecked_count > 0) {
        char list[ATTN__CHECK_TABLES * ATTN__KEY_CAP];
        size_t used = 0;
        for (int u = 0; u < check->unchecked_count && used < sizeof list; u++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     u > 0 ? ", " : "", check->unchecked[u]);
        line(out, s,
             "Not checked (no result of this problem by that name): %s.", list);
        attn__text_puts(out, "\n");
    }
}

void attn__check_report(const attn_check *check, int format, attn__text *out)
{
    if (format == ATTN_FORMAT_JSON)
        report_json(check, out);
    else
        report_doc(check, format, out);
}
