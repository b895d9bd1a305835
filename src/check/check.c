/* check.c: attn_check_run and attn_check_format: the printed numbers
 * (printed.c) against a problem's exact results.
 * A printed number p written with D decimals is an erratum when the exact
 * value e does not round to it: |p − e| > 0.5·10^-D + 1e-12, so that exact
 * ties (0.625 printed 0.63) are not errata (tests/vectors/README.md). Each
 * erratum is then explained, in this order: by a named slip that gives the
 * printed tables (slips.c), as a misprint or carried from one (the printed
 * numbers put through the walkthrough's own equations give it: it follows
 * from an earlier printed number), or as rounding. */
#include "attention.h"
#include "check/check.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double attn__slack(int decimals)
{
    return 0.5 * pow(10.0, -decimals) + 1e-12;
}

/* Flat offset of ref in a tensor of this shape. */
static size_t offset_of(const attn__ref *ref, const int *dims)
{
    size_t flat = 0;
    for (int d = 0; d < ref->rank; d++)
        flat = flat * (size_t)dims[d] + (size_t)ref->index[d];
    return flat;
}

/* The exact value of a cell, from the results (or, for terms, which are
 * not a result, from the walkthrough's equations: arith, NaN if absent). */
static double exact_of(const attn_check *check, const attn__arith *arith,
                       const attn__printed *table, size_t cell)
{
    int rank, dims[3], step;
    const double *data;
    if (attn_problem_result(check->problem, table->base, &rank, dims, &data) !=
        ATTN_OK)
        return attn__arith_value(arith, table, cell, &step);
    attn__ref ref = attn__cell_ref(table, cell);
    const size_t at = offset_of(&ref, dims);
    switch (table->transform) {
    case ATTN__PERCENT: return 100.0 * data[at];
    case ATTN__EXP: return exp(data[at]);
    case ATTN__SUM: {
        double sum = 0.0;
        for (int j = 0; j < dims[rank - 1]; j++)
            sum += exp(data[at + (size_t)j]);
        return sum;
    }
    default: return data[at];
    }
}

static int is_erratum(double printed, double exact, int decimals)
{
    if (isinf(printed) || isinf(exact)) return printed != exact;
    return fabs(printed - exact) > attn__slack(decimals);
}

/* Off by at most one unit of the last printed digit. */
static int within_rounding(double printed, double exact, int decimals)
{
    return isfinite(printed) && isfinite(exact) &&
           fabs(printed - exact) <= 1.5 * pow(10.0, -decimals) + 1e-12;
}

/* Within a unit of the last printed digit, and close enough to the
 * rounding boundary that rounding explains it: to be printed one unit
 * off, the number its author rounded must have crossed the boundary
 * between the exact value's rounding and the printed one, and a few
 * percent of the value is as far as unprinted rounded intermediates move
 * it. Without that, a whole number one off (2 printed as 3, a unit of 1)
 * would pass as rounding. */
static int rounds_to(double printed, double exact, int decimals)
{
    const double past_boundary = fabs(printed - exact) -
                                 0.5 * pow(10.0, -decimals);
    return within_rounding(printed, exact, decimals) &&
           past_boundary <= ATTN__ROUNDING_DRIFT * fabs(exact) + 1e-12;
}

/* Printed as it follows from the printed numbers before it (own): within
 * its rounding, and within as much again as those numbers moved it from
 * the exact value (an author who kept more digits than printed). A number
 * whose inputs are all exact (own is the exact value) follows from
 * nothing when it is off. */
static int carried_from_printed(double printed, double own, double exact,
                                int decimals)
{
    if (!isfinite(own) || !isfinite(printed)) return 0;
    const double slack = attn__slack(decimals);
    const double moved = isfinite(exact) ? fabs(own - exact) : slack;
    return fabs(own - printed) <= slack + (moved < slack ? moved : slack);
}

static const attn__printed *table_of(const attn_check *check,
                                     const attn__erratum *e)
{
    return &check->tables[e->table];
}

static int erratum_order(const void *a, const void *b, const attn_check *check)
{
    const attn__erratum *x = a, *y = b;
    const int sx = table_of(check, x)->step[x->cell];
    const int sy = table_of(check, y)->step[y->cell];
    if (sx != sy) return sx < sy ? -1 : 1;
    if (x->table != y->table) return x->table < y->table ? -1 : 1;
    return x->cell < y->cell ? -1 : x->cell > y->cell;
}

