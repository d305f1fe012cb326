/* SPDX-License-Identifier: Apache-2.0 */
/* An unprivileged `agentrun sandbox`: the runtime itself moves into a user
 * namespace of its own before it makes anything. */
#ifndef AR_CORE_ROOTLESS_H
#define AR_CORE_ROOTLESS_H

#include "../util/error.h"
#include <stdbool.h>

/* Unshare a user and a mount namespace, mapping the caller's uid and gid
 * (only) to root there, as bubblewrap does. The runtime is then root over
 * its own mount namespace: the overlay, tmpfs and bind mounts a sandbox
 * makes live there and die with it, so nothing is left on the host however
 * the sandbox ends, and the container's namespaces belong to this user
 * namespace. Linux 5.11 or later mounts overlayfs in it. */
int ar_rootless_unshare_self (ar_error_t **err);

/* A sandbox made ahead without root (agentrun pool) outlives the runtime
 * that made it, and so would its overlay, whose mounts are in that
 * runtime's mount namespace: a holder process keeps the two namespaces
 * until a taker has joined them, or the init (`init_pidfd`) is gone. It
 * is recorded in the state dir (AR_NS_HOLDER_FILE). */
int
ar_rootless_hold_namespaces (int state_fd, int init_pidfd, ar_error_t **err);

/* Whether the container of `state_fd` has its namespaces held. */
bool ar_rootless_held (int state_fd);

/* Join the held user and mount namespaces (this process must have one
 * thread), then end the holder: this process keeps them now. An error
 * when the holder is gone; with it went the mounts, and the container is
 * deleted from outside (its state dir, its init by pid). */
int ar_rootless_join_held (int state_fd, ar_error_t **err);

#endif
