/* arithmetic.c: the printed numbers' own arithmetic. The problem is walked
 * as for a walkthrough, into a sink that evaluates each equation again
 * with other numbers in its leaves (the page's evaluateWith, in C): the
 * cells it computes get the printed number where one is printed, else the
 * value the equation gives from the numbers before it. What the equations
 * give then is what a hand computation from the printed numbers gives, so
 * a printed number that follows from an earlier misprint is recognised,
 * and which cells a misprint reaches is the cells that change with it. */
#include "attention.h"
#include "check/check.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct slot {
    char name[ATTN__KEY_CAP];
    int rank;
    int index[4];
    int has_printed; /* an as-is printed number names this cell */
    double printed;
    int settled; /* an equation of this walk computed it */
    int step;    /* where it is first computed (attn__walk_place), INT_MAX if
                    none */
    double recomputed;
} slot;

struct attn__arith {
    attn_check *check;
    slot *slots; /* [cap] */
    int *table;  /* [2 * cap] open addressing: slot + 1, 0 = empty */
    int count, cap;
    int mode;
    int root;   /* ATTN__WORLD_ROOT: the slot printed, or -1 */
    int failed; /* out of memory during a walk */
};

/* The walker, and the arithmetic its sink fills (walker first, so that
 * the sink gets from one to the other). */
typedef struct arith_walker {
    attn__walker walker;
    attn__arith *arith;
} arith_walker;

static uint64_t hash_ref(const char *name, int rank, const int *index)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ (uint64_t)rank) * 1099511628211ull;
    for (int d = 0; d < rank; d++)
        h = (h ^ (uint64_t)(unsigned)index[d]) * 1099511628211ull;
    return h;
}

static int same_ref(const slot *s, const attn__ref *ref)
{
    if (s->rank != ref->rank || strcmp(s->name, ref->name) != 0) return 0;
    for (int d = 0; d < ref->rank; d++)
        if (s->index[d] != ref->index[d]) return 0;
    return 1;
}

static int find(const attn__arith *arith, const attn__ref *ref)
{
    if (ref->name == NULL || arith->cap == 0) return -1;
    const size_t mask = (size_t)arith->cap * 2 - 1;
    for (size_t at = hash_ref(ref->name, ref->rank, ref->index) & mask;;
         at = (at + 1) & mask) {
        const int entry = arith->table[at];
        if (entry == 0) return -1;
        if (same_ref(&arith->slots[entry - 1], ref)) return entry - 1;
    }
}

static void place(attn__arith *arith, int s)
{
    const size_t mask = (size_t)arith->cap * 2 - 1;
    const slot *it = &arith->slots[s];
    size_t at = hash_ref(it->name, it->rank, it->index) & mask;
    while (arith->table[at] != 0) at = (at + 1) & mask;
    arith->table[at] = s + 1;
}

static int grow(attn__arith *arith)
{
    attn_check *check = arith->check;
    const int cap = arith->cap == 0 ? 256 : arith->cap * 2;
    if (cap > INT_MAX / 4) return 0;
    slot *slots = attn__check_alloc(check, (size_t)cap * sizeof *slots);
    int *table = attn__check_alloc(check, (size_t)cap * 2 * sizeof *table);
    if (slots == NULL || table == NULL) {
        attn__check_free(check, slots);
        attn__check_free(check, table);
        return 0;
    }
    if (arith->count > 0)
        memcpy(slots, arith->slots, (size_t)arith->count * sizeof *slots);
    memset(table, 0, (size_t)cap * 2 * sizeof *table);
    attn__check_free(check, arith->slots);
    attn__check_free(check, arith->table);
    arith->slots = slots;
    arith->table = table;
    arith->cap = cap;
    for (int s = 0; s < arith->count; s++) place(arith, s);
    return 1;
}

static int find_or_add(attn__arith *arith, const attn__ref *ref)
{
    const int found = find(arith, ref);
    if (found >= 0 || ref->name == NULL) return found;
    if (arith->count == arith->cap && !grow(arith)) {
        arith->failed = 1;
        return -1;
    }
    slot *s = &arith->slots[arith->count];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", ref->name);
    s->rank = ref->rank;
    memcpy(s->index, ref->index, sizeof s->index);
    s->step = INT_MAX;
    place(arith, arith->count);
    return arith->count++;
}

/* The number a cell holds in this walk's world. */
static double world(const attn__arith *arith, int s)
{
    const slot *it = &arith->slots[s];
    const int printed = it->has_printed &&
                        (arith->mode == ATTN__WORLD_PRINTED ||
                         (arith->mode == ATTN__WORLD_ROOT && s == arith->root));
    return printed ? it->printed : it->recomputed;
}

