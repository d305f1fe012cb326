/* SPDX-License-Identifier: Apache-2.0 */
/* Who the runtime is running as: the facts rootless mode is decided from. */
#ifndef AR_UTIL_USERNS_H
#define AR_UTIL_USERNS_H

#include <stdbool.h>
#include <sys/types.h>

/* Whether this process is in the host's own (initial) user namespace;
 * any other is one someone made (rootless Podman runs its runtime as uid
 * 0 in one), even one that maps all 2^32 ids onto themselves. */
bool ar_userns_is_initial (void);

/* Not real root: an unprivileged uid, or uid 0 of a user namespace that is
 * not the initial one. Such a caller owns no host-wide cgroups, talks to
 * the systemd user instance rather than the system one, and maps no ids
 * it was not given. */
bool ar_userns_unprivileged (void);

/* Whether uid (as this namespace sees it) is inside a range of
 * /proc/self/uid_map: an unmapped owner shows as the overflow uid, which
 * no range holds unless the map covers it too. */
bool ar_userns_uid_mapped (uid_t uid);

#endif
