/* SPDX-License-Identifier: Apache-2.0 */
/* Idmapped mounts (Linux 5.12): a copy of a mount through which files
 * owned by one range of ids appear owned by another, the disk untouched. */
#ifndef AR_UTIL_IDMOUNT_H
#define AR_UTIL_IDMOUNT_H

#include "error.h"
#include "idshift.h"
#include <stdbool.h>

/* On-disk ids map->*_from.. appear as host ids map->*_to..; every other
 * id appears as the overflow id. */
typedef ar_id_shift ar_idmount_map;

/* A user namespace whose maps are `uid_map` and `gid_map` (the text of
 * the proc files: "INSIDE OUTSIDE COUNT" lines), for MOUNT_ATTR_IDMAP:
 * on-disk ids INSIDE.. appear as host ids OUTSIDE.. through a mount
 * idmapped with it. Its fd, or -1 with *err. */
int
ar_idmount_userns (const char *uid_map, const char *gid_map, ar_error_t **err);

/* Idmap the detached mount `tree_fd` (and below it, when `recursive`)
 * with the user namespace `userns_fd`; the error names `path`. */
int ar_idmount_set (int tree_fd, int userns_fd, bool recursive,
                    const char *path, ar_error_t **err);

/* A detached, idmapped copy of the mount at `path` (not its submounts),
 * as an fd for move_mount or an overlay layer (/proc/self/fd/N). The error names the path
 * and, when the kernel or the filesystem cannot idmap, says so. */
int ar_idmount_clone (const char *path, const ar_idmount_map *map,
                      ar_error_t **err);

/* Attach the detached mount `mount_fd` on the directory `target`. */
int ar_idmount_attach (int mount_fd, const char *target, ar_error_t **err);

#endif