/* Insertion sort: errata lists are short, and qsort has no context. */
static void sort_errata(attn_check *check)
{
    for (int i = 1; i < check->errata_count; i++) {
        const attn__erratum item = check->errata[i];
        int j = i - 1;
        while (j >= 0 && erratum_order(&check->errata[j], &item, check) > 0) {
            check->errata[j + 1] = check->errata[j];
            j--;
        }
        check->errata[j + 1] = item;
    }
}

static int collect_errata(attn_check *check)
{
    int count = 0;
    for (int t = 0; t < check->table_count; t++) {
        const attn__printed *table = &check->tables[t];
        for (size_t i = 0; i < table->count; i++) {
            if (isnan(table->values[i]) || isnan(table->exact[i])) continue;
            check->checked++;
            if (is_erratum(table->values[i], table->exact[i],
                           table->decimals[i])) {
                if (count == INT_MAX - ATTN__CAUSES)
                    return attn__check_fail(check, ATTN_ERR_TOO_LARGE,
                                            "printed: too many errata");
                count++;
            }
        }
    }
    check->errata = attn__check_alloc(check,
                                      (size_t)count * sizeof *check->errata);
    check->groups = attn__check_alloc(check, ((size_t)count + ATTN__CAUSES) *
                                                 sizeof *check->groups);
    if (check->errata == NULL || check->groups == NULL)
        return attn__check_fail(check, ATTN_ERR_NOMEM, "check: out of memory");
    for (int t = 0; t < check->table_count; t++) {
        const attn__printed *table = &check->tables[t];
        for (size_t i = 0; i < table->count; i++)
            if (!isnan(table->values[i]) && !isnan(table->exact[i]) &&
                is_erratum(table->values[i], table->exact[i],
                           table->decimals[i]))
                check->errata[check->errata_count++] = (attn__erratum){t, i, -1,
                                                                       0};
    }
    sort_errata(check);
    return ATTN_OK;
}

static int add_group(attn_check *check, int cause, int root)
{
    attn__group *group = &check->groups[check->group_count];
    memset(group, 0, sizeof *group);
    group->cause = cause;
    group->root = root;
    return check->group_count++;
}

/* Where a table sits in attention's chain of results, 0 for the scores
 * to 6 for the output; -1 outside it (q, k, v of a multi-head problem). */
static int chain_position(const attn__printed *table)
{
    const char *name = strrchr(table->base, '.');
    name = name != NULL ? name + 1 : table->base;
    if (table->transform == ATTN__EXP || table->transform == ATTN__SUM)
        return 3;
    static const char *const chain[] = {"scores",  "",      "scaled", "",
                                        "weights", "terms", "output"};
    for (int i = 0; i < 7; i++)
        if (strcmp(name, chain[i]) == 0) return i;
    return -1;
}

/* ---- Slips ---- */

/* A slip explains an erratum when it gives the printed number to within
 * one unit of its last digit, and closer than the exact value. */
static int slip_explains(const attn_check *check, const attn__erratum *e,
                         double **values)
{
    const attn__printed *table = table_of(check, e);
    const double p = table->values[e->cell], s = values[e->table][e->cell];
    if (isnan(s)) return 0;
    if (isinf(p) || isinf(s)) return p == s;
    return within_rounding(p, s, table->decimals[e->cell]) &&
           fabs(p - s) < fabs(p - table->exact[e->cell]);
}

/* The result a slip first changes. */
static int slip_start(int cause)
{
    switch (cause) {
    case ATTN__NO_SCALE:
    case ATTN__SCALE_BY_DK: return 2;
    case ATTN__NO_TRANSPOSE: return 0;
    case ATTN__V_TRANSPOSED: return 6;
    default: return 4;
    }
}

/* The slip fits when every printed number it visibly changes agrees with
 * it: in the first printed table it changes, the slip's value rounded;
 * after it, within a unit of its last digit or following from the printed
 * numbers before it by the right arithmetic (numbers computed from slipped
 * ones). That first table must show the slip: numbers that merely follow from
 * the ones before them name no slip. */
