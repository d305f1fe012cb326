/* SPDX-License-Identifier: Apache-2.0 */
/* Where the machine is a virtual machine that traps page faults (the
 * development host: 15-30 us a fault, against under 1 us a page when the
 * kernel does the same work in one call), the faults of a container's
 * start are a good part of its time: each fresh page of heap and stack,
 * and after a fork, on both sides, the first write to every page they
 * still share. */
#ifndef AR_UTIL_PREFAULT_H
#define AR_UTIL_PREFAULT_H

/* Makes the top of the heap and the stack around where it runs this
 * process's own, written pages, in one madvise(MADV_POPULATE_WRITE) each
 * (Linux 5.14; a no-op before): at the start of a command that builds or
 * enters a container, and after a fork on the side that goes on running
 * our code (the parent, a container's init), not on one about to exec. */
void ar_prefault_heap_and_stack (void);

#endif
