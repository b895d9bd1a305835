/* walkthrough.c: the walkthrough's entry points, above the generic
 * emitter (walker.c) and what uses it: which steps a problem's kind has
 * (attn__walk, also walked by the check layer's arithmetic) and which
 * renderer a format writes through (attn__format_walkthrough, for
 * attn_problem_format), with the equation pool it allocates for the walk
 * through the problem's allocator. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <string.h>

/* The kind's steps, then the sink's end: the one place that knows every
 * kind's walkthrough. */
int attn__walk(attn__walker *walker)
{
    switch (walker->problem->kind->id) {
    case ATTN__KIND_SDPA: attn__steps_sdpa(walker); break;
    case ATTN__KIND_WEIGHTED_SUM: attn__steps_weighted_sum(walker); break;
    case ATTN__KIND_MULTIHEAD: attn__steps_multihead(walker); break;
    case ATTN__KIND_ADDITIVE: attn__steps_additive(walker); break;
    case ATTN__KIND_LUONG: attn__steps_luong(walker); break;
    case ATTN__KIND_LINEAR: attn__steps_linear(walker); break;
    case ATTN__KIND_SOFTMAX: attn__steps_softmax(walker); break;
    case ATTN__KIND_TRANSFORMER_BLOCK: attn__steps_block(walker); break;
    case ATTN__KIND_ONLINE_SOFTMAX: attn__steps_online(walker); break;
    }
    walker->sink->end(walker);
    return ATTN_OK;
}

static const attn__sink *sink_of(int format, const attn__walk_style **style)
{
    switch (format) {
    case ATTN_FORMAT_STEPS: return &attn__json_sink;
    case ATTN_FORMAT_STEP_OUTLINE: return &attn__json_outline_sink;
    case ATTN__FORMAT_EQUATIONS: return &attn__json_equations_sink;
    default: return attn__doc_sink(format, style);
    }
}

/* The equation pool and the number cache live for one walk. */
int attn__format_walkthrough(const attn_problem *problem, int format, int step,
                             attn__text *text)
{
    const attn_allocator *allocator = &problem->allocator;
    attn__node *nodes = allocator->allocate(allocator->context,
                                            ATTN__NODE_CAP * sizeof *nodes);
    int *kids = allocator->allocate(allocator->context,
                                    ATTN__NODE_CAP * sizeof *kids);
    attn__number_cache *numbers = allocator->allocate(allocator->context,
                                                      sizeof *numbers);
    int status = ATTN_OK;
    if (nodes == NULL || kids == NULL || numbers == NULL) {
        status = attn__fail_nomem(problem);
    } else {
        memset(numbers, 0, sizeof *numbers);
        attn__walker walker = {
            .out = text,
            .problem = problem,
            .info = &problem->info,
            .nodes = nodes,
            .kids = kids,
            .numbers = numbers,
            .only_step = step,
        };
        walker.sink = sink_of(format, &walker.style);
        status = attn__walk(&walker);
        if (status == ATTN_OK && format == ATTN__FORMAT_EQUATIONS &&
            (step < 1 || step > walker.step))
            status = attn__fail(problem, ATTN_ERR_RANGE,
                                "step: expected a step from 1 to %d, got %d",
                                walker.step, step);
    }
    if (numbers != NULL) allocator->release(allocator->context, numbers);
    if (kids != NULL) allocator->release(allocator->context, kids);
    if (nodes != NULL) allocator->release(allocator->context, nodes);
    return status;
}