static int slip_fits(const attn_check *check, int cause, double **values)
{
    int first = INT_MAX;
    for (int t = 0; t < check->table_count; t++) {
        const int at = chain_position(&check->tables[t]);
        if (at >= slip_start(cause) && at < first) first = at;
    }
    int shown = 0;
    for (int t = 0; t < check->table_count; t++) {
        const attn__printed *table = &check->tables[t];
        const int strict = chain_position(table) == first;
        for (size_t i = 0; i < table->count; i++) {
            const double p = table->values[i], s = values[t][i];
            const double x = table->exact[i];
            if (isnan(p) || isnan(s)) continue;
            if (isinf(p) || isinf(s)) {
                if (p != s) return 0;
                continue;
            }
            const int d = table->decimals[i];
            /* Printed as the slip gives it, not as the exact value: the
             * slip shows even where rounding could hide it. */
            if (strict && fabs(p - s) <= attn__slack(d) &&
                fabs(p - s) < fabs(p - x))
                shown = 1;
            if (isfinite(x) && fabs(s - x) <= 2 * attn__slack(d)) continue;
            if (strict) {
                /* Computed with the slip from the inputs: its rounding. */
                if (fabs(p - s) > attn__slack(d)) return 0;
                shown = 1;
                continue;
            }
            const int follows = !isnan(table->own[i]) &&
                                fabs(table->own[i] - p) <= 2 * attn__slack(d);
            if (!within_rounding(p, s, d) && !follows) return 0;
        }
    }
    return shown;
}

/* The slip that explains the most errata, its group made into *group
 * (-1 if none). */
static int find_slip(attn_check *check, int *group)
{
    *group = -1;
    double *values[ATTN__CHECK_TABLES];
    double *best[ATTN__CHECK_TABLES];
    size_t total = 0;
    for (int t = 0; t < check->table_count; t++)
        total += check->tables[t].count;
    double *block = attn__check_alloc(check, 2 * total * sizeof *block);
    if (block == NULL)
        return attn__check_fail(check, ATTN_ERR_NOMEM, "check: out of memory");
    size_t at = 0;
    for (int t = 0; t < check->table_count; t++) {
        values[t] = block + at;
        best[t] = block + total + at;
        at += check->tables[t].count;
    }
    int best_cause = -1, best_count = 0;
    for (int cause = ATTN__NO_SCALE; cause < ATTN__CAUSES; cause++) {
        for (size_t i = 0; i < total; i++) block[i] = NAN;
        const int applies = attn__slip_values(check, cause, values);
        if (applies < 0) {
            attn__check_free(check, block);
            return -applies;
        }
        if (!applies) continue;
        int count = 0;
        for (int e = 0; e < check->errata_count; e++)
            count += slip_explains(check, &check->errata[e], values);
        if (count > best_count && slip_fits(check, cause, values)) {
            best_count = count;
            best_cause = cause;
            memcpy(block + total, block, total * sizeof *block);
        }
    }
    if (best_cause >= 0) {
        const int made = add_group(check, best_cause, -1);
        *group = made;
        unsigned long long touched = 0;
        for (int e = 0; e < check->errata_count; e++)
            if (slip_explains(check, &check->errata[e], best))
                touched |= 1ull << check->errata[e].table;
        /* Every erratum of a table the slip gives is the slip's. */
        for (int e = 0; e < check->errata_count; e++)
            if (touched >> check->errata[e].table & 1)
                check->errata[e].group = made;
    }
    attn__check_free(check, block);
    return ATTN_OK;
}

/* ---- Misprints and rounding ---- */

/* The tables printed with rounded numbers that the erratum's table is
 * computed from: earlier in attention's chain (or, outside it, in earlier
 * steps), as they are (a percentage or an unshifted exp feeds nothing). */
static unsigned long long rounded_before(const attn_check *check, int own,
                                         int step)
{
    unsigned long long tables = 0;
    const int own_at = chain_position(&check->tables[own]);
    for (int t = 0; t < check->table_count; t++) {
        const int at = chain_position(&check->tables[t]);
        if (t == own || check->tables[t].transform != ATTN__AS_IS ||
            (at >= 0 && own_at >= 0 && at >= own_at))
            continue;
        const attn__printed *table = &check->tables[t];
        for (size_t i = 0; i < table->count; i++) {
            const double p = table->values[i], x = table->exact[i];
            if (table->step[i] < step && isfinite(p) && isfinite(x) && p != x) {
                tables |= 1ull << t;
                break;
            }
        }
    }
    return tables;
}

