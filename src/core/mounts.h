/* SPDX-License-Identifier: Apache-2.0 */
/* The container's filesystem view. Runs inside the container's new mount
 * namespace, in the container init, before and after pivot_root. */
#ifndef AR_CORE_MOUNTS_H
#define AR_CORE_MOUNTS_H

#include "../../oci/spec.h"
#include "../util/error.h"
#include <stdbool.h>

/* Before pivot_root, with `rootfs` the absolute host path of the root
 * (`bind_source_fds`: NULL, or ar_mounts_open_bind_sources's):
 * - make "/" rslave (or rootfsPropagation) so nothing leaks to the host;
 *   without a mount namespace (ar_ns_host_mounts) no host mount is
 *   touched: the binds below are made slaves instead;
 * - bind-mount rootfs onto itself (pivot_root needs a mount point);
 * - perform spec->mounts in order (bind/rbind with propagation and flags,
 *   tmpfs, proc, sysfs, devpts, mqueue, cgroup, ...), each destination
 *   resolved inside the rootfs, read-only remounts where asked;
 * - refuse a rootfs whose /proc or /sys is not a real directory;
 * - create the default devices and linux.devices (mknod, or bind from the
 *   host when mknod is not permitted, as in a user namespace), the /dev
 *   symlinks (fd, stdin, stdout, stderr, core), /dev/ptmx -> pts/ptmx,
 *   /dev/shm when missing. */
/* `real` is the rootfs's resolved path; `dir_fd` (or -1) the rootfs
 * opened before the init's ids became a user namespace's, which may not
 * walk to it (a state root below a 0700 directory): then the rootfs is
 * reached by that fd alone. *root_fd: the container's root mount, for
 * what comes before pivot_root to reach it by (/proc/self/fd/N). */
int ar_mounts_setup_rootfs (const oci_spec *spec, const char *real, int dir_fd,
                            const int *bind_source_fds, int *root_fd,
                            ar_error_t **err);

/* A spec mount that binds a path (type "bind", or a bind/rbind option);
 * false too for options that do not parse. */
bool ar_mounts_is_bind (const oci_mount *m);

/* In the init, before it unshares its cgroup namespace: keep where its
 * cgroups are, for a cgroup mount that has to bind them from the host's
 * hierarchy. */
void ar_mounts_note_own_cgroups (void);

/* A container with a user namespace may not reach a bind source that the
 * host's root can (a directory of mode 0700 on the way, owned by an
 * unmapped uid): the runtime makes a detached copy of every bind source
 * (open_tree, relative ones from `bundle_fd`) before the clone, and the
 * init attaches the inherited copies, so they mount as under runc. An
 * idmapped bind (mounts[].uidMappings and gidMappings, or the options
 * "idmap"/"ridmap" with the container's own maps) is idmapped here, where
 * the host's root can: a failure there is the error. *fds gets one fd per
 * spec->mounts entry, -1 where that is not a bind or a plain copy failed
 * (the init then tries itself and reports the error). */
int ar_mounts_open_bind_sources (const oci_spec *spec, int bundle_fd, int **fds,
                                 ar_error_t **err);
void ar_mounts_close_bind_sources (int *fds, size_t n);

/* Does any mount of the spec ask to be idmapped? */
bool ar_mounts_any_idmapped (const oci_spec *spec);

/* Bind the pty slave `slave_path` (a path valid before pivot_root, e.g.
 * "<rootfs>/dev/pts/0") onto <rootfs>/dev/console. */
int ar_mounts_setup_console (const char *rootfs, const char *slave_path,
                             ar_error_t **err);

/* pivot_root into rootfs (MS_MOVE and chroot when no_pivot; only chroot
 * when `host_mounts`: no mount namespace) and chdir("/"). */
int ar_mounts_enter_rootfs (const char *rootfs, bool no_pivot, bool host_mounts,
                            ar_error_t **err);

/* After pivot_root: maskedPaths, readonlyPaths, read-only "/" when
 * root.readonly, and the final rootfsPropagation. */
int ar_mounts_finalize (const oci_spec *spec, ar_error_t **err);

#endif
