/* SPDX-License-Identifier: Apache-2.0 */
/* linux.sysctl: only keys of a namespace the container has of its own. */
#ifndef AR_CORE_SYSCTL_H
#define AR_CORE_SYSCTL_H

#include "../../oci/spec.h"
#include "../util/error.h"

/* At create, before anything exists: every key must belong to a namespace
 * the container does not share with the runtime (ipc for kernel.msg*,
 * kernel.sem, kernel.shm* and fs.mqueue.*; net for net.*; uts for
 * kernel.hostname and kernel.domainname). A namespace joined by path
 * counts only when it is not the runtime's own. */
int ar_sysctl_validate (const oci_spec *spec, ar_error_t **err);

/* In the init, in the container's namespaces and before its mounts: an
 * O_PATH fd of the runtime's own /proc/sys, checked to be procfs (-1 when
 * there are no sysctls). */
int
ar_sysctl_open_proc (const oci_linux *lnx, int *proc_sys_fd, ar_error_t **err);

/* In the init, after pivot_root: write them beneath that fd (see
 * sysctl.c for why this sets the container's sysctls). */
int ar_sysctl_apply (int proc_sys_fd, const oci_linux *lnx, ar_error_t **err);

#endif
