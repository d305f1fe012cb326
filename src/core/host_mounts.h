/* SPDX-License-Identifier: Apache-2.0 */
/* The mounts of a container that has no mount namespace of its own: they
 * are made in the runtime's (the host's) namespace under the rootfs, and
 * nothing else would ever remove them. create notes which mounts were
 * under the rootfs before the init ran; delete, and a failed create,
 * unmount everything under it that was not. */
#ifndef AR_CORE_HOST_MOUNTS_H
#define AR_CORE_HOST_MOUNTS_H

#include "../util/error.h"

/* In the state dir: the rootfs path and the ids of its earlier mounts. */
#define AR_HOST_MOUNTS_FILE "host-mounts"

/* Before the init starts: note the mounts at or under `rootfs` (an
 * absolute path without symlinks) in <state_fd>/host-mounts. */
int ar_host_mounts_record (int state_fd, const char *rootfs, ar_error_t **err);

/* Unmount (MNT_DETACH, deepest first) every mount at or under the noted
 * rootfs that was not noted. No host-mounts file: nothing to do. */
int ar_host_mounts_undo (int state_fd, ar_error_t **err);

#endif
