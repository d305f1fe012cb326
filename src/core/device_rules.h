/* SPDX-License-Identifier: Apache-2.0 */
/* The device cgroup rules every container gets on top of its own. */
#ifndef AR_CORE_DEVICE_RULES_H
#define AR_CORE_DEVICE_RULES_H

#include "../../oci/spec.h"

/* When the spec restricts devices, append allow rules for the devices the
 * runtime itself creates (null, zero, full, random, urandom, tty, the pty
 * master and slaves, mknod of any kind), as runc does: a "deny all"
 * profile must not break /dev/null or a tty. A linux.devices entry gets
 * no rule of its own (runc's neither): the node exists, and
 * linux.resources.devices alone says whether it may be used. */
void ar_device_rules_add_defaults (oci_spec *spec);

#endif
