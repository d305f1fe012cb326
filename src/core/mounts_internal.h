/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between mounts.c and devices.c only; nothing outside src/core
 * should need these. */
#ifndef AR_CORE_MOUNTS_INTERNAL_H
#define AR_CORE_MOUNTS_INTERNAL_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>

/* True when spec->mounts puts a bind mount (of the host's /dev, usually)
 * on /dev: then the devices, /dev symlinks and ptmx are left alone. */
bool ar_mounts_dev_is_bind (const oci_spec *spec);

/* Bind-mount the device node `source` (a path valid now) onto the O_PATH
 * fd `target_fd`, nosuid and noexec like the rest of /dev. */
int
ar_mounts_bind_device_fd (const char *source, int target_fd, ar_error_t **err);

/* `dest` inside the rootfs is a real directory or missing, never a
 * symlink or another kind of file: "rootfs/dev: not a directory (symlink)". */
int ar_mounts_check_real_directory (int rootfs_fd, const char *dest,
                                    ar_error_t **err);

/* In <rootfs>/dev (rootfs_fd an O_PATH fd of the root): the default devices
 * plus linux.devices, the standard symlinks, ptmx and shm. */
int ar_devices_setup (const oci_spec *spec, int rootfs_fd, ar_error_t **err);

#endif