int attn__arith_create(attn_check *check, attn__arith **out)
{
    attn__arith *arith = attn__check_alloc(check, sizeof *arith);
    *out = arith;
    if (arith == NULL)
        return attn__check_fail(check, ATTN_ERR_NOMEM, "check: out of memory");
    memset(arith, 0, sizeof *arith);
    arith->check = check;
    arith->root = -1;
    /* The cells printed as they are: the world of a printed walk. */
    for (int t = 0; t < check->table_count; t++) {
        const attn__printed *table = &check->tables[t];
        if (table->transform != ATTN__AS_IS) continue;
        for (size_t i = 0; i < table->count; i++) {
            if (isnan(table->values[i])) continue;
            const attn__ref ref = attn__cell_ref(table, i);
            const int s = find_or_add(arith, &ref);
            if (s < 0)
                return attn__check_fail(check, ATTN_ERR_NOMEM,
                                        "check: out of memory");
            arith->slots[s].has_printed = 1;
            arith->slots[s].printed = table->values[i];
        }
    }
    return ATTN_OK;
}

void attn__arith_destroy(attn_check *check, attn__arith *arith)
{
    if (arith == NULL) return;
    attn__check_free(check, arith->slots);
    attn__check_free(check, arith->table);
    attn__check_free(check, arith);
}

/* ---- Evaluating an equation with the world's numbers ---- */

typedef struct value {
    int n; /* 0: a number in x[0]; else a vector */
    double x[ATTN__MAX_KIDS];
} value;

static value number(double x)
{
    value v;
    v.n = 0;
    v.x[0] = x;
    return v;
}

/* a op b entry by entry, a number standing for every entry. */
static value elementwise(value a, value b, int op)
{
    value out;
    out.n = a.n > b.n ? a.n : b.n;
    const int count = out.n > 0 ? out.n : 1;
    for (int c = 0; c < count; c++) {
        const double x = a.x[a.n > 0 ? c : 0], y = b.x[b.n > 0 ? c : 0];
        out.x[c] = op == ATTN__OP_ADD   ? x + y
                   : op == ATTN__OP_SUB ? x - y
                   : op == ATTN__OP_MUL ? x * y
                                        : x / y;
    }
    return out;
}

static value evaluate(const arith_walker *aw, int node)
{
    const attn__walker *walker = &aw->walker;
    const attn__node *it = &walker->nodes[node];
    const int *kids = walker->kids + it->first;
    if (it->op == ATTN__OP_LEAF) {
        const int s = find(aw->arith, &it->ref);
        return number(s >= 0 && aw->arith->slots[s].settled
                          ? world(aw->arith, s)
                          : it->value);
    }
    if (it->op == ATTN__OP_VEC) {
        value out;
        out.n = it->count;
        for (int c = 0; c < it->count; c++)
            out.x[c] = evaluate(aw, kids[c]).x[0];
        return out;
    }
    value first = evaluate(aw, kids[0]);
    switch (it->op) {
    case ATTN__OP_ADD:
        for (int k = 1; k < it->count; k++)
            first = elementwise(first, evaluate(aw, kids[k]), ATTN__OP_ADD);
        return first;
    case ATTN__OP_SUB:
    case ATTN__OP_MUL:
    case ATTN__OP_DIV: return elementwise(first, evaluate(aw, kids[1]), it->op);
    case ATTN__OP_MAX:
        for (int k = 1; k < it->count; k++)
            first.x[0] = fmax(first.x[0], evaluate(aw, kids[k]).x[0]);
        return first;
    case ATTN__OP_EXP: return number(exp(first.x[0]));
    case ATTN__OP_SQRT: return number(sqrt(first.x[0]));
    case ATTN__OP_TANH: return number(tanh(first.x[0]));
    case ATTN__OP_PHI:
        return number(first.x[0] > 0 ? first.x[0] + 1 : exp(first.x[0]));
    default: return first;
    }
}

static void settle(arith_walker *aw, const attn__ref *ref, double x)
{
    attn__arith *arith = aw->arith;
    const int s = find_or_add(arith, ref);
    if (s < 0) return;
    slot *it = &arith->slots[s];
    it->recomputed = x;
    it->settled = 1;
    const int place = attn__walk_place(&aw->walker);
    if (place < it->step) it->step = place;
}

static void settle_all(arith_walker *aw, int node, const value *v)
{
    const attn__node *it = &aw->walker.nodes[node];
    if (it->ref.name != NULL) {
        settle(aw, &it->ref, v->x[0]);
    } else if (it->op == ATTN__OP_VEC && v->n == it->count) {
        const int *kids = aw->walker.kids + it->first;
        for (int c = 0; c < it->count; c++)
            settle(aw, &aw->walker.nodes[kids[c]].ref, v->x[c]);
    }
}

