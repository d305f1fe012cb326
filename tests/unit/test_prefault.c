/* SPDX-License-Identifier: Apache-2.0 */
/* ar_prefault_heap_and_stack: after a fork, the child writes its heap
 * and its stack without a page fault per page (counted by getrusage). */
#include "config.h"
#include "unit.h"
#include "../../src/util/prefault.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define HEAP_PAGES 24
#define STACK_BYTES (16 * 1024)

static long
minor_faults (void)
{
  struct rusage u;
  getrusage (RUSAGE_SELF, &u);
  return u.ru_minflt;
}

static long
write_pages (volatile char *p, size_t pages)
{
  long before = minor_faults ();
  for (size_t i = 0; i < pages; i++)
    p[i * (size_t) getpagesize ()]++;
  return minor_faults () - before;
}

static long __attribute__ ((noinline)) write_deeper_stack (void)
{
  volatile char frame[STACK_BYTES];
  return write_pages (frame, STACK_BYTES / (size_t) getpagesize ());
}

/* The faults a forked child takes writing the heap buffer and a fresh
 * stack frame, with or without the prefault first. */
static void
faults_in_child (char *heap, bool prefault, long *heap_faults,
                 long *stack_faults)
{
  int pipe_fds[2];
  CHECK (pipe (pipe_fds) == 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      if (prefault)
        ar_prefault_heap_and_stack ();
      long counts[2]
          = { write_pages (heap, HEAP_PAGES), write_deeper_stack () };
      _exit (write (pipe_fds[1], counts, sizeof counts) == sizeof counts ? 0
                                                                         : 1);
    }
  close (pipe_fds[1]);
  long counts[2] = { -1, -1 };
  CHECK (read (pipe_fds[0], counts, sizeof counts) == sizeof counts);
  close (pipe_fds[0]);
  int status;
  CHECK (waitpid (pid, &status, 0) == pid && status == 0);
  *heap_faults = counts[0];
  *stack_faults = counts[1];
}

static void
test_child_writes_heap_and_stack_without_faults (void)
{
  /* From the program break itself: a sanitizer's allocator has its own
   * mappings. */
  char *heap = sbrk (HEAP_PAGES * getpagesize ());
  CHECK (heap != (void *) -1);
  memset (heap, 1, (size_t) HEAP_PAGES * (size_t) getpagesize ());
  long heap_faults, stack_faults;
  /* Without it, each page is a fault: the count means what it says. */
  faults_in_child (heap, false, &heap_faults, &stack_faults);
  CHECK (heap_faults >= HEAP_PAGES);
  CHECK (stack_faults >= 1);
  faults_in_child (heap, true, &heap_faults, &stack_faults);
  CHECK (heap_faults <= 1);
  CHECK (stack_faults <= 1);
  sbrk (-HEAP_PAGES * getpagesize ());
}

int
main (void)
{
  char probe[1];
  if (madvise ((void *) ((uintptr_t) probe & ~(uintptr_t) (getpagesize () - 1)),
               1, MADV_POPULATE_WRITE)
          < 0
      && errno == EINVAL)
    {
      printf ("skip: no MADV_POPULATE_WRITE (Linux 5.14) here\n");
      return unit_finish ();
    }
  RUN (test_child_writes_heap_and_stack_without_faults);
  return unit_finish ();
}