static int explain_rest(attn_check *check, attn__arith *arith, int slip)
{
    const int n = check->errata_count;
    double *base = attn__check_alloc(check, (size_t)n * sizeof *base);
    /* nearest[e]: the group of the latest misprint found whose number,
     * alone in the printed world, changes erratum e; -1 if none. */
    int *nearest = attn__check_alloc(check, (size_t)n * sizeof *nearest);
    /* reached[e]: erratum e's value in that misprint's walk. */
    double *reached = attn__check_alloc(check, (size_t)n * sizeof *reached);
    int status = ATTN_OK;
    if (base == NULL || nearest == NULL || reached == NULL) {
        status = attn__check_fail(check, ATTN_ERR_NOMEM,
                                  "check: out of memory");
        goto done;
    }
    status = attn__arith_walk(check, arith, ATTN__WORLD_EXACT, -1, 0);
    if (status != ATTN_OK) goto done;
    int step;
    for (int e = 0; e < n; e++) {
        base[e] = attn__arith_value(arith, table_of(check, &check->errata[e]),
                                    check->errata[e].cell, &step);
        nearest[e] = -1;
    }
    int walks = 0, rounding = -1;
    for (int e = 0; e < n; e++) {
        attn__erratum *item = &check->errata[e];
        if (item->group >= 0) continue;
        const attn__printed *table = table_of(check, item);
        const double p = table->values[item->cell];
        const int d = table->decimals[item->cell];
        const double own = table->own[item->cell];
        /* Carried: it follows from the printed numbers before it, or from
         * the misprint that reaches it with everything else exact (as its
         * author computed: the printed numbers in between may be rounded
         * too coarsely to give it). */
        const double x = table->exact[item->cell];
        const int carried = carried_from_printed(p, own, x, d) ||
                            (nearest[e] >= 0 &&
                             carried_from_printed(p, reached[e], x, d));
        if (carried) {
            item->group = nearest[e];
            if (item->group >= 0) continue;
            if (slip >= 0 && !within_rounding(p, table->exact[item->cell], d)) {
                item->group = slip;
                continue;
            }
        }
        if (carried || rounds_to(p, table->exact[item->cell], d)) {
            if (rounding < 0) rounding = add_group(check, ATTN__ROUNDING, -1);
            item->group = rounding;
            if (carried)
                check->groups[rounding].intermediates |= rounded_before(
                    check, item->table, table->step[item->cell]);
            continue;
        }
        item->is_root = 1;
        for (int g = 0; g < check->group_count && item->group < 0; g++) {
            const attn__group *group = &check->groups[g];
            if (group->cause != ATTN__MISPRINT) continue;
            const attn__erratum *first = &check->errata[group->root];
            if (first->table == item->table &&
                table_of(check, first)->step[first->cell] ==
                    table->step[item->cell])
                item->group = g;
        }
        if (item->group < 0) item->group = add_group(check, ATTN__MISPRINT, e);
        /* What the misprint reaches: a walk with it alone printed. A number
         * no equation computes reaches nothing; past ATTN__ROOT_WALKS, later
         * misprints are not followed (a table wrong throughout). */
        if (isnan(base[e]) || walks == ATTN__ROOT_WALKS) continue;
        walks++;
        status = attn__arith_walk(check, arith, ATTN__WORLD_ROOT, item->table,
                                  item->cell);
        if (status != ATTN_OK) goto done;
        for (int later = e + 1; later < n; later++) {
            const attn__erratum *other = &check->errata[later];
            const double value = attn__arith_value(
                arith, table_of(check, other), other->cell, &step);
            if (!isnan(value) && !isnan(base[later]) &&
                memcmp(&value, &base[later], sizeof value) != 0) {
                nearest[later] = item->group;
                reached[later] = value;
            }
        }
    }
done:
    attn__check_free(check, reached);
    attn__check_free(check, nearest);
    attn__check_free(check, base);
    return status;
}

/* The rounding group after the slips and misprints, whose explanations
 * come first. */
static void rounding_last(attn_check *check)
{
    int from = -1;
    for (int g = 0; g < check->group_count; g++)
        if (check->groups[g].cause == ATTN__ROUNDING) from = g;
    if (from < 0) return;
    const attn__group moved = check->groups[from];
    const int last = check->group_count - 1;
    for (int g = from; g < last; g++) check->groups[g] = check->groups[g + 1];
    check->groups[last] = moved;
    for (int e = 0; e < check->errata_count; e++) {
        int *group = &check->errata[e].group;
        if (*group == from)
            *group = last;
        else if (*group > from)
            (*group)--;
    }
}

/* ---- Explanations ---- */

/* Drops a character cut off at the end of s (UTF-8 bytes of one whose
 * lead byte promises more than follow), after a cut to a buffer's size. */
