/* SPDX-License-Identifier: Apache-2.0 */
/* Small file helpers used across modules. */
#ifndef AR_UTIL_FS_H
#define AR_UTIL_FS_H

#include "error.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Read a whole file (at most `max` bytes, else an error naming the file).
 * *out is NUL-terminated; *len excludes the NUL. dirfd may be AT_FDCWD. */
int ar_read_file_at (int dirfd, const char *path, size_t max, char **out,
                     size_t *len, ar_error_t **err);

/* Create or replace a file atomically (write a temporary, fsync-free
 * rename) with the given mode. */
int ar_write_file_atomic_at (int dirfd, const char *path, const char *data,
                             size_t len, mode_t mode, ar_error_t **err);

/* Write "<pid>" to `path` (atomically); a NULL path is a no-op. */
int ar_write_pid_file (const char *path, pid_t pid, ar_error_t **err);

/* Unlink every entry of `dirfd` that is not a directory (best effort:
 * what cannot go stays). */
void ar_unlink_files_at (int dirfd);

/* mkdir -p; existing directories are fine. */
int ar_mkdir_p (const char *path, mode_t mode, ar_error_t **err);

/* Write all of buf to fd, retrying on EINTR and short writes. */
int ar_write_all (int fd, const void *buf, size_t len);

/* Read until EOF or `max` bytes; returns bytes read or -1. */
ssize_t ar_read_all (int fd, void *buf, size_t max);
/* Start time of a live pid (field 22 of /proc/<pid>/stat), 0 when it is
 * gone or a zombie: with the pid, it names a process across pid reuse. */
unsigned long long ar_pid_start_time (pid_t pid);

/* The parent of a live process, 0 when it cannot be told. */
pid_t ar_pid_parent (pid_t pid);

/* A process named across pid reuse, in file `name` of `dirfd`: "PID
 * START_TIME". Write one for `pid`; read one back as the pid while that
 * process lives, 0 once it is gone, -1 when there is no such record. */
int
ar_pid_record_write (int dirfd, const char *name, pid_t pid, ar_error_t **err);
/* The same, for a pid whose start time the caller has read already. */
int ar_pid_record_write_as (int dirfd, const char *name, pid_t pid,
                            unsigned long long start_time, ar_error_t **err);
pid_t ar_pid_record_read (int dirfd, const char *name);
/* A record of this process whose exclusive flock the fd put in *held
 * (close-on-exec) keeps while it is open; the record never appears
 * without it. */
int ar_pid_record_write_held (int dirfd, const char *name, int *held,
                              ar_error_t **err);
/* The record names a process that is gone. One open: a record whose lock
 * is held is of a live process, and is not read (nor /proc); one nobody
 * locks (its process ended, or wrote it without one) is read. false with
 * no record. */
bool ar_pid_record_gone (int dirfd, const char *name);

#endif
