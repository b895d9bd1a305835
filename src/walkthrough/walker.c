/* walker.c: what the step descriptions (steps_*.c) emit through, and
 * what the renderers read back (labels, the title). Equations are built
 * as expression trees in a pool the walker is given for one walk
 * (walkthrough.c's, or the check's). It calls no kind's steps and no
 * renderer: they call it. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const attn__labels attn__index_labels = {NULL, ""};

const char *attn__label(const attn__labels *labels, int i, char *tmp,
                        size_t cap)
{
    if (labels->names != NULL) return labels->names[i];
    /* Counted from 1, as the page counts rows, columns and heads. */
    snprintf(tmp, cap, "%s%d", labels->prefix ? labels->prefix : "", i + 1);
    return tmp;
}

const char *attn__walk_label(const attn__labels *labels, int i, char *tmp,
                             size_t cap)
{
    char plain[ATTN__LABEL_CAP];
    const char *label = attn__label(labels, i, plain, sizeof plain);
    size_t used = 0;
    tmp[used++] = ATTN__LABEL_OPEN;
    /* A label's own marks (control characters) would end it early. A long
     * label is cut before a whole character (labels are valid UTF-8), never
     * inside one, so the walkthrough stays valid UTF-8. */
    for (const char *c = label; *c;) {
        const unsigned char lead = (unsigned char)*c;
        const size_t size = lead < 0xC0   ? 1
                            : lead < 0xE0 ? 2
                            : lead < 0xF0 ? 3
                                          : 4;
        if (used + size + 4 >= cap) break;
        for (size_t k = 0; k < size && *c; k++, c++)
            tmp[used++] = *c == ATTN__LABEL_OPEN || *c == ATTN__LABEL_CLOSE
                              ? '?'
                              : *c;
    }
    tmp[used++] = ATTN__LABEL_CLOSE;
    tmp[used] = '\0';
    return tmp;
}

/* ---- Steps ---- */

void attn__walk_heading(attn__walker *walker, int level, const char *format,
                        ...)
{
    char title[ATTN__TITLE_CAP];
    va_list args;
    va_start(args, format);
    vsnprintf(title, sizeof title, format, args);
    va_end(args);
    walker->sink->heading(walker, level, title);
}

void attn__walk_step(attn__walker *walker, const char *id, const char *format,
                     ...)
{
    walker->step++;
    snprintf(walker->id, sizeof walker->id, "%s", id);
    va_list args;
    va_start(args, format);
    vsnprintf(walker->title, sizeof walker->title, format, args);
    va_end(args);
    walker->equations = 0;
    walker->repeat_open = 0;
    walker->repeats = 0;
    walker->sink->step_begin(walker);
}

void attn__walk_sentence(attn__walker *walker, const char *format, ...)
{
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    walker->sink->sentence(walker, text);
}

void attn__walk_formula(attn__walker *walker, const char *tex,
                        const char *plain)
{
    walker->sink->formula(walker, tex, plain);
}

void attn__walk_region(attn__walker *walker, int produces, const char *name,
                       int batch, int shape, int first, int last)
{
    const attn__region region = {produces, name,          batch,
                                 shape,    {first, last}, 0};
    walker->sink->region(walker, &region);
}

void attn__walk_table(attn__walker *walker, const attn__matrix_view *view)
{
    walker->sink->table(walker, view);
}

void attn__walk_repeat(attn__walker *walker, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(walker->repeat, sizeof walker->repeat, format, args);
    va_end(args);
    walker->repeat_open = 1;
    if (walker->repeats < ATTN__REPEAT_SPAN - 1) walker->repeats++;
}

void attn__walk_others(attn__walker *walker, const char *id, int others,
                       const char *lead, const char *noun, const char *nouns)
{
    char count[16];
    if (others == 1)
        attn__walk_step(walker, id, "%s%s other %s", lead,
                        lead[0] ? "the" : "The", noun);
    else
        attn__walk_step(walker, id, "%s%s other %s %s", lead,
                        lead[0] ? "the" : "The",
                        attn__count_word(others, count, sizeof count), nouns);
}

