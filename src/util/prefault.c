/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "prefault.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The heap's share is capped: a large heap's old pages are rarely written
 * again, and copying them would cost more than the faults it saves. The
 * stack's, from a little below where it runs (the kernel maps 128 KB below
 * the initial stack at exec) to its base. */
#define HEAP_BYTES (1024 * 1024)
#define STACK_BELOW (32 * 1024)
#define STACK_MAX (8 * 1024 * 1024)

extern void *__libc_stack_end; /* glibc: the main thread's stack base */

static uintptr_t heap_start;

/* Before main: before all but the C library's own allocations. */
__attribute__ ((constructor)) static void
note_heap_start (void)
{
  heap_start = (uintptr_t) sbrk (0);
}

static uintptr_t
page_down (uintptr_t a)
{
  return a & ~((uintptr_t) getpagesize () - 1);
}

static void
populate (uintptr_t from, uintptr_t to)
{
  if (to > from)
    (void) madvise ((void *) from, to - from, MADV_POPULATE_WRITE);
}

void
ar_prefault_heap_and_stack (void)
{
  uintptr_t heap_end = (uintptr_t) sbrk (0);
  if (heap_start != 0 && heap_end > heap_start)
    populate (heap_end - heap_start > HEAP_BYTES
                  ? page_down (heap_end - HEAP_BYTES)
                  : heap_start,
              heap_end);
  /* Only on the main thread's stack: from another thread's, the range to
   * the main stack's base would cross other mappings. */
  uintptr_t here = (uintptr_t) __builtin_frame_address (0);
  uintptr_t base = (uintptr_t) __libc_stack_end;
  if (here < base && base - here < STACK_MAX)
    populate (page_down (here - STACK_BELOW),
              page_down (base + getpagesize () - 1));
}
