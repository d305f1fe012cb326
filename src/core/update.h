/* SPDX-License-Identifier: Apache-2.0 */
/* `agentrun update`: new resource limits for a live container. */
#ifndef AR_CORE_UPDATE_H
#define AR_CORE_UPDATE_H

#include "../../oci/spec.h"
#include "../util/error.h"

/* Apply `r` to the cgroup of a created, running or paused container. */
int ar_container_update (const char *root, const char *id,
                         const oci_resources *r, ar_error_t **err);

#endif