const char *attn__walk_row_of(const attn__labels *labels, int i, char *tmp,
                              size_t cap)
{
    char plain[ATTN__LABEL_CAP], marked[ATTN__LABEL_CAP];
    const char *label = attn__label(labels, i, plain, sizeof plain);
    const char *name = attn__walk_label(labels, i, marked, sizeof marked);
    /* A label that names a row already ("row 2", as the page labels the
     * softmax's rows) is not "the row of row 2". */
    if (strncmp(label, "row ", 4) == 0 || strncmp(label, "Row ", 4) == 0)
        snprintf(tmp, cap, "%s", name);
    else
        snprintf(tmp, cap, "the row of %s", name);
    return tmp;
}

const char *attn__count_word(int count, char *tmp, size_t cap)
{
    static const char *const words[] = {
        "zero",  "one",   "two",  "three", "four",   "five",  "six",
        "seven", "eight", "nine", "ten",   "eleven", "twelve"};
    if (count >= 0 && count <= 12) return words[count];
    snprintf(tmp, cap, "%d", count);
    return tmp;
}

void attn__walk_step_end(attn__walker *walker)
{
    walker->sink->step_end(walker);
}

attn__matrix_view attn__view(const char *name, const char *tensor,
                             const char *note, const double *data,
                             size_t stride, int rows, int cols,
                             attn__labels row_labels, attn__labels col_labels)
{
    const attn__matrix_view view = {name, tensor, note,       data,      stride,
                                    rows, cols,   row_labels, col_labels};
    return view;
}

void attn__walk_show(attn__walker *walker, const char *name, const char *tensor,
                     const char *note, const double *data, size_t stride,
                     int rows, int cols, const attn__labels *row_labels,
                     const attn__labels *col_labels)
{
    const attn__matrix_view view = attn__view(
        name, tensor, note, data, stride, rows, cols, *row_labels, *col_labels);
    attn__walk_table(walker, &view);
}

const char *attn__walk_title(const attn__walker *walker, const char *own)
{
    return walker->problem->title[0] != '\0' ? walker->problem->title : own;
}

/* ---- Batches ---- */

/* Opens batch item b (a heading and a group when batched); 0 past the
 * items shown. */
int attn__walk_begin_item(attn__walker *walker, int b)
{
    const attn__run_info *info = walker->info;
    if (!info->batched) return 1;
    walker->depth = 0;
    if (b == ATTN__SHOW_BATCH) {
        attn__walk_heading(walker, 2, "Batch items %d to %d", b + 1,
                           info->batch);
        walker->group[0] = '\0';
        return 0;
    }
    attn__walk_heading(walker, 2, "Batch item %d", b + 1);
    snprintf(walker->group, sizeof walker->group, "Batch item %d", b + 1);
    walker->depth = 1;
    return 1;
}

int attn__walk_items(const attn__run_info *info)
{
    return info->batch > ATTN__SHOW_BATCH ? ATTN__SHOW_BATCH + 1 : info->batch;
}

void attn__walk_id_prefix(const attn__walker *walker, int b, char *out,
                          size_t cap)
{
    if (walker->info->batched)
        snprintf(out, cap, "b%d-", b + 1);
    else
        out[0] = '\0';
}

