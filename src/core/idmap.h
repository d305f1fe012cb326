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

#endif
