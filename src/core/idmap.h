/* SPDX-License-Identifier: Apache-2.0 */
/* Writing a new user namespace's uid_map and gid_map, as root or not. */
#ifndef AR_CORE_IDMAP_H
#define AR_CORE_IDMAP_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <sys/types.h>

/* Map `pid`'s user namespace from linux.uidMappings/gidMappings.
 * Root writes the maps itself. Without root the kernel lets a process map
 * only its own uid and gid (and its gid only once "deny" is in setgroups):
 * that map is written directly, anything wider goes through the setuid
 * helpers newuidmap/newgidmap, which check it against /etc/subuid and
 * /etc/subgid, as crun and runc do. */
int ar_idmap_write (pid_t pid, const oci_linux *lnx, ar_error_t **err);

/* Mappings as the text of a uid_map or gid_map file (malloc'd). */
char *ar_idmap_text (const oci_id_mapping *m, size_t n);

/* The kernel charges a user namespace's per-user counts (inotify
 * instances, user and mount namespaces, ...) to its owner in the parent
 * namespace too, and the owner is whoever created it. Root making a
 * container's namespace would spend its own counts; the namespace is
 * instead owned by the host uid that container root maps to.
 *
 * While an owner is set, this thread runs with that effective uid and
 * gid (its real, saved and filesystem ids stay 0, so root comes back):
 * only clone belongs in between. Nothing is switched without root, or when
 * container root is unmapped or maps to host root. */
typedef struct
{
  bool active;
} ar_idmap_owner;

void ar_idmap_owner_set (const oci_linux *lnx, ar_idmap_owner *owner);
void ar_idmap_owner_reset (ar_idmap_owner *owner);

#endif