static void drop_cut_character(char *s)
{
    size_t n = strlen(s), start = n;
    while (start > 0 && ((unsigned char)s[start - 1] & 0xC0) == 0x80) start--;
    if (start == 0) return;
    const unsigned char lead = (unsigned char)s[start - 1];
    const size_t size = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (n - (start - 1) < size) s[start - 1] = '\0';
}

/* "weights[sat][cat], weights[sat][sat] are printed 0.38, 0.24, but the
 * numbers before them give 0.4013, 0.1973 by the same arithmetic (exactly
 * 0.4011, 0.1978): ..." Each list is written into a buffer of its own,
 * cut at its end if it must be (a printed 1e300 is 6 bytes, its exact
 * value 5, a name at most about 150). */
static void explain_misprint(const attn_check *check, int g, int members,
                             char *out, size_t cap)
{
    enum { NAMED = 4 }; /* roots spelled out; the rest are counted */
    char names_buf[ATTN__SENTENCE_CAP / 2], prints_buf[256], owns_buf[256],
        exacts_buf[256];
    attn__text names, prints, owns, exacts;
    attn__text_init(&names, names_buf, sizeof names_buf);
    attn__text_init(&prints, prints_buf, sizeof prints_buf);
    attn__text_init(&owns, owns_buf, sizeof owns_buf);
    attn__text_init(&exacts, exacts_buf, sizeof exacts_buf);
    int roots = 0, own_known = 1;
    for (int e = 0; e < check->errata_count; e++) {
        const attn__erratum *item = &check->errata[e];
        if (item->group != g || !item->is_root) continue;
        const attn__printed *table = table_of(check, item);
        if (isnan(table->own[item->cell])) own_known = 0;
        if (roots++ >= NAMED) continue;
        const char *sep = roots > 1 ? ", " : "";
        char printed[ATTN__PRINTED_CAP], own[ATTN__NUMBER_CAP],
            exact[ATTN__NUMBER_CAP];
        attn__printed_text(printed, table->values[item->cell],
                           table->decimals[item->cell]);
        attn__format_rounded(own, table->own[item->cell]);
        attn__format_rounded(exact, table->exact[item->cell]);
        attn__text_puts(&names, sep);
        attn__cell_name(&names, check, table, item->cell);
        attn__text_printf(&prints, "%s%s", sep, printed);
        attn__text_printf(&owns, "%s%s", sep, own);
        attn__text_printf(&exacts, "%s%s", sep, exact);
    }
    if (roots > NAMED) {
        const char *more = ", …";
        attn__text_printf(&names, " and %d more", roots - NAMED);
        attn__text_puts(&prints, more);
        attn__text_puts(&owns, more);
        attn__text_puts(&exacts, more);
    }
    drop_cut_character(names_buf);
    const int one = roots == 1;
    const int later = members - roots;
    char tail[200] = "";
    if (later > 0)
        snprintf(tail, sizeof tail,
                 " %d later %s from %s: the right arithmetic on the misprinted "
                 "%s gives what is printed.",
                 later, later == 1 ? "value follows" : "values follow",
                 one ? "it" : "them", one ? "number" : "numbers");
    attn__text sentence;
    attn__text_init(&sentence, out, cap);
    if (own_known)
        attn__text_printf(&sentence,
                          "%s %s printed %s, but the numbers before %s give "
                          "%s by the same arithmetic (exactly %s): a slip in "
                          "the arithmetic or in the copying.%s",
                          names_buf, one ? "is" : "are", prints_buf,
                          one ? "it" : "them", owns_buf, exacts_buf, tail);
    else
        attn__text_printf(&sentence, "%s %s printed %s, but the exact %s %s.%s",
                          names_buf, one ? "is" : "are", prints_buf,
                          one ? "value is" : "values are", exacts_buf, tail);
    drop_cut_character(out);
}