static void on_equation(attn__walker *walker)
{
    arith_walker *aw = (arith_walker *)walker;
    if (walker->chain_length < 2) return; /* a value stated, not computed */
    const int first = walker->chain[0];
    const int last = walker->chain[walker->chain_length - 1];
    /* A sum of named products (an output row's terms w_ij·v_j) settles
     * them too. */
    if (walker->chain_length > 2) {
        const attn__node *a = &walker->nodes[first];
        const attn__node *b = &walker->nodes[walker->chain[1]];
        if (a->op == ATTN__OP_ADD && b->op == ATTN__OP_ADD &&
            a->count == b->count)
            for (int k = 0; k < a->count; k++) {
                const value v = evaluate(aw, walker->kids[a->first + k]);
                settle_all(aw, walker->kids[b->first + k], &v);
            }
    }
    const value v = evaluate(aw, first);
    settle_all(aw, last, &v);
}

static void no_begin(attn__walker *w, const char *t, const char *i)
{
    (void)w;
    (void)t;
    (void)i;
}
static void no_heading(attn__walker *w, int l, const char *t)
{
    (void)w;
    (void)l;
    (void)t;
}
static void no_step(attn__walker *w)
{
    (void)w;
}
static void no_text(attn__walker *w, const char *t)
{
    (void)w;
    (void)t;
}
static void no_formula(attn__walker *w, const char *t, const char *p)
{
    (void)w;
    (void)t;
    (void)p;
}
static void no_region(attn__walker *w, const attn__region *r)
{
    (void)w;
    (void)r;
}
static void no_table(attn__walker *w, const attn__matrix_view *v)
{
    (void)w;
    (void)v;
}

static const attn__sink arith_sink = {
    no_begin,  no_heading,  no_step,  no_text, no_formula,
    no_region, on_equation, no_table, no_step, no_step,
};

int attn__arith_walk(attn_check *check, attn__arith *arith, int mode,
                     int root_table, size_t root_cell)
{
    attn__node *nodes = attn__check_alloc(check,
                                          ATTN__NODE_CAP * sizeof *nodes);
    int *kids = attn__check_alloc(check, ATTN__NODE_CAP * sizeof *kids);
    int status = ATTN_OK;
    if (nodes == NULL || kids == NULL) {
        status = attn__check_fail(check, ATTN_ERR_NOMEM,
                                  "check: out of memory");
    } else {
        for (int s = 0; s < arith->count; s++) {
            arith->slots[s].settled = 0;
            arith->slots[s].recomputed = NAN;
        }
        arith->mode = mode;
        arith->root = -1;
        if (mode == ATTN__WORLD_ROOT &&
            check->tables[root_table].transform == ATTN__AS_IS) {
            const attn__ref ref = attn__cell_ref(&check->tables[root_table],
                                                 root_cell);
            arith->root = find(arith, &ref);
        }
        arith->failed = 0;
        attn__text nowhere;
        attn__text_init(&nowhere, NULL, 0);
        arith_walker aw = {
            .walker =
                {
                    .out = &nowhere,
                    .sink = &arith_sink,
                    .problem = check->problem,
                    .info = &check->problem->info,
                    .nodes = nodes,
                    .kids = kids,
                },
            .arith = arith,
        };
        status = attn__walk(&aw.walker);
        if (status == ATTN_OK && arith->failed)
            status = attn__check_fail(check, ATTN_ERR_NOMEM,
                                      "check: out of memory");
    }
    attn__check_free(check, kids);
    attn__check_free(check, nodes);
    return status;
}

double attn__arith_value(const attn__arith *arith, const attn__printed *table,
                         size_t cell, int *step)
{
    attn__ref ref = attn__cell_ref(table, cell);
    const int s = find(arith, &ref);
    *step = s >= 0 ? arith->slots[s].step : INT_MAX;
    if (s < 0 || !arith->slots[s].settled) return NAN;
    switch (table->transform) {
    case ATTN__PERCENT: return 100.0 * world(arith, s);
    case ATTN__EXP: return exp(world(arith, s));
    case ATTN__SUM: {
        double sum = 0.0;
        const int n = table->base_dims[table->base_rank - 1];
        for (int j = 0; j < n; j++) {
            ref.index[ref.rank - 1] = j;
            const int entry = find(arith, &ref);
            if (entry < 0 || !arith->slots[entry].settled) return NAN;
            sum += exp(world(arith, entry));
        }
        return sum;
    }
    default: return arith->slots[s].recomputed;
    }
}
