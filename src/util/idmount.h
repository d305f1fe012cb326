/* SPDX-License-Identifier: Apache-2.0 */
/* Idmapped mounts (Linux 5.12): a copy of a mount through which files
 * owned by one range of ids appear owned by another, the disk untouched. */
#ifndef AR_UTIL_IDMOUNT_H
#define AR_UTIL_IDMOUNT_H

#include "error.h"
#include "idshift.h"

/* On-disk ids map->*_from.. appear as host ids map->*_to..; every other
 * id appears as the overflow id. */
typedef ar_id_shift ar_idmount_map;

/* A detached, idmapped copy of the mount at `path` (not its submounts),
 * as an fd for move_mount or an overlay layer. The error names the path
 * and, when the kernel or the filesystem cannot idmap, says so. */
int ar_idmount_clone (const char *path, const ar_idmount_map *map,
                      ar_error_t **err);

/* Attach a detached mount `mount_fd` on the directory `target`. */
int ar_idmount_attach (int mount_fd, const char *target, ar_error_t **err);

#endif