void attn__walk_done(attn__walker *walker, const char *id, const char *title,
                     const char *sentence, const char *tex, const char *plain,
                     const char *const *names, int count)
{
    attn__walk_step(walker, id, "%s", title);
    attn__walk_sentence(walker, "%s", sentence);
    if (tex != NULL) attn__walk_formula(walker, tex, plain);
    for (int i = 0; i < count; i++)
        attn__walk_region(walker, 0, names[i], -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_step_end(walker);
}

const double *attn__walk_field(const attn__walker *walker, const char *name)
{
    return attn__data_of(walker->problem, name);
}

const double *attn__walk_result(const attn__walker *walker, const char *name)
{
    const attn__result *result = attn__find_result(walker->problem, name, 0);
    return result != NULL ? result->data : NULL;
}

/* ---- Equations ---- */

attn__ref attn__ref0(const char *name)
{
    const attn__ref ref = {name, 0, {0, 0, 0, 0}};
    return ref;
}

attn__ref attn__ref1(const char *name, int i)
{
    const attn__ref ref = {name, 1, {i, 0, 0, 0}};
    return ref;
}

attn__ref attn__ref2(const char *name, int i, int j)
{
    const attn__ref ref = {name, 2, {i, j, 0, 0}};
    return ref;
}

attn__ref attn__ref3(const char *name, int i, int j, int k)
{
    const attn__ref ref = {name, 3, {i, j, k, 0}};
    return ref;
}

attn__ref attn__batched(attn__ref ref, int b)
{
    if (b < 0 || ref.name == NULL) return ref;
    for (int d = ref.rank; d > 0; d--) ref.index[d] = ref.index[d - 1];
    ref.index[0] = b;
    ref.rank++;
    return ref;
}

void attn__eq_begin(attn__walker *walker, const char *format, ...)
{
    walker->node_count = 0;
    walker->kid_count = 0;
    walker->chain_length = 0;
    walker->overflow = 0;
    va_list args;
    va_start(args, format);
    vsnprintf(walker->label, sizeof walker->label, format, args);
    va_end(args);
}

static int new_node(attn__walker *walker, int op, double value)
{
    if (walker->node_count == ATTN__NODE_CAP) {
        walker->overflow = 1;
        return -1;
    }
    attn__node *node = &walker->nodes[walker->node_count];
    node->op = op;
    node->value = value;
    node->ref = attn__ref0(NULL);
    node->first = walker->kid_count;
    node->count = 0;
    return walker->node_count++;
}

int attn__leaf(attn__walker *walker, double value, attn__ref ref)
{
    const int node = new_node(walker, ATTN__OP_LEAF, value);
    if (node >= 0) walker->nodes[node].ref = ref;
    return node;
}

int attn__constant(attn__walker *walker, double value)
{
    return new_node(walker, ATTN__OP_LEAF, value);
}

int attn__op_node(attn__walker *walker, int op, double value, const int *kids,
                  int count)
{
    for (int i = 0; i < count; i++)
        if (kids[i] < 0) return -1;
    if (walker->kid_count + count > ATTN__NODE_CAP) {
        walker->overflow = 1;
        return -1;
    }
    const int node = new_node(walker, op, value);
    if (node < 0) return -1;
    memcpy(walker->kids + walker->kid_count, kids,
           (size_t)count * sizeof *kids);
    walker->kid_count += count;
    walker->nodes[node].count = count;
    return node;
}

int attn__unary(attn__walker *walker, int op, double value, int kid)
{
    return attn__op_node(walker, op, value, &kid, 1);
}

int attn__binary(attn__walker *walker, int op, double value, int a, int b)
{
    const int kids[2] = {a, b};
    return attn__op_node(walker, op, value, kids, 2);
}

int attn__vector_leaves(attn__walker *walker, const double *data, size_t step,
                        int n, attn__ref ref)
{
    int kids[ATTN__MAX_KIDS];
    if (n > ATTN__MAX_KIDS) return -1;
    for (int c = 0; c < n; c++) {
        attn__ref cell = ref;
        if (ref.name != NULL) cell.index[ref.rank - 1] += c;
        kids[c] = attn__leaf(walker, data[(size_t)c * step], cell);
    }
    return attn__op_node(walker, ATTN__OP_VEC, 0.0, kids, n);
}

void attn__eq_chain(attn__walker *walker, int node)
{
    if (node < 0 || walker->chain_length == ATTN__MAX_CHAIN) {
        walker->overflow = 1;
        return;
    }
    walker->chain[walker->chain_length++] = node;
}

void attn__eq_emit(attn__walker *walker)
{
    if (walker->overflow || walker->chain_length == 0) return;
    walker->sink->equation(walker);
    walker->equations++;
    walker->repeat_open = 0;
}
