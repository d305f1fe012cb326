/* SPDX-License-Identifier: Apache-2.0 */
/* Defence against a container reaching the runtime's binary through
 * /proc/<pid>/exe (CVE-2019-5736): commands that put a process of ours
 * inside a container first re-exec from a sealed memfd copy of the binary,
 * so that link leads to an unwritable in-memory file, not the host file. */
#ifndef AR_UTIL_SEALED_EXE_H
#define AR_UTIL_SEALED_EXE_H

#include "error.h"

/* Returns 0 when already running from a sealed copy, or when no container
 * of this caller could write the binary anyway (without root, a binary of
 * real root's that only its owner may write); otherwise execs a sealed
 * copy with the same argv and environment and only returns on failure. */
int ar_ensure_sealed_exe (char **argv, char **envp, ar_error_t **err);

/* What every command that builds or enters a container does first:
 * ar_ensure_sealed_exe, then, in the process that goes on,
 * ar_prefault_heap_and_stack (util/prefault.h) before its forks. */
int ar_prepare_container_command (char **argv, char **envp, ar_error_t **err);

#endif
