/* SPDX-License-Identifier: Apache-2.0 */
/* Every write the runtime makes into /proc goes through here. A file under
 * /proc can be covered by a bind mount (one from config.json, or one raced
 * in by the container), and a write meant for the kernel then lands in
 * whatever file was mounted there: the target is checked to be procfs
 * (fstatfs, PROC_SUPER_MAGIC) on the opened fd, after the open, before a
 * byte is written. */
#ifndef AR_UTIL_PROC_H
#define AR_UTIL_PROC_H

#include "error.h"
#include <stddef.h>

/* Open `path` (a directory under /proc, e.g. "/proc/sys") as an O_PATH
 * directory fd, refused when it is not on procfs. */
int ar_proc_open_dir (const char *path, ar_error_t **err);

/* Write `len` bytes of `data` to the existing procfs file `path`.
 * With dirfd AT_FDCWD, `path` is absolute ("/proc/self/attr/exec"); only
 * its last component must not be a symlink. With a dirfd from
 * ar_proc_open_dir, `path` is relative and resolved beneath it with no
 * symlink, ".." escape or mount crossing at all (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV). A target that is not procfs is
 * refused: "`PATH`: not on procfs". */
int ar_proc_write (int dirfd, const char *path, const char *data, size_t len,
                   ar_error_t **err);

#endif
