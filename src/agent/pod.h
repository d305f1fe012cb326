/* SPDX-License-Identifier: Apache-2.0 */
/* What containerd's and CRI-O's CRI plugins write into a container's
 * annotations about the pod it belongs to. Pure. */
#ifndef AR_AGENT_POD_H
#define AR_AGENT_POD_H

#include "agent.h"

#include <stdbool.h>

/* "sandbox" (the pause process that holds the pod's namespaces) or
 * "container"; NULL for a container of no pod. */
const char *ar_pod_container_type (const oci_spec *spec);

bool ar_pod_is_sandbox (const oci_spec *spec);

/* A pod's container (not its sandbox): the id of its pod's sandbox
 * container; NULL otherwise. */
const char *ar_pod_sandbox_id (const oci_spec *spec);

/* A pod's containers join its network namespace, where its sandbox
 * container's egress hook set up one filter and one resolver for them
 * all: a container's egress (mode, allow entries, inbound ports) must be
 * the pod's, since nothing in that namespace could hold it to another.
 * The error names the annotation that differs and both values. */
int ar_pod_check_egress (const ar_agent_plan *container,
                         const ar_agent_plan *pod, ar_error_t **err);

#endif
