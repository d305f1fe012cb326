/* SPDX-License-Identifier: Apache-2.0 */
/* What a process that is stopped inside execve(2) or execveat(2) asked to
 * run: the call's arguments from /proc/PID/syscall (valid only while the
 * task is blocked in the kernel, e.g. held by a fanotify permission event),
 * the strings from /proc/PID/mem. This is the caller's memory at the time
 * of the read: a task that shares that memory can still change it before
 * the kernel copies it (see ar_proc_memory_shared). */
#ifndef AR_UTIL_PROC_EXECVE_H
#define AR_UTIL_PROC_EXECVE_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct
{
  int dirfd;      /* execveat's (in the caller), else AT_FDCWD */
  char *filename; /* as passed; NULL when too long */
  int flags;      /* execveat's (AT_EMPTY_PATH, ...), else 0 */
  char **argv;    /* NULL-terminated; at most max_args words */
  size_t argc;
  bool truncated; /* more words or bytes than asked for */
} ar_execve_args;

/* PID's pending execve/execveat: its file name and argv, at most `max_args` words and
 * `max_bytes` bytes in all. An error when PID is not blocked in one of
 * them (e.g. a 32-bit caller, whose call numbers differ). */
int ar_proc_execve_args (pid_t pid, size_t max_args, size_t max_bytes,
                         ar_execve_args *out, ar_error_t **err);
void ar_execve_args_clear (ar_execve_args *a);

/* Could another task write PID's memory while PID is held: a thread of
 * its own, or a process of `peers` (e.g. the rest of its container) that
 * shares it (CLONE_VM), unless that one is a single-threaded vfork parent
 * blocked until PID's exec? Errors count as shared; *why (malloc'd) says
 * which task, or why. */
bool ar_proc_memory_shared (pid_t pid, const pid_t *peers, size_t n_peers,
                            char **why);

#endif
