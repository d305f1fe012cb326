/* SPDX-License-Identifier: Apache-2.0 */
/* Paths from a container are hostile: resolve them inside the rootfs only. */
#ifndef AR_UTIL_PATH_H
#define AR_UTIL_PATH_H

#include "error.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* openat2(2) with O_CLOEXEC added, retried on EAGAIN and EINTR; `resolve`
 * is RESOLVE_* flags. Returns the fd, or -1 with errno set. */
int ar_openat2 (int dirfd, const char *path, int flags, uint64_t resolve);

/* Open `path` (absolute or relative, as the container sees it) beneath the
 * directory `root_fd`, with symlinks and ".." resolved as if root_fd were
 * "/" (openat2 RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS). `flags` are open
 * flags (O_PATH, O_DIRECTORY, ...). Returns the fd or -1 with *err set. */
int ar_path_open_in_root (int root_fd, const char *path, int flags,
                          ar_error_t **err);

/* Like ar_path_open_in_root, but first creates missing components: the
 * parents as directories (mode 0755), the last one as a directory when
 * `is_dir` is true and as an empty regular file otherwise (a bind mount
 * target for a file source). Returns an O_PATH fd of the final component. */
int ar_path_create_in_root (int root_fd, const char *path, bool is_dir,
                            ar_error_t **err);

/* The entry at `path` below `dir_fd` itself (O_PATH; a symlink there is
 * not followed), reached through no symlink: the path as git means it
 * in a work tree ("d/x" with d a symlink is no such path). -1 with errno
 * when there is none. */
int ar_path_open_entry (int dir_fd, const char *path);

/* A name agentrun files something under (a pool, a snapshot): 1 to 64
 * letters, digits, '_', '.' and '-', not first '.' or '-'. The error
 * reads "WHAT: name `NAME`: expected ...". */
int ar_check_plain_name (const char *what, const char *name, ar_error_t **err);

/* "/proc/self/fd/N", for mount(2) and friends that need a path. */
#define AR_FD_PATH_MAX 32
void ar_fd_path (int fd, char buf[AR_FD_PATH_MAX]);

/* The target of the symlink `link` (e.g. /proc/PID/cwd); NULL with errno
 * when it cannot be read. Caller frees. */
char *ar_readlink (const char *link);

/* Where `fd` is, as the kernel names it (its /proc/self/fd link); NULL
 * with errno when that cannot be read. Caller frees. */
char *ar_fd_real_path (int fd);

/* Join and normalise without touching the filesystem ("a/./b/../c" ->
 * "a/c"); leading ".." components are dropped at the root. Caller frees. */
char *ar_path_clean (const char *path);

/* `path` is `dir` or below it, by its components ("/a/bc" is not under
 * "/a/b"). Both absolute and clean. */
bool ar_path_at_or_under (const char *path, const char *dir);

#endif
