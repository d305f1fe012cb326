/* SPDX-License-Identifier: Apache-2.0 */
/* An unprivileged `agentrun sandbox`: the runtime itself moves into a user
 * namespace of its own before it makes anything. */
#ifndef AR_CORE_ROOTLESS_H
#define AR_CORE_ROOTLESS_H

#include "../util/error.h"

/* Unshare a user and a mount namespace, mapping the caller's uid and gid
 * (only) to root there, as bubblewrap does. The runtime is then root over
 * its own mount namespace: the overlay, tmpfs and bind mounts a sandbox
 * makes live there and die with it, so nothing is left on the host however
 * the sandbox ends, and the container's namespaces belong to this user
 * namespace. Linux 5.11 or later mounts overlayfs in it. */
int ar_rootless_unshare_self (ar_error_t **err);

#endif
