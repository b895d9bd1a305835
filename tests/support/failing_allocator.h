/* An allocator for out-of-memory tests: malloc and free, except that one
 * chosen allocation fails, with counts of calls and of live blocks so a test
 * can check that every block was returned. */
#ifndef FAILING_ALLOCATOR_H
#define FAILING_ALLOCATOR_H

#include "attention.h"

typedef struct failing_allocator {
    long fail_at; /* index of the allocation that fails; -1 = none */
    long calls;
    long live; /* blocks allocated and not yet released */
} failing_allocator;

/* The attn_allocator that fails and counts through *counts. */
attn_allocator failing_allocator_use(failing_allocator *counts);

#endif
