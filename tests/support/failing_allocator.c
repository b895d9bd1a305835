#include "failing_allocator.h"

#include <stdlib.h>

static void *failing_allocate(void *context, size_t bytes)
{
    failing_allocator *counts = context;
    if (counts->calls++ == counts->fail_at) return NULL;
    void *block = malloc(bytes);
    if (block != NULL) counts->live++;
    return block;
}

static void counting_release(void *context, void *block)
{
    failing_allocator *counts = context;
    counts->live--;
    free(block);
}

attn_allocator failing_allocator_use(failing_allocator *counts)
{
    const attn_allocator allocator = {failing_allocate, counting_release,
                                      counts};
    return allocator;
}