static void explain(attn_check *check)
{
    for (int g = 0; g < check->group_count; g++) {
        attn__group *group = &check->groups[g];
        int members = 0;
        unsigned long long fields = 0;
        for (int e = 0; e < check->errata_count; e++)
            if (check->errata[e].group == g) {
                members++;
                fields |= 1ull << check->errata[e].table;
            }
        char list[ATTN__SENTENCE_CAP] = "";
        size_t used = 0;
        const unsigned long long named = group->cause == ATTN__ROUNDING
                                             ? group->intermediates
                                             : fields;
        /* "scores", "scores and weights", "scores, scaled and weights":
         * the tables' names, used as names ("the numbers printed for ..."),
         * so that the sentence reads whatever a table is called. */
        int count = 0, listed = 0;
        for (int t = 0; t < check->table_count; t++) count += named >> t & 1;
        for (int t = 0; t < check->table_count && used < sizeof list; t++)
            if (named >> t & 1) {
                const char *sep = listed == 0           ? ""
                                  : listed == count - 1 ? " and "
                                                        : ", ";
                used += (size_t)snprintf(list + used, sizeof list - used,
                                         "%s%s", sep, check->tables[t].key);
                listed++;
            }
        char *out = group->explanation;
        const size_t cap = sizeof group->explanation;
        if (group->cause == ATTN__MISPRINT) {
            explain_misprint(check, g, members, group->explanation,
                             sizeof group->explanation);
        } else if (group->cause == ATTN__ROUNDING) {
            if (list[0] != '\0')
                snprintf(out, cap,
                         "Rounding, not a mistake: these follow "
                         "from the numbers printed for %s, rounded before "
                         "the next step; "
                         "exact arithmetic on unrounded numbers differs in "
                         "the last digit or two.",
                         list);
            else
                snprintf(out, cap,
                         "Rounding, not a mistake: these differ "
                         "from the exact values by at most one unit in their "
                         "last digit (rounded the other way, or from "
                         "intermediate numbers rounded before the next "
                         "step).");
        } else {
            attn__slip_sentence(check, group->cause, list, out, cap);
        }
    }
}

size_t attn_check_checked(const attn_check *check)
{
    return check != NULL && check->has_run ? check->checked : 0;
}

int attn_check_run(attn_check *check, int *errata)
{
    if (check == NULL) return ATTN_ERR_NULL;
    check->error[0] = '\0';
    if (errata != NULL) *errata = 0;
    const int unchanged = attn__check_results_unchanged(check);
    if (unchanged != ATTN_OK) return unchanged;
    attn__check_clear(check);
    check->checked = 0;
    attn__arith *arith = NULL;
    int status = attn__arith_create(check, &arith);
    if (status == ATTN_OK)
        status = attn__arith_walk(check, arith, ATTN__WORLD_EXACT, -1, 0);
    for (int t = 0; status == ATTN_OK && t < check->table_count; t++) {
        attn__printed *table = &check->tables[t];
        for (size_t i = 0; i < table->count; i++) {
            attn__arith_value(arith, table, i, &table->step[i]);
            table->exact[i] = exact_of(check, arith, table, i);
        }
    }
    if (status == ATTN_OK) status = collect_errata(check);
    if (status == ATTN_OK && check->errata_count > 0) {
        status = attn__arith_walk(check, arith, ATTN__WORLD_PRINTED, -1, 0);
        for (int t = 0; status == ATTN_OK && t < check->table_count; t++) {
            attn__printed *table = &check->tables[t];
            int step;
            for (size_t i = 0; i < table->count; i++)
                table->own[i] = attn__arith_value(arith, table, i, &step);
        }
        int slip = -1;
        if (status == ATTN_OK) status = find_slip(check, &slip);
        if (status == ATTN_OK) status = explain_rest(check, arith, slip);
        if (status == ATTN_OK) {
            rounding_last(check);
            explain(check);
        }
    }
    attn__arith_destroy(check, arith);
    if (status != ATTN_OK) {
        attn__check_clear(check);
        return status;
    }
    check->has_run = 1;
    if (errata != NULL) *errata = check->errata_count;
    return ATTN_OK;
}

int attn_check_format(attn_check *check, int format, char *buf, size_t cap,
                      size_t *length)
{
    if (check == NULL) return ATTN_ERR_NULL;
    check->error[0] = '\0';
    if (length == NULL || (buf == NULL && cap > 0))
        return attn__check_fail(check, ATTN_ERR_NULL,
                                "attn_check_format: length must not be NULL, "
                                "nor buf when cap is not 0");
    if (format < ATTN_FORMAT_JSON || format > ATTN_FORMAT_LATEX)
        return attn__check_fail(check, ATTN_ERR_OPTION,
                                "format: unknown format %d for a check (0 "
                                "JSON, 1 text, 2 Markdown, 3 LaTeX)",
                                format);
    if (!check->has_run)
        return attn__check_fail(check, ATTN_ERR_STATE,
                                "format: attn_check_run must succeed first");
    const int unchanged = attn__check_results_unchanged(check);
    if (unchanged != ATTN_OK) return unchanged;
    attn__text text;
    attn__text_init(&text, buf, cap);
    attn__check_report(check, format, &text);
    *length = text.length;
    return ATTN_OK;
}
