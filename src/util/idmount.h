/* SPDX-License-Identifier: Apache-2.0 */
/* Idmapped mounts (Linux 5.12): a copy of a mount through which files
 * owned by one range of ids appear owned by another, the disk untouched. */
#ifndef AR_UTIL_IDMOUNT_H
#define AR_UTIL_IDMOUNT_H

#include "error.h"
#include "idshift.h"
#include <stdbool.h>

#include <sys/types.h>

/* A user namespace that carries an idmapping, and the child that made it.
 * The child ends by itself once the namespace is open; it is reaped when
 * the namespace is let go, so its exit overlaps the mount calls between. */
typedef struct
{
  int fd;
  pid_t holder;
  char *holder_stack; /* the child's, shared memory: freed once reaped */
} ar_idmap_ns;

/* A user namespace whose maps are `uid_map` and `gid_map` (the text of
 * the proc files: "INSIDE OUTSIDE COUNT" lines), for MOUNT_ATTR_IDMAP:
 * on-disk ids INSIDE.. appear as host ids OUTSIDE.. through a mount
 * idmapped with it. 0, or -1 with *err (nothing left to release). */
int ar_idmount_userns (const char *uid_map, const char *gid_map,
                       ar_idmap_ns *ns, ar_error_t **err);

/* Close the namespace, reap its child. Safe on a zeroed or failed one. */
void ar_idmap_ns_release (ar_idmap_ns *ns);
#define cleanup_idmap_ns __attribute__ ((cleanup (ar_idmap_ns_release)))

/* Idmap the detached mount `tree_fd` (and below it, when `recursive`)
 * with the user namespace `userns_fd`; the error names `path`. */
int ar_idmount_set (int tree_fd, int userns_fd, bool recursive,
                    const char *path, ar_error_t **err);

/* An idmapped copy of the mount at `source` (not its submounts), in
 * which on-disk ids map->*_from.. appear as host ids map->*_to.. (any
 * other as the overflow id), attached on the directory `target`. The
 * error names the source and, when the kernel or the filesystem cannot
 * idmap, says so. */
int ar_idmount_attach_copy (const char *source, const ar_id_shift *map,
                            const char *target, ar_error_t **err);

#endif
