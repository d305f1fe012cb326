/* SPDX-License-Identifier: Apache-2.0 */
/* Defence against a container reaching the runtime's binary through
 * /proc/<pid>/exe (CVE-2019-5736): commands that put a process of ours
 * inside a container first re-exec from a sealed memfd copy of the binary,
 * so that link leads to an unwritable in-memory file, not the host file. */
#ifndef AR_UTIL_SEALED_EXE_H
#define AR_UTIL_SEALED_EXE_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Host uids [first, first + count) that a container holds through a user
 * namespace of its own (the caller's terms: host ids for real root). */
typedef struct
{
  uint32_t first;
  uint32_t count;
} ar_held_uids;

/* Whether a container could write the binary this process runs from:
 * false when it runs from a sealed copy, or when the binary is out of the
 * container's reach. The container holds the `n` ranges of `held` through
 * a user namespace of its own, or with n == 0 the caller's own ids (a
 * binary of real root's that only its owner may write is out of reach of
 * a caller without root). */
bool ar_exe_reachable (const ar_held_uids *held, size_t n);

/* Returns 0 when the binary is out of reach of the container
 * (ar_exe_reachable); otherwise execs a sealed copy with the same argv and
 * environment and only returns on failure. */
int ar_ensure_sealed_exe (const ar_held_uids *held, size_t n, char **argv,
                          char **envp, ar_error_t **err);

/* What every command that builds or enters a container does first:
 * ar_ensure_sealed_exe for `held`/`n`, then, in the process that goes on,
 * ar_prefault_heap_and_stack (util/prefault.h) before its forks. */
int ar_prepare_container_command (const ar_held_uids *held, size_t n,
                                  char **argv, char **envp, ar_error_t **err);

#endif
