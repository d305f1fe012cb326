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

/* In the init, after pivot_root: write them through /proc/sys. */
int ar_sysctl_apply (const oci_linux *lnx, ar_error_t **err);

#endif
